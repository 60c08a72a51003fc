"""The command line (statinterp.app.cli) on the shipped example data: formats, errors, --out."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from statinterp.app.cli import cli, main
from statinterp.corpus.dataset import LABEL_GAINS, load_corpus
from statinterp.evaluation.metrics import random_baseline_ndcg
from statinterp.evaluation.ranking import rank
from statinterp.rankers.grammar import build_method, list_methods
from statinterp.workflow import example_data_path, open_corpus, prepare_corpus
from tests.support.paths import REPO_ROOT

EXAMPLE = load_corpus(example_data_path()).term("vehicle")
SENTENCES = {s.id: s for s in EXAMPLE.sentences}
CORE = ["Random"] + [f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p", "-r")]


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def example_index():
    return prepare_corpus(open_corpus())["vehicle"]


# --------------------------------------------------------------------------------------------
# rank


@pytest.mark.slow
def test_rank_table(example_index):
    out = invoke("rank", "vehicle", "-q", "-m", "TF-ISF-p").stdout
    lines = out.splitlines()
    assert lines[0] == "TF-ISF-p ranking of 47 sentences for 'vehicle' (top 10)"
    numbered = [ln for ln in lines if ln[:4].strip().rstrip(".").isdigit() and ln[3:4] == "."]
    assert [int(ln[:3]) for ln in numbered] == list(range(1, 11))
    scores = [float(ln.split()[1]) for ln in numbered]
    assert scores == sorted(scores, reverse=True)
    best = rank(build_method("TF-ISF-p"), example_index).rows(1)[0]
    assert f"[{best.label}]" in numbered[0]
    assert best.text.split()[0] in lines[lines.index(numbered[0]) + 1]


@pytest.mark.parametrize("method", ["TF-ISF-p", "BM25", "QLLM-c", "BM25-r", "Random"])
def test_rank_json(example_index, method):
    data = json.loads(invoke("rank", "vehicle", "-m", method, "--format", "json", "-q").stdout)
    assert data["term"] == "vehicle" and data["method"] == method and data["candidates"] == 47
    results = data["results"]
    assert [r["rank"] for r in results] == list(range(1, 11))
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    for r in results:
        assert r["label"] in LABEL_GAINS
        assert SENTENCES[r["sentence_id"]].text == r["text"]
        assert r["label"] == SENTENCES[r["sentence_id"]].label
    # the same scores as the library gives
    ranking = rank(build_method(method), example_index)
    lib = {s.id: float(v) for s, v in zip(example_index.sentences, ranking.scores, strict=False)}
    for r in results:
        assert r["score"] == pytest.approx(lib[r["sentence_id"]], rel=1e-12)
    assert [r["sentence_id"] for r in results] == [r.sentence_id for r in ranking.rows(10)]


def test_rank_json_all_with_top_zero():
    data = json.loads(invoke("rank", "vehicle", "--top", "0", "--format", "json", "-q").stdout)
    results = data["results"]
    assert len(results) == 47
    assert {r["sentence_id"] for r in results} == set(SENTENCES)
    keys = [(-r["score"], r["sentence_id"]) for r in results]
    assert keys == sorted(keys)  # score descending, ties by sentence id


def test_rank_csv():
    out = invoke("rank", "vehicle", "-m", "BM25-p", "--format", "csv", "-n", "15", "-q").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 15
    assert list(rows[0]) == ["rank", "score", "sentence_id", "label", "case_name", "citation", "pin_page", "pin_cite",
                            "court", "level", "jurisdiction", "date", "text"]
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    for r in rows:
        assert r["label"] in LABEL_GAINS
        assert r["text"] == SENTENCES[r["sentence_id"]].text  # commas and quotes survive CSV quoting
        assert r["case_name"] and r["citation"] and r["pin_cite"].startswith(f"{r['case_name']}, {r['citation']} (")


def test_rank_trec():
    out = invoke("rank", "vehicle", "-m", "QLLM", "--format", "trec", "-n", "0", "-q").stdout
    lines = out.splitlines()
    assert len(lines) == 47
    fields = [ln.split() for ln in lines]
    assert all(len(f) == 6 for f in fields)
    assert {f[0] for f in fields} == {"vehicle"} and {f[1] for f in fields} == {"Q0"}
    assert {f[5] for f in fields} == {"QLLM"}
    assert [int(f[3]) for f in fields] == list(range(1, 48))
    scores = [float(f[4]) for f in fields]
    assert scores == sorted(scores, reverse=True)
    assert {f[2] for f in fields} == set(SENTENCES)


# --------------------------------------------------------------------------------------------
# evaluate


def test_evaluate_json_default_methods():
    data = json.loads(invoke("evaluate", "--format", "json", "-q").stdout)
    names = [d["method"] for d in data]
    assert names[0] == "Random" and len(names) == 13
    assert set(names) == {"Random"} | {f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p")}
    gains = [LABEL_GAINS[s.label] for s in EXAMPLE.sentences]
    for d in data:
        assert list(d["per_term"]) == ["vehicle"]
        assert set(d["macro"]) == {"nDCG@10", "nDCG@100", "nDCG@10 (random ties)", "nDCG@100 (random ties)"}
        assert d["macro"] == d["per_term"]["vehicle"]  # one term: the macro average is that term
        assert all(0.0 <= v <= 1.0 for v in d["macro"].values())
    random = data[0]["macro"]
    assert random["nDCG@10 (random ties)"] == pytest.approx(random_baseline_ndcg(gains, 10), rel=1e-12)
    assert random["nDCG@100 (random ties)"] == pytest.approx(random_baseline_ndcg(gains, 100), rel=1e-12)


def test_evaluate_csv_with_cutoffs_and_comma_separated_methods(example_index):
    out = invoke("evaluate", "-m", "BM25,QLLM-p", "-m", "TF-ISF-r", "--k", "5", "--format", "csv", "-q").stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["method", "term", "nDCG@5", "nDCG@5 (random ties)"]
    body = rows[1:]
    assert [(r[0], r[1]) for r in body] == [("BM25", "vehicle"), ("BM25", "MACRO"), ("QLLM-p", "vehicle"),
                                            ("QLLM-p", "MACRO"), ("TF-ISF-r", "vehicle"), ("TF-ISF-r", "MACRO")]
    for r in body:
        assert 0.0 <= float(r[2]) <= 1.0
    lib = rank(build_method("BM25"), example_index).evaluate(["nDCG@5"])["nDCG@5"]
    assert float(body[0][2]) == pytest.approx(lib, abs=5e-5)


def test_evaluate_table():
    out = invoke("evaluate", "-q").stdout
    assert out.startswith("Macro average over 1 term(s)")
    header = out.splitlines()[1].split()
    assert header[:3] == ["method", "nDCG@10", "nDCG@100"]
    body = {ln.split()[0]: [float(x) for x in ln.split()[1:]] for ln in out.splitlines()[2:] if ln.strip()}
    assert set(body) == {"Random"} | {f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p")}
    assert all(len(v) == 4 and all(0 <= x <= 1 for x in v) for v in body.values())


# --------------------------------------------------------------------------------------------
# methods


def test_methods_lists_every_name_section_by_section():
    from statinterp.rankers.grammar import COMPOUND_EXAMPLE, method_sections

    out = invoke("methods").stdout
    sections: dict[str, list[str]] = {}
    current = None
    for ln in out.splitlines():
        if ln.strip() and not ln.startswith(" "):
            assert ln.endswith(":"), ln
            current = sections.setdefault(ln[:-1], [])
        elif ln.strip():
            assert current is not None, ln
            current.append(ln.split()[0])
    learned = "Learned model (the default of rank, explain, review, simulate-review)"
    assert list(sections)[:6] == [learned, "Direct", "Context", "Query expansion", "Novelty", "Compound"]
    assert sections.pop(learned) == ["learned:default"]  # listed first: the default ranker
    assert sections == {s: [n for n, _ in entries] for s, entries in method_sections()}
    names = [n for n, _ in list_methods()]
    for name in CORE:
        assert name in names
    example = [ln for ln in out.splitlines() if ln.split()[:1] == [COMPOUND_EXAMPLE]]
    assert len(example) == 1 and "(example)" in example[0]
    assert sum("(example)" in ln for ln in out.splitlines()) == 1


# --------------------------------------------------------------------------------------------
# errors: exit status 2, one line, no traceback


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("command", [["rank", "vehicle"], ["evaluate"]])
def test_unknown_method_exits_2_listing_valid_names(capsys, command):
    code, out, err = run_main(capsys, *command, "-m", "TF-IDF-x", "-q")
    assert code == 2
    line = _one_error_line(err)
    assert "TF-IDF-x" in line
    for name in CORE:
        assert name in line, name
    assert out == ""


def test_bad_data_path_exits_2_with_one_line(capsys, tmp_path):
    missing = tmp_path / "no-such-data"
    code, out, err = run_main(capsys, "rank", "vehicle", "--data", str(missing), "-q")
    assert code == 2
    assert str(missing) in _one_error_line(err)
    assert out == ""


def test_bad_data_record_exits_2_naming_file_record_field(capsys, corpus_builder):
    records = corpus_builder.records()
    records["red_car"]["sentence"]["s3"]["label"] = "maybe"
    folder = corpus_builder.write(records)
    code, _, err = run_main(capsys, "evaluate", "--data", str(folder), "-q")
    assert code == 2
    line = _one_error_line(err)
    assert "red_car-sentence.json" in line and "'s3'" in line and "'label'" in line


def test_unknown_term_exits_2(capsys):
    code, _, err = run_main(capsys, "rank", "bicycle", "-q")
    assert code == 2
    line = _one_error_line(err)
    assert "bicycle" in line and "vehicle" in line


def test_success_exits_0(capsys):
    code, out, err = run_main(capsys, "rank", "vehicle", "-n", "2", "--format", "trec", "-q")
    assert code == 0 and len(out.splitlines()) == 2


def test_rank_on_tiny_data_with_unlabelled_sentence(corpus_builder):
    folder = corpus_builder.write()
    data = json.loads(invoke("rank", "red car", "--data", str(folder), "-m", "TF-ISF", "--format", "json",
                             "-q").stdout)
    assert data["candidates"] == 5
    assert [r["sentence_id"] for r in data["results"]] == ["s3", "s1", "s4", "s2", "s5"]
    assert data["results"][-1]["label"] is None


# --------------------------------------------------------------------------------------------
# --out


def _strays(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


def test_out_writes_the_same_as_stdout_and_refuses_to_overwrite(capsys, tmp_path):
    target = tmp_path / "ranking.json"
    stdout = invoke("rank", "vehicle", "--format", "json", "-q").stdout
    code, out, err = run_main(capsys, "rank", "vehicle", "--format", "json", "-q", "--out", str(target))
    assert code == 0 and out == ""
    assert target.read_text(encoding="utf-8") == stdout
    assert _strays(tmp_path) == []

    target.write_text("keep me")
    code, out, err = run_main(capsys, "rank", "vehicle", "--format", "csv", "-q", "--out", str(target))
    assert code == 2
    assert "exists" in _one_error_line(err) and "--force" in err
    assert target.read_text() == "keep me"

    code, _, _ = run_main(capsys, "rank", "vehicle", "--format", "csv", "-q", "--out", str(target), "--force")
    assert code == 0
    assert target.read_text(encoding="utf-8").startswith("rank,score,sentence_id,label")
    assert _strays(tmp_path) == []


def test_out_for_evaluate(capsys, tmp_path):
    target = tmp_path / "eval.csv"
    code, out, _ = run_main(capsys, "evaluate", "-m", "BM25", "--format", "csv", "-q", "-o", str(target))
    assert code == 0 and out == ""
    header = target.read_text().splitlines()[0].split(",")
    assert header[:2] == ["method", "term"]
    assert sorted(header[2:]) == ["nDCG@10", "nDCG@10 (random ties)", "nDCG@100", "nDCG@100 (random ties)"]


@pytest.mark.parametrize("failing", ["fsync", "rename"])
def test_out_is_atomic_when_writing_fails(monkeypatch, tmp_path, failing):
    """A failure after the data are written but before they are in place (disk full on flush,
    a failing rename) leaves the old file whole and no temporary file behind."""
    import os

    target = tmp_path / "ranking.txt"
    target.write_text("old content")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as mp:
        if failing == "fsync":
            mp.setattr(os, "fsync", fail)
        else:
            mp.setattr(os, "replace", fail)
            mp.setattr(os, "link", fail)
            mp.setattr(os, "rename", fail)
        result = CliRunner().invoke(cli, ["rank", "vehicle", "-q", "--out", str(target), "--force"])
    assert result.exit_code != 0
    assert target.read_text() == "old content"
    assert _strays(tmp_path) == []


def test_out_into_a_missing_folder_creates_it(capsys, tmp_path):
    target = tmp_path / "new" / "run.trec"
    code, _, _ = run_main(capsys, "rank", "vehicle", "--format", "trec", "-q", "--out", str(target))
    assert code == 0
    assert len(target.read_text().splitlines()) == 10
    assert _strays(target.parent) == []


def test_scores_in_outputs_are_finite():
    data = json.loads(invoke("rank", "vehicle", "-m", "QLLM-r", "--format", "json", "-n", "0", "-q").stdout)
    assert np.all(np.isfinite([r["score"] for r in data["results"]]))


def test_method_list_splits_on_commas_outside_parentheses():
    from statinterp.app.options import split_methods

    assert split_methods(["Tp-Nr,QLLM-p+gate(BM25-g,0.4)", " BM25 "]) == ["Tp-Nr", "QLLM-p+gate(BM25-g,0.4)", "BM25"]
    assert split_methods(["a,,b,"]) == ["a", "b"]


def test_data_format_doc_minimal_term_runs_as_written(tmp_path, capsys):
    """docs/data-format.md's minimal term: its files, written as the doc shows, load and rank,
    and a provision-based method without a provision stops with the error the doc quotes."""
    doc = (REPO_ROOT / "docs" / "data-format.md").read_text(encoding="utf-8")
    block = doc.split("## A minimal term", 1)[1].split("```console", 1)[1].split("```", 1)[0]
    files = re.findall(r"cat > (\S+) <<'EOF'\n(.*?)\nEOF", block, re.DOTALL)
    kinds = ("case", "opinion", "paragraph", "sentence")
    assert [name for name, _ in files] == [f"my_term-{kind}.json" for kind in kinds]
    for name, body in files:
        (tmp_path / name).write_text(body, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    term = corpus.term("my term")
    assert [s.label for s in term.sentences] == [None] and term.opinions["c1-o1"].type == "majority"
    command = re.search(r'\$ statinterp rank "my term" --data \. --provision "([^"]+)"', block)
    assert command, "the doc's rank command changed shape"
    code, out, err = run_main(capsys, "rank", "my term", "--data", str(tmp_path), "--provision", command.group(1),
                              "--format", "json", "--no-cache")
    assert code == 0, err
    assert [r["sentence_id"] for r in json.loads(out)["results"]] == ["c1-o1-p0-s0"]
    quoted = re.search(r"stop with\s+`([^`]+)`", doc.replace("\n", " "))
    assert quoted, "the doc no longer quotes the missing-provision error"
    code, out, err = run_main(capsys, "rank", "my term", "--data", str(tmp_path), "-m", "NWR", "--no-cache")
    assert code == 2 and out == ""
    assert err.strip() == f"statinterp: error: {quoted.group(1)}"


@pytest.mark.slow
@pytest.mark.parametrize("extra, expected", [([], None), (["--jobs", "2"], 2)])
def test_jobs_default_leaves_the_process_count_to_the_analyser(monkeypatch, capsys, extra, expected):
    """Without --jobs the CLI passes n_process=None, so the analyser's automatic choice (up to
    2 processes for much text) applies on the command line as in the Python API."""
    import statinterp.workflow as workflow

    seen = []
    real = workflow.prepare_corpus

    def spy(corpus, **kwargs):
        seen.append(kwargs.get("n_process", "absent"))
        return real(corpus, **kwargs)

    monkeypatch.setattr(workflow, "prepare_corpus", spy)
    code, out, err = run_main(capsys, "rank", "vehicle", "--top", "1", "--no-cache", "-q", *extra)
    assert code == 0, err
    assert seen == [expected]


def test_every_command_a_module_defines_is_registered_once():
    """Each app/*_commands.py module lists its own commands (COMMANDS) and cli.py adds those
    lists: a command defined but not listed (or listed twice) fails here."""
    import click

    from statinterp.app.cli import COMMAND_MODULES

    listed = [command for module in COMMAND_MODULES for command in module.COMMANDS]
    assert len({c.name for c in listed}) == len(listed)
    assert sorted(cli.commands) == sorted(c.name for c in listed)
    for module in COMMAND_MODULES:
        defined = {v for v in vars(module).values() if isinstance(v, click.Command)}
        subcommands = {c for g in defined if isinstance(g, click.Group) for c in g.commands.values()}
        assert defined - subcommands == set(module.COMMANDS), module.__name__
