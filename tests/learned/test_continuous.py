"""Continuous review (statinterp.learned.feedback), the simulated reviewer
(statinterp.learned.feedback) and `statinterp simulate-review`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from statinterp.app.cli import cli
from statinterp.errors import UsageError
from statinterp.learned.feedback import (
    ContinuousModel,
    ContinuousSettings,
    TermRun,
    against,
    estimate_remaining,
    macro,
    reading_order,
    rerank_rest,
    simulate_term,
)
from statinterp.workflow import example_data_path


def _synthetic(n=120, seed=0):
    """A term whose first feature carries the gain; the prior is noise."""
    rng = np.random.default_rng(seed)
    gains = rng.choice([0, 0, 0, 1, 2, 3], size=n).astype(float)
    X = np.column_stack([gains + rng.normal(0, 0.3, n), rng.normal(size=(n, 4))])
    prior = rng.normal(size=n)
    return TermRun("synthetic", X, prior, gains, np.array([f"s{i:03d}" for i in range(n)]))


# --------------------------------------------------------------------------------------------
# the learner


def test_incremental_ridge_equals_a_fresh_fit():
    """Labels added one by one, replaced and removed give the same scores as one fit on the final labels."""
    run = _synthetic()
    s = ContinuousSettings(target="gain", alpha=30.0, prior_weight=0.3, prior_half_life=None)
    a = ContinuousModel(run.X, run.prior, s)
    for i in range(30):
        a.add({i: int(run.gains[i])})
    a.add({3: 3})  # relabelled
    a.remove([5, 6])
    final = {i: int(run.gains[i]) for i in range(30) if i not in (5, 6)} | {3: 3}
    b = ContinuousModel(run.X, run.prior, s)
    b.add(final)
    np.testing.assert_allclose(a.scores(), b.scores(), atol=1e-9)
    # and it agrees with an explicit ridge with intercept on the standardised features
    Z, rows = b.Z, np.array(sorted(final))
    y = np.array([final[r] for r in rows], float)
    Zc, yc = Z[rows] - Z[rows].mean(0), y - y.mean()
    coef = np.linalg.solve(Zc.T @ Zc + s.alpha * np.eye(Z.shape[1]), Zc.T @ yc)
    own = (Z - Z[rows].mean(0)) @ coef
    z = (own - own.mean()) / own.std()
    np.testing.assert_allclose(b.scores(), 0.3 * b.z_prior + 0.7 * z, atol=1e-9)


def test_nothing_to_learn_gives_the_prior_and_set_labels_syncs():
    run = _synthetic()
    m = ContinuousModel(run.X, run.prior)
    m.add({0: 2, 1: 2})
    np.testing.assert_array_equal(m.scores(), m.z_prior)
    m.set_labels({0: 2, 7: 0})
    assert m.labels == {0: 2.0, 7: 0.0}
    assert not np.array_equal(m.scores(), m.z_prior)
    with pytest.raises(UsageError, match="gain 5"):
        m.add({1: 5})
    with pytest.raises(UsageError, match="not a candidate position"):
        m.add({999: 1})


def test_refit_every_k_and_prior_decay():
    run = _synthetic()
    m = ContinuousModel(run.X, run.prior, ContinuousSettings(refit_every=5, prior_half_life=None))
    m.add({0: int(run.gains[0]), 1: 3, 2: 0})
    first = m.scores().copy()
    m.add({3: 3})  # 4 labels since... the last fit was at 3: not yet refitted
    np.testing.assert_array_equal(m.scores(), first)
    s = ContinuousSettings(prior_weight=0.5, prior_half_life=10)
    assert s.weight(0) == 0.5 and s.weight(10) == 0.25
    with pytest.raises(UsageError):
        ContinuousSettings(target="other")


def test_rerank_rest_keeps_what_was_read():
    order = np.array([4, 3, 2, 1, 0])
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    ids = np.array(["a", "b", "c", "d", "e"])
    assert rerank_rest(order, 2, scores, ids).tolist() == [4, 3, 0, 1, 2]
    assert rerank_rest(order, 0, np.zeros(5), ids).tolist() == [0, 1, 2, 3, 4]  # ties by id


# --------------------------------------------------------------------------------------------
# the stopping estimate


def test_estimate_brackets_a_known_remainder_and_suggests_stopping():
    rng = np.random.default_rng(1)
    n = 400
    score = rng.normal(size=n)
    valuable = rng.random(n) < 1 / (1 + np.exp(-(2 * score - 1)))
    gains = np.where(valuable, 3.0, 0.0)
    read = rng.random(n) < 0.5
    est = estimate_remaining(score, read, gains)
    truth = int(valuable[~read].sum())
    assert est.low <= truth <= est.high
    assert est.low < est.expected < est.high and est.unread == int((~read).sum())
    assert not est.stop
    # everything valuable read and the rest scores far below: stop
    score2 = np.concatenate([np.full(50, 2.0), np.full(50, -6.0)])
    gains2 = np.concatenate([np.tile([3.0, 0.0], 25), np.zeros(50)])
    read2 = np.arange(100) < 90
    est2 = estimate_remaining(score2, read2, gains2)
    assert est2.stop and est2.low == 0 and est2.p_none >= 0.9
    assert estimate_remaining(score2, np.ones(100, bool), gains2).to_dict()["unread"] == 0


def test_the_mixture_estimate_spans_the_read_time_and_the_current_curves():
    """Read-time scores that say nothing about value (P ~ 1/2 for the rest) and current scores that
    separate the read sentences (the rest scores low: P ~ 0): the mixture's interval reaches from
    the one curve's range to the other's, its expected count between the two."""
    rng = np.random.default_rng(3)
    n_read, n_rest = 40, 100
    gains = np.concatenate([np.tile([3.0, 0.0], n_read // 2), np.zeros(n_rest)])
    read = np.arange(n_read + n_rest) < n_read
    when_read = np.concatenate([rng.uniform(0.0, 1.0, n_read), np.zeros(n_rest)])
    now = np.concatenate([np.where(gains[:n_read] >= 2, 3.0, 0.0), np.full(n_rest, -2.0)])
    ests = {e: estimate_remaining(now, read, gains, score_when_read=when_read, estimator=e)
            for e in ("read-time", "current", "mixture")}
    low, high, mix = ests["current"], ests["read-time"], ests["mixture"]
    assert low.high < high.low  # the two curves disagree
    assert mix.low <= low.high and mix.high >= high.low
    assert low.expected < mix.expected < high.expected
    assert mix.expected == pytest.approx((low.expected + high.expected) / 2, rel=0.15)
    # without a read-time score every estimator is the one curve on the current scores
    same = [estimate_remaining(now, read, gains, estimator=e) for e in ("read-time", "current")]
    assert same[0] == same[1]
    with pytest.raises(UsageError, match="unknown estimator"):
        estimate_remaining(now, read, gains, estimator="nope")


# --------------------------------------------------------------------------------------------
# the simulated reviewer


def test_static_order_and_figures_by_hand():
    run = TermRun("t", np.zeros((6, 2)), np.array([6.0, 5, 4, 3, 2, 1]), np.array([3.0, 0, 0, 2, 0, 2]),
                  np.array(list("abcdef")))
    r = simulate_term(run, "static", checkpoint_every=0)
    # valuable at reading positions 1, 4, 6: 50 % of 3 = 2 found after 4, 80 % -> 3 after 6
    assert (r["valuable"], r["read_to_50"], r["read_to_80"], r["read_to_100"]) == (3, 4, 6, 6)
    assert r["share_to_80"] == 1.0 and r["found_after_10"] == 3 and r["coverage"] is None


def test_continuous_learns_what_static_cannot():
    run = _synthetic(200)
    static = simulate_term(run, "static", checkpoint_every=0)
    cont = simulate_term(run, "continuous", ContinuousSettings(prior_weight=0.0, alpha=30.0), checkpoint_every=20)
    button = simulate_term(run, "button-20", ContinuousSettings(prior_weight=0.0, alpha=30.0), checkpoint_every=0)
    assert cont["read_to_80"] < 0.7 * static["read_to_80"]
    assert button["read_to_80"] < static["read_to_80"]
    assert cont["checkpoints"] == 9 and 0.0 <= cont["coverage"] <= 1.0
    cmp = against({"synthetic": static}, [cont])
    assert cmp["better"] == 1 and cmp["reduction"] > 0.3
    m = macro([static, cont])
    assert m["terms"] == 2 and m["read_to_80"] == pytest.approx((static["read_to_80"] + cont["read_to_80"]) / 2)
    # what was read stays read: the order is a permutation, its first 20 identical under button-20
    order, _ = reading_order(run, "button-20", ContinuousSettings(prior_weight=0.0))
    first, _ = reading_order(run, "static")
    assert sorted(order.tolist()) == list(range(200)) and order[:20].tolist() == first[:20].tolist()


def test_simulate_review_cli_json_and_table():
    runner = CliRunner()
    res = runner.invoke(cli, ["simulate-review", "--data", str(example_data_path()), "-m", "TF-ISF-p",
                              "--format", "json", "--quiet"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout)
    assert payload["prior"] == "TF-ISF-p" and set(payload["policies"]) == {"static", "button-20", "continuous"}
    term = payload["policies"]["continuous"]["per_term"][0]
    for key in ("read_to_50", "share_to_80", "read_to_100", "found_after_10", "found_after_50", "coverage",
                "stop_suggested_at", "estimates"):
        assert key in term
    assert payload["against_static"]["continuous"]["terms"] == 1
    assert payload["estimator"] == "mixture"
    res = runner.invoke(cli, ["simulate-review", "--data", str(example_data_path()), "-m", "TF-ISF-p",
                              "--policy", "continuous", "--estimator", "read-time", "--format", "json", "--quiet"])
    assert res.exit_code == 0 and json.loads(res.stdout)["estimator"] == "read-time"
    res = runner.invoke(cli, ["simulate-review", "--data", str(example_data_path()), "--policy", "static",
                              "--quiet"])
    assert res.exit_code == 0 and "prior: learned:default" in res.stdout and "policy static" in res.stdout
    bad = runner.invoke(cli, ["simulate-review", "--data", str(example_data_path()), "--policy", "nope"])
    assert bad.exit_code == 2


def test_plain_reasons_from_the_features_that_moved_the_score():
    from statinterp.evaluation.explain import plain_reasons

    contributions = [
        {"feature": "cues:cue:means", "value": 1.0, "contribution": 0.9},
        {"feature": "citations:case", "value": 3.0, "contribution": 0.5},
        {"feature": "cues:cue:defined", "value": 1.0, "contribution": 0.4},  # same reason: once
        {"feature": "cues:cue:for_example", "value": 0.0, "contribution": 0.3},  # absent: no reason
        {"feature": "quotes:prov_run_tokens", "value": 6.0, "contribution": -0.2},  # pushed down: no reason
        {"feature": "cues:par_means", "value": 1.0, "contribution": 0.1},
    ]
    # cues:par_means names no fact of the sentence a reader can check: left to the components
    assert plain_reasons(contributions) == ["it says what the term means", "it cites case law"]
    assert plain_reasons([{"feature": "citations:case", "value": 1.0, "contribution": 0.1}]) == ["it cites case law"]


def test_explain_defaults_to_learned_default_with_reasons_first():
    from statinterp.app.cli import cli as app

    res = CliRunner().invoke(app, ["explain", "vehicle", "case-07-op1-p008-s0", "--quiet"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("learned:default: sentence case-07-op1-p008-s0")
    assert lines[3].startswith("Why it ranks here: ")
    assert res.stdout.index("Why it ranks") < res.stdout.index("Components")
    listed = CliRunner().invoke(app, ["methods"]).stdout
    assert "learned:default" in listed.split("Direct:")[0]
    ranked = CliRunner().invoke(app, ["rank", "vehicle", "-m", "learned:default", "-n", "1", "--quiet"])
    assert ranked.exit_code == 0 and "learned:default ranking" in ranked.stdout


@pytest.mark.parametrize("method", ["learned:default", "TF-ISF-p"])
def test_review_accepts_learned_default_by_name(method, monkeypatch, tmp_path):
    """`statinterp review -m learned:default` starts on the shipped model (the server is not run here)."""
    import statinterp.app.review.server as server

    started = {}

    def fake_serve(app, sock, url, open_browser=True):
        started.update(url=url)
        sock.close()

    monkeypatch.setattr(server, "serve", fake_serve)
    res = CliRunner().invoke(cli, ["review", "vehicle", "-m", method, "--port", "0", "--no-browser",
                                   "--labels", str(tmp_path / "l.sqlite")])
    assert res.exit_code == 0, res.output
    assert f"with {method}" in res.stderr and started["url"].endswith("/term/vehicle")
