"""Relevance feedback within a term (statinterp.learned.feedback), its labels files
(statinterp.corpus.labels) and `statinterp rank --feedback` on the example data."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

from statinterp.app.cli import cli, main
from statinterp.corpus.labels import read_label_file
from statinterp.errors import InputError, UsageError
from statinterp.evaluation.metrics import ndcg, rank_order
from statinterp.evaluation.ranking import rank
from statinterp.learned import feedback as fb
from statinterp.learned.features import FeatureMatrix
from statinterp.rankers.grammar import build_method
from statinterp.workflow import example_data_path, open_corpus, prepare_corpus
from tests.support.paths import REPO_ROOT


@pytest.fixture(scope="module")
def example_index():
    return prepare_corpus(open_corpus())["vehicle"]


def _ndcg_rest(scores, gains, ids, rest, k=10):
    order = rank_order(scores[rest], ids[rest])
    return ndcg(gains[rest][order], gains[rest], k)


# --------------------------------------------------------------------------------------------
# feedback_scores


def test_learner_uses_labels_to_beat_a_useless_prior(example_index):
    """A feature that carries the gain (plus noise) is learned from 15 labels: the rest ranks
    far better than under a random prior, and better than the prior alone."""
    n = len(example_index)
    gains = example_index.gains
    rng = np.random.default_rng(1)
    X = np.column_stack([gains + rng.normal(0, 0.3, n), rng.normal(size=(n, 5))])
    features = FeatureMatrix(X, ["signal"] + [f"noise{j}" for j in range(5)], ["cues"] * 6)
    prior = rng.normal(size=n)
    shown = rng.choice(n, 15, replace=False)
    labels = {int(i): int(gains[i]) for i in shown}
    assert len(set(labels.values())) > 1
    rest = np.setdiff1d(np.arange(n), shown)
    ids = example_index.sentence_ids.astype(str)
    for learner in fb.FEEDBACK_LEARNERS:
        scores = fb.feedback_scores(example_index, prior, labels, features=features, learner=learner, prior_weight=0.2)
        assert scores.shape == (n,) and np.all(np.isfinite(scores))
        assert _ndcg_rest(scores, gains, ids, rest) > _ndcg_rest(prior, gains, ids, rest) + 0.1, learner
        assert _ndcg_rest(scores, gains, ids, rest) > 0.9, learner


def test_blend_formula_and_limits(example_index):
    n = len(example_index)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 3))
    features = FeatureMatrix(X, ["a", "b", "c"], ["cues"] * 3)
    prior = rng.normal(size=n) * 7 + 3
    labels = {0: 3, 1: 0, 2: 1, 3: 2, 4: 0}
    z = (prior - prior.mean()) / prior.std()
    # the prior alone: standardised prior
    np.testing.assert_allclose(fb.feedback_scores(example_index, prior, labels, features=features, prior_weight=1.0), z)
    # no variation in the labels, or a single label: nothing to learn
    np.testing.assert_allclose(fb.feedback_scores(example_index, prior, {0: 2, 5: 2}, features=features), z)
    np.testing.assert_allclose(fb.feedback_scores(example_index, prior, {0: 3}, features=features), z)
    np.testing.assert_allclose(fb.feedback_scores(example_index, prior, {}, features=features), z)
    # the blend is w * z(prior) + (1 - w) * z(own)
    own = fb.fit_within_term(X, np.arange(5), np.array([3.0, 0, 1, 2, 0]), "ridge")
    zown = (own - own.mean()) / own.std()
    got = fb.feedback_scores(example_index, prior, labels, features=features, prior_weight=0.3, learner="ridge")
    np.testing.assert_allclose(got, 0.3 * z + 0.7 * zown)
    got0 = fb.feedback_scores(example_index, prior, labels, features=features, prior_weight=0.0, learner="ridge")
    np.testing.assert_allclose(got0, zown)


@pytest.mark.parametrize("labels, message", [
    ({-1: 2}, "not a candidate position"),
    ({10_000: 2}, "not a candidate position"),
    ({"s1": 2}, "not a candidate position"),
    ({0: 4}, "is not one of 0, 1, 2, 3"),
    ({0: "high value"}, "is not one of 0, 1, 2, 3"),
])
def test_bad_labels_are_usage_errors(example_index, labels, message):
    prior = np.zeros(len(example_index))
    with pytest.raises(UsageError, match=message):
        fb.feedback_scores(example_index, prior, labels)


def test_bad_prior_and_settings(example_index):
    n = len(example_index)
    with pytest.raises(UsageError, match="values for"):
        fb.feedback_scores(example_index, np.zeros(n + 1), {})
    with pytest.raises(UsageError, match="NaN"):
        fb.feedback_scores(example_index, np.full(n, np.nan), {})
    with pytest.raises(UsageError, match="prior_weight"):
        fb.feedback_scores(example_index, np.zeros(n), {}, prior_weight=1.5)
    with pytest.raises(UsageError, match="unknown feedback learner"):
        fb.feedback_scores(example_index, np.zeros(n), {0: 1, 1: 0}, learner="forest")


def test_features_are_extracted_once_per_term(example_index, monkeypatch):
    calls = []
    from statinterp.learned import features as feature_module

    real = feature_module.extract_features

    def counting(index, settings=None, names=None):
        calls.append(index.key)
        return real(index, settings, names)

    monkeypatch.setattr(feature_module, "extract_features", counting)
    feature_module._FEATURES_OF_INDEX.clear()
    gains = example_index.gains
    prior = build_method("TF-ISF-p").score(example_index)
    labels = {i: int(gains[i]) for i in range(12)}
    first = fb.feedback_scores(example_index, prior, labels)
    second = fb.feedback_scores(example_index, prior, {**labels, 20: int(gains[20])})
    assert calls == ["vehicle"]
    assert fb.term_features(example_index) is fb.term_features(example_index)
    assert not np.allclose(first, second)  # one more label changed the fit
    # the default features need no word vectors
    assert "vectors" not in fb.term_features(example_index).families


def test_feedback_ranker(example_index):
    gains = example_index.gains
    ids = example_index.sentence_ids
    labels = {str(ids[i]): int(gains[i]) for i in range(12)}
    labels["not-a-sentence-of-vehicle"] = 3
    prior = build_method("TF-ISF-p")
    ranker = fb.FeedbackRanker(prior, labels)
    assert ranker.name == "TF-ISF-p+feedback"
    assert len(ranker.positions(example_index)) == 12
    expected = fb.feedback_scores(example_index, prior.score(example_index), {i: int(gains[i]) for i in range(12)})
    np.testing.assert_allclose(ranker.score(example_index), expected)
    assert ranker.explain(example_index, 3)["labels used"] == 12
    with pytest.raises(UsageError):
        fb.FeedbackRanker(prior, labels, prior_weight=-0.1)


# --------------------------------------------------------------------------------------------
# labels files


def test_read_jsonl_labels(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"sentence_id": "a", "label": "High Value"}\n\n'
                    '{"sentence_id": "b", "label": 0}\n'
                    '{"sentence_id": "a", "label": "potential value"}\n', encoding="utf-8")
    assert read_label_file(path) == {"a": 1, "b": 0}


@pytest.mark.parametrize("line, message", [
    ("not json", "line 1: is not valid JSON"),
    ("[1, 2]", "line 1: expected an object"),
    ('{"label": 1}', "line 1: field 'sentence_id'"),
    ('{"sentence_id": "a"}', "line 1: field 'label': missing"),
    ('{"sentence_id": "a", "label": "great"}', "line 1: field 'label': 'great' is not a label"),
    ('{"sentence_id": "a", "label": 7}', "line 1: field 'label'"),
])
def test_bad_jsonl_labels(tmp_path, line, message):
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_label_file(path)
    assert str(path) in str(info.value) and message in str(info.value).replace("record 'line 1'", "line 1")


def test_read_labels_from_a_term_zip(tmp_path):
    folder = example_data_path()
    path = tmp_path / "vehicle.zip"
    with zipfile.ZipFile(path, "w") as z:
        for f in folder.glob("vehicle-*.json"):
            z.write(f, f.name)
    labels = read_label_file(path)
    corpus = open_corpus()
    expected = {s.id: s.gain for s in corpus.term("vehicle").sentences if s.gain is not None}
    assert labels == expected and len(labels) == 47
    with pytest.raises(InputError, match="does not exist"):
        read_label_file(tmp_path / "missing.jsonl")


# --------------------------------------------------------------------------------------------
# the command line


def test_rank_with_feedback(tmp_path, example_index):
    gains = example_index.gains
    ids = example_index.sentence_ids
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"sentence_id": str(ids[i]), "label": int(gains[i])}) + "\n"
                            for i in range(15)), encoding="utf-8")
    result = CliRunner().invoke(cli, ["rank", "vehicle", "-q", "-m", "TF-ISF-p", "--feedback", str(path),
                                      "--format", "json", "--top", "0"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["method"] == "TF-ISF-p+feedback"
    assert "feedback: 15 labelled sentence(s) of 'vehicle'" in result.stderr
    ranker = fb.FeedbackRanker(build_method("TF-ISF-p"), {str(ids[i]): int(gains[i]) for i in range(15)})
    scores = ranker.score(example_index)
    order = rank_order(scores, ids.astype(str))
    assert [r["sentence_id"] for r in data["results"]] == [str(ids[i]) for i in order]


def test_rank_feedback_errors(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sentence_id": "x", "label": "maybe"}\n', encoding="utf-8")
    assert main(["rank", "vehicle", "-q", "--feedback", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert str(bad) in err and "'line 1'" in err and "'label'" in err and "Traceback" not in err
    other = tmp_path / "other.jsonl"
    other.write_text('{"sentence_id": "x", "label": "no value"}\n', encoding="utf-8")
    assert main(["rank", "vehicle", "-q", "-m", "TF-ISF-p", "--feedback", str(other)]) == 2
    out, err = capsys.readouterr()
    assert "none of its 1 labelled sentence(s) is a candidate of term 'vehicle'" in err


# --------------------------------------------------------------------------------------------
# the shipped default model


def test_shipped_default_model_file():
    from statinterp.learned.model import default_model_path, read_header

    path = default_model_path()
    assert path.is_file(), f"the default model is not installed at {path}"
    assert path.stat().st_size < 2 * 1024 * 1024
    header, _ = read_header(path)
    assert header["learner"] == "ensemble"
    assert len(header["trained_on"]) == 14
    assert "vectors" not in header["features"]["families"] and header["features"]["vectors"] == "off"
    assert not any(name.startswith("vectors:") for name in header["feature_names"])


@pytest.mark.slow
def test_rank_uses_the_default_model(example_index, recwarn):
    from statinterp.learned.model import default_ranker

    model = default_ranker()
    assert model.name == "learned:default"
    expected = rank(model, example_index)
    assert not [w for w in recwarn if "could not be computed" in str(w.message)]  # needs no word vectors
    data = json.loads(CliRunner().invoke(cli, ["rank", "vehicle", "-q", "--format", "json", "--top", "0"],
                                         catch_exceptions=False).stdout)
    assert data["method"] == "learned:default"
    assert [r["sentence_id"] for r in data["results"]] == [s.sentence_id for s in expected.rows()]
    # --method keeps any other choice
    data = json.loads(CliRunner().invoke(cli, ["rank", "vehicle", "-q", "-m", "BM25-p", "--format", "json"],
                                         catch_exceptions=False).stdout)
    assert data["method"] == "BM25-p"


@pytest.mark.slow
def test_feedback_ranker_with_the_default_model_prior(example_index):
    """A learned prior is scored from the features cached for the term: the same scores as its own."""
    from statinterp.learned.model import default_ranker

    model = default_ranker()
    gains = example_index.gains
    ids = example_index.sentence_ids
    ranker = fb.FeedbackRanker(model, {str(ids[i]): int(gains[i]) for i in range(10)})
    np.testing.assert_allclose(ranker.prior_scores(example_index), model.score(example_index))
    assert ranker.name == "learned:default+feedback"


def test_readme_first_ranking_is_what_rank_prints():
    """The manual's first ranking (`statinterp rank vehicle --top 3`, docs/guide/ranking.md; the
    README's first command) shows the default model's real output: its header line and the first
    ranked sentence's line."""

    readme = (REPO_ROOT / "docs" / "guide" / "ranking.md").read_text(encoding="utf-8")
    block = readme.split("$ statinterp rank vehicle --top 3\n", 1)[1].split("```", 1)[0].splitlines()
    out = CliRunner().invoke(cli, ["rank", "vehicle", "--top", "3", "-q"], catch_exceptions=False).stdout.splitlines()
    assert block[0] == out[0] == "learned:default ranking of 47 sentences for 'vehicle' (top 3)"
    assert block[2:5] == out[2:5]
