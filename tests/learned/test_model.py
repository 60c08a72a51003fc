"""The learned ranker (issue 6): features, models, cross-validation, files, dedupe, explain, CLI."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from statinterp.app.cli import main
from statinterp.app.output import format_collapsed
from statinterp.app.report import cv_markdown, importance_chart, limits_notes
from statinterp.corpus.dataset import Corpus
from statinterp.errors import InputError, UsageError
from statinterp.evaluation.explain import explain_sentence, format_explanation
from statinterp.evaluation.ranking import collapse, collapse_ranking, jaccard, rank, similar_pairs
from statinterp.learned.crossval import cross_validate, make_folds
from statinterp.learned.features import FAMILIES, FeatureSettings, extract_features
from statinterp.learned.model import LearnedRanker, fit_ranker, load_model, read_header, save_model
from statinterp.learned.sentence_patterns import (
    case_citation_share,
    citation_parts,
    cites_case,
    cites_provision,
    cites_statute,
    cue_flags,
    longest_common_run,
    minimal_window,
    quoted_spans,
    term_pattern,
)
from statinterp.workflow import example_data_path, open_corpus
from tests.support.corpora import example_as_two_terms
from tests.support.paths import REAL_DATA

#: Fast settings: no word vectors (training them is the slow part).
FAST = FeatureSettings(vectors="off")


@pytest.fixture(scope="module")
def two_terms(analysis_cache_dir):
    """The example term twice, under two keys (so term-level folds can be formed quickly)."""
    from statinterp.index.term_index import prepare
    from statinterp.text.analysis import Analyzer

    term = open_corpus().term("vehicle")
    half = dataclasses.replace(term, key="vehicle_b", sentences=term.sentences[: len(term.sentences) // 2])
    corpus = Corpus({"vehicle": term, "vehicle_b": half})
    return prepare(corpus, Analyzer(cache_dir=analysis_cache_dir))


@pytest.fixture(scope="module")
def model(example):
    return fit_ranker(list(example), FAST, "ensemble")


# ------------------------------------------------------------------------------ text features


def test_quoted_spans():
    text = 'The statute says "any device" and “a conveyance” but not it’s.'
    spans = [text[a:b] for a, b in quoted_spans(text)]
    assert spans == ["any device", "a conveyance"]
    assert quoted_spans("no quotes here") == []
    unclosed = "He wrote: “a vehicle is any device designed to"
    assert [unclosed[a:b] for a, b in quoted_spans(unclosed)] == ["a vehicle is any device designed to"]
    inside = "a device for transport,” the court held."
    assert [inside[a:b] for a, b in quoted_spans(inside)] == ["a device for transport,"]
    single = "The term ‘vehicle’ means more, isn’t it?"
    assert [single[a:b] for a, b in quoted_spans(single)] == ["vehicle"]


def test_longest_common_run_and_window():
    prov = "no vehicle may be taken into the park".split()
    assert longest_common_run("he said no vehicle may be taken there".split(), prov) == 5
    assert longest_common_run("nothing in common".split(), prov) == 0
    assert longest_common_run([], prov) == 0
    assert minimal_window(np.array([1, 5, 2, 9, 1, 2]), np.array([1, 2])) == 2
    assert minimal_window(np.array([1, 5, 9, 2]), np.array([1, 2])) == 4
    assert minimal_window(np.array([1, 5, 9]), np.array([1, 2])) == 0


def test_citations():
    cit = "18 U.S.C. § 1839(3)"
    assert citation_parts(cit) == ("18", "U.S.C.", "1839", "3")
    assert citation_parts("7 U.S.C. § 6c(a)(2)")[2:] == ("6c", "a")
    assert cites_provision("Under 18 U.S.C. § 1839(3), information is secret.", cit) == (True, True)
    assert cites_provision("See 18 U.S.C. 1839.", cit) == (True, True)
    assert cites_provision("Section 1839 defines the term.", cit) == (True, False)
    assert cites_provision("as defined in § 1839, the value", cit) == (True, False)
    assert cites_provision("The definition in 1839(3) applies.", cit)[0]
    assert cites_provision("Under § 18390 and 21839(3) nothing.", cit) == (False, False)
    assert cites_provision("No citation at all.", cit) == (False, False)
    assert cites_statute("The Lanham Act forbids it.") and cites_statute("see 17 U.S.C. 1201")
    assert not cites_statute("The court of appeals affirmed.")
    assert cites_case("See Smith v. Jones, 123 F.3d 456 (2d Cir. 1997).") and cites_case("Id. at 12.")
    assert not cites_case("The jury found for the plaintiff.")
    cite = "Smith v. Jones, 123 F.3d 456"
    assert case_citation_share(cite) > 0.5 and case_citation_share("x" * 200 + cite) < 0.2
    assert case_citation_share("No citation here.") == 0.0 and case_citation_share("") == 0.0


def test_cues():
    rx = term_pattern("vehicle")
    f = cue_flags("A vehicle is any device designed to carry persons over land.", rx)
    assert f["cue:copular_term"] == 1 and f["cue:term_subject"] == 1 and f["cue:attribution"] == 0
    f = cue_flags("The defendant argues that a bicycle is not a vehicle.", rx)
    assert f["cue:attribution"] == 1 and f["cue:party_subject"] == 1 and f["cue:negation"] == 1
    assert f["cue:term_predicate"] == 1
    f = cue_flags("The term includes, for example, cars such as sedans.", rx)
    assert f["cue:includes"] == f["cue:for_example"] == f["cue:such_as"] == 1
    f = cue_flags("In determining whether a cart is a vehicle, courts weigh several factors.", rx)
    assert f["cue:determining"] == f["cue:whether"] == f["cue:factors"] == 1
    assert cue_flags("See Smith v. Jones, 123 F.3d 456, 460 (1st Cir. 1999).", rx)["cue:citation_only"] == 1
    assert cue_flags("II. DISCUSSION", rx)["cue:heading"] == 1
    assert cue_flags("The court held that the cart was a vehicle under the ordinance.", rx)["cue:heading"] == 0
    plural = term_pattern("technological measure")
    assert plural.search("two technological measures") and plural.search("“technological measure”")


def test_feature_matrix(example):
    ix = example["vehicle"]
    fm = extract_features(ix, FAST)
    assert fm.X.shape == (len(ix), len(fm.names)) and np.isfinite(fm.X).all()
    assert set(fm.families) <= set(FAMILIES) and "vectors" not in fm.families
    assert "vectors" in fm.skipped  # switched off, with the reason recorded
    assert len(set(fm.names)) == len(fm.names)
    z = fm.column("scores:TF-ISF-p#z")
    assert abs(z.mean()) < 1e-9 and abs(z.std() - 1) < 1e-9  # standardised within the term
    only = extract_features(ix, FeatureSettings(families=("quotes", "cues"), vectors="off"))
    assert set(only.families) == {"quotes", "cues"}
    with pytest.raises(UsageError):
        FeatureSettings(families=("nonsense",))
    # the labels are never read: the same features without them
    blind = dataclasses.replace(ix, sentences=[dataclasses.replace(s, label=None) for s in ix.sentences])
    assert np.array_equal(extract_features(blind, FAST).X, fm.X)


# ------------------------------------------------------------------------------ folds


def test_make_folds():
    terms = [f"t{i}" for i in range(7)]
    loo = make_folds(terms, "loo")
    assert [f.test for f in loo] == [[t] for t in terms]
    for f in loo:
        assert set(f.train) == set(terms) - set(f.test)
    folds = make_folds(terms, "folds", 3, seed=1)
    assert sorted(t for f in folds for t in f.test) == sorted(terms)
    assert all(not set(f.test) & set(f.train) for f in folds)
    assert folds == make_folds(terms, "folds", 3, seed=1)
    with pytest.raises(UsageError):
        make_folds(["only"], "loo")
    with pytest.raises(UsageError):
        make_folds(terms, "folds", 9)


@pytest.mark.slow
def test_loo_never_trains_on_the_held_out_term(two_terms):
    result = cross_validate(two_terms, FAST, learners=("pairwise", "linear"), compounds=["Tp-Tg-Nr"], repeats=1)
    assert len(result.folds) == 2
    for fold in result.folds:
        assert fold.trained_on == fold.train
        assert not set(fold.trained_on) & set(fold.test)
    assert set(result.per_term) == {"learned:pairwise", "learned:linear", "Random", "TF-ISF-p", "Tp-Tg-Nr"}
    assert result.best_compound == "Tp-Tg-Nr"
    assert ("learned:pairwise", "TF-ISF-p", "nDCG@10") in result.tests
    assert result.family_importance and result.importance
    md = cv_markdown(result, chart="learned_importance.png", notes=limits_notes(result))
    assert "| learned:pairwise |" in md and "Wilcoxon" in md and "learned_importance.png" in md
    assert importance_chart(result).startswith(b"\x89PNG")


# ------------------------------------------------------------------------------ models and files


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["linear", "pairwise", "hgb", "ensemble"])
def test_learners_rank(example, learner):
    m = fit_ranker(list(example), FAST, learner)
    ix = example["vehicle"]
    scores = m.score(ix)
    assert scores.shape == (len(ix),) and np.isfinite(scores).all()
    assert rank(m, ix).evaluate()["nDCG@10"] > 0.5  # fitted on this very term: far above random


@pytest.mark.slow
def test_save_load_round_trip(example, model, tmp_path):
    path = tmp_path / "vehicle.model"
    save_model(model, path)
    header, _ = read_header(path)
    assert header["learner"] == "ensemble" and header["trained_on"] == ["vehicle"]
    assert header["versions"]["scikit-learn"] and header["feature_names"] == model.feature_names
    loaded = load_model(path)
    assert isinstance(loaded, LearnedRanker) and loaded.name == "learned:vehicle"
    ix = example["vehicle"]
    assert np.array_equal(loaded.score(ix), model.score(ix))
    with pytest.raises(UsageError):
        save_model(model, path)  # no overwrite without force
    save_model(model, path, force=True)
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(InputError):
        load_model(bad)
    with pytest.raises(InputError):
        load_model(tmp_path / "missing.model")


@pytest.mark.slow
def test_explain(example, model):
    ix = example["vehicle"]
    sid = ix.sentences[0].id
    from statinterp.rankers.grammar import build_method

    e = explain_sentence(build_method("Tp-Tg-Nr"), ix, sid)
    assert e["rank"] >= 1 and {g["gate"] for g in e["components"]["gates"]} == {"Tg", "Nr"}
    assert "threshold" in e["components"]["gates"][0] and "base" in e["components"]
    text = format_explanation(e)
    assert "gates:" in text and "threshold" in text
    e = explain_sentence(model, ix, sid, top=5)
    contrib = next(v for k, v in e["components"].items() if k.startswith("contributions"))
    assert len(contrib) == 5 and all({"feature", "value", "contribution"} <= set(c) for c in contrib)
    assert "feature" in format_explanation(e) and json.loads(format_explanation(e, "json"))["sentence"] == sid
    lin = fit_ranker(list(example), FAST, "linear")
    X = lin.features(ix).X
    comp = lin.components[0]
    assert np.allclose(lin.contributions(X, 0), comp.coef_ * (X[0] - comp.mean_) / comp.scale_)
    with pytest.raises(UsageError):
        explain_sentence(model, ix, "no-such-sentence")


# ------------------------------------------------------------------------------ dedupe


def test_dedupe_groups_a_near_copy():
    words = [f"w{i}" for i in range(20)]
    a = frozenset(words)
    near = frozenset(words[:19] + ["w99"]) | frozenset(["w0"])  # 19 shared of 21: J = 0.905
    far = frozenset(words[:10] + [f"x{i}" for i in range(10)])
    assert jaccard(a, near) >= 0.9 > jaccard(a, far)
    sets = [far, near, a, frozenset()]
    assert similar_pairs(sets, 0.9) == [(1, 2, pytest.approx(jaccard(a, near)))]
    groups = collapse([2, 0, 1, 3], sets, 0.9)  # a ranks first, its near copy third
    assert groups == [(2, [2, 1]), (0, [0]), (3, [3])]
    # brute force agrees with the prefix-filter index on random sets
    rng = np.random.default_rng(0)
    base = [frozenset(rng.choice(30, size=rng.integers(5, 15), replace=False).tolist()) for _ in range(40)]
    sets = base + [s | {100} for s in base[:10]]
    brute = sorted((i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
                   if jaccard(sets[i], sets[j]) >= 0.8)
    assert [(i, j) for i, j, _ in similar_pairs(sets, 0.8)] == brute


def test_dedupe_ranking(example):
    ix = example["vehicle"]
    from statinterp.rankers.grammar import build_method

    col = collapse_ranking(rank(build_method("TF-ISF-p"), ix), 0.9)
    assert sum(len(m) for _, m in col.groups) == len(ix)
    assert "copies" in format_collapsed(col, "json")


# ------------------------------------------------------------------------------ CLI


def _unlabelled_copy(tmp_path: Path) -> Path:
    out = tmp_path / "unlabelled"
    shutil.copytree(example_data_path(), out)
    path = out / "vehicle-sentence.json"
    data = json.loads(path.read_text())
    for rec in data.values():
        rec.pop("label", None)
    path.write_text(json.dumps(data))
    return out


@pytest.mark.slow
def test_cli_train_rank_evaluate_explain(tmp_path, capsys):
    path = tmp_path / "m.model"
    assert main(["train", "--out", str(path), "--learner", "pairwise", "--no-vector-features", "-q"]) == 0
    assert path.exists()
    assert main(["train", "--out", str(path), "--no-vector-features", "-q"]) == 2  # exists: needs --force
    capsys.readouterr()
    unlabelled = _unlabelled_copy(tmp_path)
    assert main(["rank", "vehicle", "--data", str(unlabelled), "--model", str(path), "-q", "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "learned:m ranking of 47 sentences" in out and "[unlabelled]" in out
    assert main(["rank", "vehicle", "--model", str(path), "-m", "BM25", "-q"]) == 2
    assert main(["rank", "vehicle", "--dedupe", "-q", "--format", "csv", "-n", "0"]) == 0
    assert capsys.readouterr().out.startswith("rank,score,sentence_id,copies")
    assert main(["evaluate", "--model", str(path), "-q", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["method"] == "learned:m"
    assert "not held-out" in captured.err
    sid = open_corpus().term("vehicle").sentences[0].id
    assert main(["explain", "vehicle", sid, "--model", str(path), "-q", "-n", "3"]) == 0
    assert "contribution" in capsys.readouterr().out
    assert main(["explain", "vehicle", sid, "-m", "Tp-Tg-Nr", "-q"]) == 0
    assert "threshold" in capsys.readouterr().out
    assert main(["cv", "-q", "--report-dir", str(tmp_path / "r")]) == 2  # one labelled term: nothing to hold out
    assert "at least two labelled terms" in capsys.readouterr().err


# ------------------------------------------------------------------------------ real data


@pytest.mark.slow
@pytest.mark.skipif(not REAL_DATA.is_dir(), reason=f"shared data not found at {REAL_DATA}")
def test_real_terms_loo(real_prepared):
    from statinterp.index.term_index import PreparedCorpus

    keys = ["mechanical_recordation", "semiconductor_chip_product", "dependent_on_hours_worked"]
    sub = PreparedCorpus({k: real_prepared.indices[k] for k in keys}, real_prepared.background,
                         real_prepared.analyzer)
    result = cross_validate(sub, FAST, learners=("pairwise",), compounds=["Tp-Nr"], importance=False)
    assert [f.test for f in result.folds] == [[k] for k in sorted(keys)]  # folds in name order, whatever the load order
    for fold in result.folds:
        assert fold.test[0] not in fold.trained_on and len(fold.trained_on) == 2
    for k in keys:
        assert 0.0 <= result.per_term["learned:pairwise"][k]["nDCG@10"] <= 1.0
    fm = extract_features(real_prepared.indices["semiconductor_chip_product"], FAST)
    assert fm.column("citations:source_section").max() >= 0.0


@pytest.mark.slow
def test_cli_cv_writes_report(tmp_path, capsys):
    data = example_as_two_terms(tmp_path / "two")
    reports = tmp_path / "reports"
    args = ["cv", "--data", str(data), "-q", "--learner", "pairwise", "--no-vector-features", "--compounds", "Tp-Nr",
            "--report-dir", str(reports)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Leave-one-term-out" in out and "learned:pairwise" in out and "Random" in out
    md = (reports / "learned.md").read_text()
    assert "## Macro averages" in md and "## Per term" in md and "learned_importance.png" in md
    assert (reports / "learned_importance.png").read_bytes().startswith(b"\x89PNG")
    assert main(args) == 2  # the report exists: --force needed
    capsys.readouterr()
    assert main(args + ["--force", "--mode", "folds", "--folds", "2", "--no-importance", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "folds"
