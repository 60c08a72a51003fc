"""Reproducible figures: provenance in reports and models, `reproduce --check`, figures that do not
depend on the loading order, thread or process counts, the background rule (`--term` restricts the
terms scored, not the statistics), and TREC runs + qrels that other tools score the same way."""

from __future__ import annotations

import json
from importlib import metadata

import numpy as np
import pytest

from statinterp.app.cli import main
from statinterp.provenance import (
    FIGURE_LIBRARIES,
    library_versions,
    provenance_lines,
    run_provenance,
    version_differences,
)

SMALL_TERMS = ("mechanical_recordation", "semiconductor_chip_product")
LEXICAL = ("TF-ISF", "BM25", "QLLM", "TF-ISF-p", "BM25-c", "QLLM-o", "TF-ISF-r", "Tp-Tg-Nr", "Bp-Nr", "NWR")


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------
# provenance


def test_library_versions_are_the_installed_ones():
    versions = library_versions()
    assert list(versions)[:2] == ["python", "statinterp"]
    for dist in FIGURE_LIBRARIES:
        try:
            expected = metadata.version(dist)
        except metadata.PackageNotFoundError:
            expected = None
        assert versions[dist] == expected, dist
    for needed in ("numpy", "scipy", "scikit-learn", "spacy", "spacy-lookups-data", "gensim", "POT", "matplotlib",
                   "joblib"):
        assert versions[needed], f"{needed} is a dependency and must be recorded"


def test_provenance_lines_and_differences():
    record = run_provenance(["statinterp", "reproduce", "--data", "some folder"])
    assert record["command"] == "statinterp reproduce --data 'some folder'"
    text = "\n".join(provenance_lines(record))
    assert f"scikit-learn {metadata.version('scikit-learn')}" in text
    assert "constraints.txt" in text
    changed = dict(record["versions"], **{"scikit-learn": "0.0.1", "statinterp": "9"})
    assert version_differences(changed, record["versions"]) == [
        ("scikit-learn", "0.0.1", record["versions"]["scikit-learn"])]
    assert version_differences(record["versions"]) == []


def test_reports_record_command_versions_and_background(tmp_path, capsys):
    code, _, err = run_cli(capsys, "reproduce", "--methods", "Random,TF-ISF-p,BM25", "--out", str(tmp_path), "-q")
    assert code == 0, err
    doc = json.loads((tmp_path / "reproduction.json").read_text())
    assert doc["command"] == f"statinterp reproduce --methods Random,TF-ISF-p,BM25 --out {tmp_path}/"
    assert doc["versions"] == library_versions()
    assert doc["background"]["rule"].startswith("--data")
    assert doc["background"]["description"] == doc["statistics"]
    md = (tmp_path / "reproduction.md").read_text()
    assert "- Versions: Python " in md and f"numpy {np.__version__}" in md
    assert "collection: `" in md


def test_model_file_records_command_and_versions(tmp_path, capsys):
    from statinterp.learned.model import read_header

    out = tmp_path / "m.model"
    code, _, err = run_cli(capsys, "train", "--no-vector-features", "--learner", "linear", "--out", str(out), "-q")
    assert code == 0, err
    header, _ = read_header(out)
    assert header["versions"] == library_versions()
    assert header["command"].startswith("statinterp train --no-vector-features --learner linear --out ")


# --------------------------------------------------------------------------------------------
# reproduce --check


@pytest.fixture(scope="module")
def core_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("check")
    assert main(["reproduce", "--methods", "core", "--out", str(folder), "-q"]) == 0
    return folder / "core.json"


def test_check_agrees_with_an_untouched_report(core_report, capsys):
    code, out, err = run_cli(capsys, "reproduce", "--check", str(core_report), "-q")
    assert code == 0, err
    assert "all 52 figures agree within 1e-09" in out
    assert out.count(" yes\n") == 52  # every figure printed: 13 methods x (1 term + macro) x 2 metrics


def test_check_exits_1_on_a_tampered_figure(core_report, tmp_path, capsys):
    doc = json.loads(core_report.read_text())
    bm25 = next(m for m in doc["methods"] if m["method"] == "BM25")
    bm25["reported_per_term"]["vehicle"]["nDCG@10"] += 0.003
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc))
    code, out, _ = run_cli(capsys, "reproduce", "--check", str(tampered), "--only-differences", "-q")
    assert code == 1
    assert "1 of 52 figures disagree" in out
    assert [line.split()[:3] for line in out.splitlines() if line.endswith(" NO")] == [["BM25", "vehicle", "nDCG@10"]]
    code, out, _ = run_cli(capsys, "reproduce", "--check", str(tampered), "--tolerance", "0.01", "-q")
    assert code == 0 and "all 52 figures agree within 0.01" in out


def test_check_names_a_version_difference(core_report, tmp_path, capsys):
    doc = json.loads(core_report.read_text())
    doc["versions"]["numpy"] = "1.0.0"
    doc["methods"][1]["reported_macro"]["nDCG@100"] = 0.0
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    code, out, _ = run_cli(capsys, "reproduce", "--check", str(changed), "--only-differences", "-q")
    assert code == 1
    assert f"version differs: numpy 1.0.0 in the report, {np.__version__} now" in out
    assert "constraints.txt" in out


@pytest.mark.parametrize("content, problem", [("{", "is not valid JSON"), ("[1]", "not a statinterp report"),
                                              ('{"methods": []}', "records no command")])
def test_check_bad_report_is_one_line(tmp_path, capsys, content, problem):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, err = run_cli(capsys, "reproduce", "--check", str(bad))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and problem in err and "Traceback" not in err


# --------------------------------------------------------------------------------------------
# TREC runs and qrels


def test_trec_run_has_strictly_decreasing_scores_and_raw_scores_beside_it(tmp_path, capsys):
    run = tmp_path / "vehicle.run"
    code, _, err = run_cli(capsys, "rank", "vehicle", "-m", "Tp-Tg-Nr", "--top", "0", "--format", "trec",
                           "--out", str(run), "-q")
    assert code == 0, err
    lines = [line.split() for line in run.read_text().splitlines()]
    assert [int(x[3]) for x in lines] == list(range(1, len(lines) + 1))
    scores = [float(x[4]) for x in lines]
    assert all(a > b for a, b in zip(scores, scores[1:], strict=False)) and scores[-1] == 1
    raw = json.loads((tmp_path / "vehicle.run.scores.json").read_text())
    code, out, _ = run_cli(capsys, "rank", "vehicle", "-m", "Tp-Tg-Nr", "--top", "0", "--format", "json", "-q")
    rows = json.loads(out)["results"]
    assert [r["sentence_id"] for r in rows] == [x[2] for x in lines]
    assert raw["scores"]["vehicle"] == {r["sentence_id"]: r["score"] for r in rows}
    assert len({r["score"] for r in rows}) < len(rows), "the example should hold ties for this test to mean much"


def test_qrels_command(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "qrels")
    assert code == 0
    lines = [line.split() for line in out.splitlines()]
    assert {x[0] for x in lines} == {"vehicle"} and {x[1] for x in lines} == {"0"}
    assert {x[3] for x in lines} <= {"0", "1", "2", "3"}
    ids = [x[2] for x in lines]
    assert ids == sorted(ids) and len(ids) == len(set(ids)) == 47
    code, _, err = run_cli(capsys, "qrels", "--term", "no such term")
    assert code == 2 and "no such term" in err


def _ir_measures_per_term(run_text: str, qrels_text: str, tmp_path) -> dict[str, dict[str, float]]:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is in the test extra")
    (tmp_path / "run").write_text(run_text)
    (tmp_path / "qrels").write_text(qrels_text)
    measures = [ir_measures.nDCG @ 10, ir_measures.nDCG @ 100]
    out: dict[str, dict[str, float]] = {}
    for m in ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(str(tmp_path / "qrels")),
                                   ir_measures.read_trec_run(str(tmp_path / "run"))):
        out.setdefault(m.query_id, {})[str(m.measure)] = m.value
    return out


def test_ir_measures_agree_with_evaluate_on_the_example(tmp_path, capsys):
    qrels = tmp_path / "q"
    assert main(["qrels", "--out", str(qrels)]) == 0
    for method in ("TF-ISF-p", "BM25-p", "Tp-Tg-Nr", "Random"):
        run = tmp_path / f"{method}.run"
        code, out, err = run_cli(capsys, "evaluate", "-m", method, "--run", str(run), "--format", "json", "-q")
        assert code == 0, err
        ours = json.loads(out)[0]["per_term"]
        theirs = _ir_measures_per_term(run.read_text(), qrels.read_text(), tmp_path)
        for metric in ("nDCG@10", "nDCG@100"):
            assert theirs["vehicle"][metric] == pytest.approx(ours["vehicle"][metric], abs=1e-12), (method, metric)


def test_evaluate_run_needs_one_method(tmp_path, capsys):
    code, _, err = run_cli(capsys, "evaluate", "-m", "BM25,TF-ISF", "--run", str(tmp_path / "r"))
    assert code == 2 and "one method" in err


@pytest.mark.slow
def test_ir_measures_agree_with_statinterp_on_the_shared_terms(real_prepared, tmp_path):
    """Per term, nDCG@10/@100 of the exported run + qrels through ir_measures equal statinterp's,
    also where scores tie (trec_eval's own tie order would differ)."""
    from statinterp.app.output import qrels_lines, trec_run
    from statinterp.evaluation.ranking import rank
    from statinterp.rankers.grammar import build_method

    qrels = "".join(qrels_lines(ix.key, [(s.id, s.gain) for s in ix.sentences if s.gain is not None])
                    for ix in real_prepared)
    tied_terms = 0
    for method in ("TF-ISF-p", "BM25-p", "Tp-Tg-Nr", "Random", "TF-ISF"):
        ranker = build_method(method)
        rankings = {ix.key: rank(ranker, ix) for ix in real_prepared}
        tied_terms += sum(len(np.unique(r.scores)) < len(r.scores) for r in rankings.values())
        run = "".join(trec_run(t, method, len(r), [row.__dict__ for row in r.rows()]) for t, r in rankings.items())
        theirs = _ir_measures_per_term(run, qrels, tmp_path)
        assert set(theirs) == set(rankings)
        for term, r in rankings.items():
            ours = r.evaluate()
            for metric in ("nDCG@10", "nDCG@100"):
                assert theirs[term][metric] == pytest.approx(ours[metric], abs=1e-12), (method, term, metric)
    assert tied_terms > 0, "some rankings should hold ties, or the test proves little"


# --------------------------------------------------------------------------------------------
# order, threads and processes


def _prepare_in_order(shared_data, order, n_process=1):
    from statinterp.workflow import open_corpus, prepare_corpus

    corpus = open_corpus(shared_data, terms=SMALL_TERMS)
    corpus.terms = {k: corpus.terms[k] for k in order}
    prepared = prepare_corpus(corpus, cache_dir=False, n_process=n_process)
    for ix in prepared:
        ix.vectors = None
    return prepared


@pytest.mark.slow
def test_figures_do_not_depend_on_the_loading_order_or_processes(shared_data):
    """Two loading orders (so two vocabulary numberings) and 1 vs 2 analysis processes give
    bit-identical lexical scores and an identical learned ranker."""
    from statinterp.learned.features import FeatureSettings
    from statinterp.learned.model import fit_ranker
    from statinterp.rankers.grammar import build_method

    a = _prepare_in_order(shared_data, SMALL_TERMS)
    b = _prepare_in_order(shared_data, SMALL_TERMS[::-1], n_process=2)
    assert [ix.key for ix in b] == list(SMALL_TERMS[::-1])
    assert a.analyzer.vocab.words != b.analyzer.vocab.words  # the ids really differ
    for name in LEXICAL:
        for term in SMALL_TERMS:
            assert np.array_equal(build_method(name).score(a[term]), build_method(name).score(b[term])), (name, term)
    settings = FeatureSettings(vectors="off")
    for learner in ("ensemble", "linear"):
        ma = fit_ranker(list(a), settings, learner)
        mb = fit_ranker(list(b), settings, learner)
        assert ma.trained_on == mb.trained_on == sorted(SMALL_TERMS)
        for term in SMALL_TERMS:
            assert np.array_equal(ma.score(a[term]), mb.score(b[term])), (learner, term)


@pytest.mark.slow
def test_learned_scores_do_not_depend_on_the_thread_count(shared_data):
    from threadpoolctl import threadpool_limits

    from statinterp.learned.features import FeatureSettings
    from statinterp.learned.model import fit_ranker

    prepared = _prepare_in_order(shared_data, SMALL_TERMS)
    scores = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            model = fit_ranker(list(prepared), FeatureSettings(vectors="off"), "ensemble")
            scores[threads] = [model.score(ix) for ix in prepared]
    for one, two in zip(scores[1], scores[2], strict=True):
        assert np.array_equal(one, two)


# --------------------------------------------------------------------------------------------
# background statistics


@pytest.mark.slow
def test_term_restricts_the_terms_scored_not_the_background(shared_data, real_prepared, capsys):
    """`evaluate -t X` gives X's row of the run over all terms (the background stays all of --data)."""
    from statinterp.workflow import evaluate_methods

    methods = ["TF-ISF-c", "BM25", "QLLM-p"]
    full = {r.method: r.per_term for r in evaluate_methods(real_prepared, methods)}
    code, out, err = run_cli(capsys, "evaluate", "--data", str(shared_data), "-t", "mechanical recordation",
                             "-m", ",".join(methods), "--format", "json", "-q")
    assert code == 0, err
    for row in json.loads(out):
        assert list(row["per_term"]) == ["mechanical_recordation"]
        assert row["per_term"]["mechanical_recordation"] == full[row["method"]]["mechanical_recordation"]


@pytest.mark.slow
def test_background_option_fixes_the_collection(shared_data, tmp_path, capsys):
    """--background PATH: the statistics come from PATH alone, so loading another term beside X
    changes none of X's figures; the report names the collection."""
    import shutil

    data_one, data_two = tmp_path / "one", tmp_path / "two"
    data_one.mkdir()
    data_two.mkdir()
    shutil.copy(shared_data / "mechanical_recordation.zip", data_one)
    for t in SMALL_TERMS:
        shutil.copy(shared_data / f"{t}.zip", data_two)
    background = shared_data / "dependent_on_hours_worked.zip"
    rows = []
    for data in (data_one, data_two):
        code, out, err = run_cli(capsys, "evaluate", "--data", str(data), "--background", str(background),
                                 "-t", "mechanical_recordation", "-m", "TF-ISF,BM25-c", "--format", "json", "-q")
        assert code == 0, err
        rows.append([r["per_term"] for r in json.loads(out)])
    assert rows[0] == rows[1]
    code, out, err = run_cli(capsys, "evaluate", "--data", str(data_one), "-t", "mechanical_recordation",
                             "-m", "TF-ISF,BM25-c", "--format", "json", "-q")
    assert [r["per_term"] for r in json.loads(out)] != rows[0], "the background option should matter"
