"""A newcomer's first hour (issue 16): no dead ends on the command line.

Close-name suggestions, case-insensitive method names, term lists, ``--k 5,20``, sentence ids
in the table, the same field names in CSV and JSON, the heading with the term as typed, and
the advice for a missing provision naming an option the command has.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.support.cli import one_error_line, run_main
from tests.support.paths import REPO_ROOT


@pytest.mark.parametrize("typo, meant", [("TF-ISF-x", "TF-ISF-p"), ("TFISF-p", "TF-ISF-p"), ("BM52", "BM25"),
                                         ("Tp-Tg-Nx", "Tp-Tg-Nr")])
@pytest.mark.parametrize("command", [["rank", "vehicle"], ["evaluate"], ["explain", "vehicle", "s1"]])
def test_unknown_method_suggests_the_closest_names(capsys, command, typo, meant):
    code, out, err = run_main(capsys, *command, "-q", "-m", typo)
    line = one_error_line(err)
    assert code == 2 and out == ""
    suggestion = line.split("did you mean", 1)[1].split("?", 1)[0]
    assert repr(meant) in suggestion


def test_suggestions_for_tune_cv_and_reproduce(capsys, tmp_path):
    for args in (["tune", "tf-isf-x"], ["cv", "--compounds", "Tp-Nx"],
                 ["reproduce", "--methods", "BM52", "--out", str(tmp_path)]):
        code, _, err = run_main(capsys, *args, "-q")
        assert code == 2 and "did you mean" in one_error_line(err), args


@pytest.mark.parametrize("typed, canonical", [("tf-isf-p", "TF-ISF-p"), ("bm25", "BM25"), ("TP-TG-NR", "Tp-Tg-Nr"),
                                              ("random", "Random"), ("nwr", "NWR"),
                                              ("tf-isf-p+nwr>=0.3", "TF-ISF-p+NWR>=0.3"),
                                              ("qllm-p+bm25-g>=0.4", "QLLM-p+BM25-g>=0.4")])
def test_method_names_are_case_insensitive_where_unambiguous(capsys, typed, canonical):
    code, out, err = run_main(capsys, "rank", "vehicle", "-q", "-m", typed, "--format", "json", "-n", "1")
    assert code == 0, err
    assert json.loads(out)["method"] == canonical
    code, out, err = run_main(capsys, "evaluate", "-q", "-m", typed, "--format", "json")
    assert code == 0, err
    assert json.loads(out)[0]["method"] == canonical


def test_unknown_term_suggests_and_lists_terms(capsys):
    code, _, err = run_main(capsys, "rank", "vehicel", "-q")
    line = one_error_line(err)
    assert code == 2 and "did you mean 'vehicle'?" in line and "terms: vehicle" in line


def test_evaluate_unknown_term_lists_available_terms(capsys):
    code, _, err = run_main(capsys, "evaluate", "-q", "--term", "bicycle")
    line = one_error_line(err)
    assert code == 2 and "bicycle" in line and "terms: vehicle" in line
    code, _, err = run_main(capsys, "evaluate", "-q", "--term", "vehicel")
    assert code == 2 and "did you mean 'vehicle'?" in one_error_line(err)


def test_k_takes_comma_separated_cutoffs_like_methods(capsys):
    code, out, err = run_main(capsys, "evaluate", "-q", "-m", "BM25", "--k", "5,20", "--k", "3", "--format", "json")
    assert code == 0, err
    macro = json.loads(out)[0]["macro"]
    assert {k for k in macro if "rt" not in k.lower() and "random" not in k.lower()} == {"nDCG@5", "nDCG@20", "nDCG@3"}


@pytest.mark.parametrize("bad", ["5,x", "0", "-3", "5,,"])
def test_bad_cutoffs_are_one_line_errors(capsys, bad):
    code, _, err = run_main(capsys, "evaluate", "-q", "-m", "BM25", "--k", bad)
    if bad == "5,,":  # empty parts are ignored, like empty method names
        assert code == 0, err
        return
    assert code == 2 and "--k" in one_error_line(err)


def test_table_shows_sentence_ids_that_explain_accepts(capsys):
    code, out, _ = run_main(capsys, "rank", "vehicle", "-q", "-n", "3")
    assert code == 0
    code, js, _ = run_main(capsys, "rank", "vehicle", "-q", "-n", "3", "--format", "json")
    ids = [r["sentence_id"] for r in json.loads(js)["results"]]
    numbered = [ln for ln in out.splitlines() if ln[3:4] == "." and ln[:3].strip().isdigit()]
    assert len(numbered) == 3
    for line, sid in zip(numbered, ids, strict=True):
        assert f"  {sid}  " in line
    code, out, err = run_main(capsys, "explain", "vehicle", ids[0], "-q")
    assert code == 0, err


def test_csv_and_json_use_the_same_field_names(capsys):
    _, js, _ = run_main(capsys, "rank", "vehicle", "-q", "-n", "2", "--format", "json")
    _, cs, _ = run_main(capsys, "rank", "vehicle", "-q", "-n", "2", "--format", "csv")
    json_fields = set(json.loads(js)["results"][0])
    csv_fields = set(next(csv.reader(io.StringIO(cs))))
    assert csv_fields == json_fields
    _, js, _ = run_main(capsys, "rank", "vehicle", "-q", "-n", "2", "--format", "json", "--dedupe")
    _, cs, _ = run_main(capsys, "rank", "vehicle", "-q", "-n", "2", "--format", "csv", "--dedupe")
    assert set(next(csv.reader(io.StringIO(cs)))) <= set(json.loads(js)["results"][0])


@pytest.mark.parametrize("extra", [[], ["--dedupe"]])
def test_heading_shows_the_term_as_typed(capsys, extra):
    code, out, err = run_main(capsys, "rank", "VEHICLE", "-q", "-n", "1", *extra)
    assert code == 0, err
    assert "for 'VEHICLE'" in out.splitlines()[0]


def test_missing_provision_advice_names_options_the_command_has(capsys, tmp_path):
    empty = tmp_path / "provisions.json"
    empty.write_text(json.dumps({"terms": [{"key": "other", "provision": "Something else."}]}), encoding="utf-8")
    code, _, err = run_main(capsys, "evaluate", "-q", "--no-cache", "--provisions", str(empty), "-m", "NWR")
    line = one_error_line(err)
    assert code == 2 and "no source provision" in line
    assert "--provisions" in line
    from statinterp.app.ranking_commands import evaluate

    evaluate_options = {o for p in evaluate.params for o in p.opts}
    offered = {w.strip(".,;()`") for w in line.split() if w.startswith("--")}
    # every option the advice names is one evaluate has, or is said to be rank's
    assert "--provisions" in evaluate_options
    assert all(o in evaluate_options or "rank only" in line for o in offered)


def test_cv_over_an_existing_report_says_how_to_write_elsewhere(capsys, tmp_path):
    (tmp_path / "learned.md").write_text("committed report\n")
    code, _, err = run_main(capsys, "cv", "-q", "--report-dir", str(tmp_path))
    line = one_error_line(err)
    assert code == 2 and "--force" in line and "--report-dir" in line
    assert (tmp_path / "learned.md").read_text() == "committed report\n"


def test_readme_cv_command_writes_to_a_folder_no_clone_commits():
    """The cv commands of the README and the manual (docs/) must run as written in a fresh clone,
    where reports/ holds the committed reports: it names a --report-dir inside the ignored experiment-results/, so it
    neither meets a committed report nor leaves a file that looks committed (running it first
    does not make this test fail)."""
    import re
    import shlex

    root = REPO_ROOT
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    commands = re.findall(r"^\$ (statinterp cv [^\n#]*)", readme, re.M)
    commands += re.findall(r"^(statinterp cv [^\n#]*)", readme, re.M)
    assert commands, "neither the README nor the manual shows a cv command"
    for command in commands:
        args = shlex.split(command)
        assert "--report-dir" in args or "--no-report" in args, command
        if "--report-dir" in args:
            folder = (root / args[args.index("--report-dir") + 1]).resolve()
            assert folder.is_relative_to(root / "experiment-results"), f"{command}: {folder} may be committed"
    assert "experiment-results/" in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
