"""Tests of statinterp.evaluation.tuning (grid search, leave-one-term-out, reproduction) and statinterp.app.report."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

from statinterp.app.cli import main
from statinterp.app.report import (
    SECTIONS,
    format_tune,
    reproduction_chart,
    reproduction_json,
    reproduction_markdown,
    section_of,
)
from statinterp.errors import UsageError
from statinterp.evaluation.tuning import (
    best_point,
    core_methods,
    default_grid,
    evaluate_grid,
    parse_grid,
    parse_grid_values,
    reproduce,
    tune,
    tune_loo,
)
from statinterp.index.term_index import PreparedCorpus
from statinterp.provenance import fixed_precision
from statinterp.rankers import grammar as registry
from statinterp.rankers.base import Ranker
from statinterp.rankers.grammar import build_method
from statinterp.workflow import evaluate_methods, open_corpus, prepare_corpus

LAMBDAS = [i / 10 for i in range(11)]


@pytest.fixture(scope="module")
def prepared():
    return prepare_corpus(open_corpus(), cache_dir=False)


@pytest.fixture(scope="module")
def multi(prepared):
    """Four terms: the example term's index under four keys, each with its labels shuffled
    differently (so that each term prefers different parameters)."""
    (ix,) = list(prepared)
    labels = [s.label for s in ix.sentences]
    indices = {}
    for k in range(4):
        order = labels[:]
        if k:
            random.Random(k).shuffle(order)
        sents = [dataclasses.replace(s, label=lab) for s, lab in zip(ix.sentences, order, strict=False)]
        key = f"term_{k}"
        term = dataclasses.replace(ix.term, key=key, sentences=sents)
        indices[key] = dataclasses.replace(ix, term=term, sentences=sents)
    return PreparedCorpus(indices, prepared.background, prepared.analyzer)


# --------------------------------------------------------------------------- grids


def test_parse_grid_values_progressions():
    assert parse_grid_values("0,0.1,...,1") == LAMBDAS
    assert parse_grid_values("1,2,...,4") == [1, 2, 3, 4]
    assert all(isinstance(v, int) for v in parse_grid_values("1,2,...,4"))
    assert parse_grid_values("0.5, 0.9") == [0.5, 0.9]
    assert parse_grid_values("0.05,0.1,0.2,...,0.4") == [0.05, 0.1, 0.2, 0.3, 0.4]


@pytest.mark.parametrize("bad", ["", "0,,1", "0,...,1", "0,0.3,...,1", "0,0.1,...", "1,0.5,...,2", "a,b,...,c"])
def test_parse_grid_values_rejects(bad):
    with pytest.raises(UsageError):
        parse_grid_values(bad)


def test_parse_grid():
    assert parse_grid(["lam=0,0.5,1", "n=1,2"]) == {"lam": [0, 0.5, 1], "n": [1, 2]}
    for bad in (["lam"], ["=1"], ["lam=1", "lam=2"], ["lam=1,1"]):
        with pytest.raises(UsageError):
            parse_grid(bad)


def test_default_grid_only_holds_parameters_that_matter():
    assert default_grid("TF-ISF-p")["lam"] == LAMBDAS
    assert "lam" in default_grid("BM25-r")
    with pytest.raises(UsageError, match="no tunable parameter"):
        default_grid("TF-ISF")  # lam would be silently ignored
    with pytest.raises(UsageError):
        default_grid("no-such-method")


# --------------------------------------------------------------------------- tuning


def test_tune_best_is_argmax_of_separate_evaluations(prepared):
    result = tune(prepared, "TF-ISF-p", {"lam": LAMBDAS}, metric="nDCG@100")
    separate = [evaluate_methods(prepared, [build_method("TF-ISF-p", lam=v)])[0] for v in LAMBDAS]
    scores = [r.macro["nDCG@100"] for r in separate]
    best = int(np.argmax(scores))  # first maximum, as tune breaks ties
    assert result.best_params == {"lam": LAMBDAS[best]}
    assert result.tune_score == pytest.approx(scores[best], abs=1e-12)
    # every grid point's numbers are exactly those of a separate evaluation
    for point, res in zip(result.points, separate, strict=False):
        assert point.per_term == res.per_term
    assert result.test_terms == [] and result.notes  # nothing held out: said so


def test_tune_other_metric(prepared):
    result = tune(prepared, "BM25-o", {"lam": LAMBDAS}, metric="nDCG@10")
    scores = [evaluate_methods(prepared, [build_method("BM25-o", lam=v)])[0].macro["nDCG@10"] for v in LAMBDAS]
    assert result.metric == "nDCG@10"
    assert result.best_params == {"lam": LAMBDAS[int(np.argmax(scores))]}


class _Synthetic(Ranker):
    """Ranks perfectly when w == 0.3, worse the further w is from it (a known optimum)."""

    name = "Synthetic"  # type: ignore[assignment]

    def __init__(self, w: float = 0.0):
        self.w = w

    def score(self, index):
        gains = np.nan_to_num(index.gains, nan=0.0)
        noise = np.random.default_rng(0).random(len(gains))
        return (1 - abs(self.w - 0.3)) * gains + abs(self.w - 0.3) * 10 * noise


@pytest.fixture()
def synthetic():
    """The method Synthetic, registered for one test."""
    from statinterp.rankers import registry as parts

    parts.register("method", "Synthetic", _Synthetic, description="test", section="Other")
    yield
    parts.unregister("method", "Synthetic")


def test_tune_finds_known_optimum(multi, synthetic):
    result = tune(multi, "Synthetic", {"w": LAMBDAS}, tune_terms=["term_0", "term_1"])
    assert result.best_params == {"w": 0.3}
    assert result.tune_score == pytest.approx(1.0)
    assert result.test_terms == ["term_2", "term_3"]
    assert result.test_macro["nDCG@100"] == pytest.approx(1.0)
    loo = tune_loo(multi, "Synthetic", {"w": LAMBDAS})
    assert all(f.best_params == {"w": 0.3} for f in loo.folds)


def test_tune_holds_out_the_other_terms(multi):
    result = tune(multi, "TF-ISF-p", {"lam": LAMBDAS}, tune_terms=["term_1", "term_3"])
    assert result.tune_terms == ["term_1", "term_3"]
    assert result.test_terms == ["term_0", "term_2"]
    best = next(p for p in result.points if p.params == result.best_params)
    assert result.tune_score == pytest.approx(np.mean([best.per_term[t]["nDCG@100"] for t in ("term_1", "term_3")]))
    assert set(result.test_per_term) == {"term_0", "term_2"}
    assert all(result.test_per_term[t] == best.per_term[t] for t in result.test_terms)
    for p in result.points:
        assert p.macro("nDCG@100", result.tune_terms) <= result.tune_score + 1e-15
    text = format_tune(result)
    assert "Best parameters: lam=" in text and "MACRO" in text
    doc = json.loads(format_tune(result, "json"))
    assert doc["best_params"] == result.best_params and doc["test_terms"] == ["term_0", "term_2"]
    with pytest.raises(UsageError):
        tune(multi, "TF-ISF-p", {"lam": LAMBDAS}, tune_terms=["nonexistent"])


def test_loo_never_evaluates_a_term_it_tuned_on(multi):
    result = tune_loo(multi, "TF-ISF-p", {"lam": LAMBDAS})
    keys = [ix.key for ix in multi]
    assert [f.term for f in result.folds] == keys
    for fold in result.folds:
        assert fold.term not in fold.tuned_on
        assert sorted(fold.tuned_on) == sorted(k for k in keys if k != fold.term)
        # the fold's choice is the best on the other terms, and its score is on the term itself
        best, score = best_point(result.points, "nDCG@100", fold.tuned_on)
        assert fold.best_params == best.params and fold.tune_score == score
        assert fold.held_out == best.per_term[fold.term]
    assert result.macro["nDCG@100"] == pytest.approx(np.mean([f.held_out["nDCG@100"] for f in result.folds]))
    doc = json.loads(format_tune(result, "json"))
    assert doc["mode"] == "leave-one-term-out"
    assert all(f["term"] not in f["tuned_on"] for f in doc["folds"])
    assert "Leave one term out" in format_tune(result)


def test_loo_needs_two_terms(prepared):
    with pytest.raises(UsageError, match="two"):
        tune_loo(prepared, "TF-ISF-p", {"lam": [0.0, 1.0]})


def test_grid_points_that_cannot_run_are_reported(prepared):
    points = evaluate_grid(prepared, "QLLM-c", {"lam": [0.5, 1.0]})
    assert points[0].ok and not points[1].ok and "exceeds" in points[1].error
    result = tune(prepared, "QLLM-c", {"lam": [0.5, 1.0]})
    assert result.best_params == {"lam": 0.5}
    assert any("could not run" in n for n in result.notes)
    assert "cannot run" in format_tune(result)


def test_inert_parameter_is_noted(prepared):
    # a grid that repeats one value (python API) builds one ranker; a nested name is a parameter too
    result = tune(prepared, "BM25-p", {"lam": [0.2, 0.9], "similarity__b": [0.75, 0.5], "k3": [1.2, 1.2]})
    assert any("'k3'" in n and "does not change" in n for n in result.notes)
    assert not any("'similarity__b'" in n for n in result.notes)
    with pytest.raises(UsageError, match="no part that parameter.s. n apply"):  # n belongs to -r
        tune(prepared, "TF-ISF-p", {"lam": [0.2, 0.9], "n": [1, 2]})


# --------------------------------------------------------------------------- reproduction


def test_section_of():
    assert section_of("Random") == "Baseline"
    assert section_of("TF-ISF") == "Direct"
    assert section_of("QLLM-p") == "Context" and section_of("BM25-r") == "Context"
    assert section_of("Tp-Tg-Nr") == "Compound"


def test_reproduce_report_rendering(prepared):
    rep = reproduce(prepared, core_methods() + ["no-such-method"], metadata={"command": "statinterp x", "date": "d"})
    assert [r.method for r in rep.results] == core_methods()
    assert rep.skipped and rep.skipped[0][0] == "no-such-method"
    md = reproduction_markdown(rep, chart="c.png")
    for heading in ("## Macro averages", "### Baseline", "### Direct", "### Context", "### Query expansion",
                    "### Novelty", "### Compound"):
        assert heading in md
    assert "| Baseline | Random |" in md and "statinterp x" in md and "no-such-method" in md
    assert "Background statistics:" in md and "![" in md
    png = reproduction_chart(rep)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    doc = json.loads(reproduction_json(rep))
    rnd = next(m for m in doc["methods"] if m["method"] == "Random")
    assert rnd["reported_macro"]["nDCG@10"] == rnd["macro"]["nDCG@10 (random ties)"]


@pytest.mark.slow
def test_cli_reproduce_writes_files_matching_evaluate(tmp_path, capsys):
    out = tmp_path / "reports"
    assert main(["reproduce", "--no-cache", "-q", "--out", str(out)]) == 0
    md = (out / "reproduction.md").read_text()
    doc = json.loads((out / "reproduction.json").read_text())
    assert (out / "reproduction.png").read_bytes().startswith(b"\x89PNG")
    for section in SECTIONS[:-1]:
        assert f"### {section}" in md
    assert "| Baseline | Random |" in md and "statinterp reproduce --out" in md
    ran = [m["method"] for m in doc["methods"]]
    skipped = [s["method"] for s in doc["skipped"]]
    assert "Random" in ran and "TF-ISF-p" in ran
    assert sorted(ran + skipped) == sorted(n for n, _ in registry.list_methods())
    expected = evaluate_methods(prepare_corpus(open_corpus(), cache_dir=False), ran)
    for got, want in zip(doc["methods"], expected, strict=False):
        assert got["method"] == want.method
        assert got["per_term"] == fixed_precision(want.per_term)  # written at FIGURE_DIGITS digits
        assert got["macro"] == fixed_precision(want.macro)

    # existing outputs are not overwritten without --force, and are left untouched
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(["reproduce", "--no-cache", "-q", "--methods", "core", "--out", str(out)]) == 0  # core.* are new
    assert (out / "core.md").exists() and "--methods core" in (out / "core.md").read_text()
    assert main(["reproduce", "--no-cache", "-q", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert all((out / name).read_bytes() == data for name, data in before.items())
    assert main(["reproduce", "--no-cache", "-q", "--force", "--methods", "Random,BM25", "--out", str(out)]) == 0
    assert [m["method"] for m in json.loads((out / "reproduction.json").read_text())["methods"]] == ["Random", "BM25"]


@pytest.mark.slow
def test_cli_tune(tmp_path, capsys):
    target = tmp_path / "tune.json"
    assert main(["tune", "TF-ISF-p", "--no-cache", "-q", "--grid", "lam=0,0.5,1", "--format", "json",
                 "--out", str(target)]) == 0
    doc = json.loads(target.read_text())
    assert doc["grid"] == {"lam": [0, 0.5, 1]} and doc["method"] == "TF-ISF-p"
    assert main(["tune", "TF-ISF-p", "--no-cache", "-q", "--out", str(target)]) == 2  # exists, no --force
    assert main(["tune", "TF-ISF-p", "--no-cache", "-q", "--loo", "--tune-term", "vehicle"]) == 2
    assert main(["tune", "TF-ISF-p", "--no-cache", "-q", "--grid", "lam=0,0.1,...,1"]) == 0
    assert "lam=" in capsys.readouterr().out


def test_default_grid_of_a_compound_tunes_its_gates():
    assert "Tp-Tg-Nr" in [n for n, _ in registry.list_methods()], "compound methods are not registered"
    grid = default_grid("Tp-Tg-Nr")
    assert "lam" not in grid and {"lam2", "nwr"} <= set(grid)
