"""Plain reasons are true (issue 36): a reason is given only when its features point the way it
says, and the statements a reader can check against the text hold there."""

from __future__ import annotations

import pytest

from statinterp.evaluation.explain import REASONS, plain_reasons
from statinterp.learned.sentence_patterns import cites_provision, quotes_provision, reason_evidence

#: Each reason's features, by its text.
FEATURES = {text: (kind, features) for text, kind, features in REASONS}
MATCH_PROVISION = "its words match the provision more closely than the term's average sentence"
MATCH_TERM = "its words match the term more closely than the term's average sentence"


def _carried(contributions: list[dict], features: tuple[str, ...]) -> list[dict]:
    return [c for c in contributions
            if any(c["feature"].startswith(f) if f.endswith(":") else c["feature"] == f for f in features)]


def contradictions(reasons: list[str], contributions: list[dict], text: str, provision: str,
                   citation: str) -> list[str]:
    """The reasons of ``reasons`` that a feature or the text contradicts."""
    bad = []
    for reason in reasons:
        kind, features = FEATURES[reason]
        mine = _carried(contributions, features)
        if kind == "above":
            if not mine or any(c["value"] <= 0 for c in mine) or sum(c["contribution"] for c in mine) <= 0:
                bad.append(f"{reason}: {[(c['feature'], c['value'], c['contribution']) for c in mine]}")
        elif not any(c["value"] > 0 and c["contribution"] > 0 for c in mine):
            bad.append(f"{reason}: no feature of it present and pushing up")
        if reason == "it quotes the provision" and not quotes_provision(text, provision):
            bad.append(f"{reason}: no quoted span shares 3 words with the provision")
        if reason == "it cites the provision" and not any(cites_provision(text, citation)):
            bad.append(f"{reason}: the text does not cite {citation!r}")
    return bad


def test_the_issues_contradictions_are_not_given():
    """The #1 vehicle sentence (a dictionary quote): the provision overlap below the term's mean,
    the model rewarding it; two quotation marks of a dictionary."""
    contributions = [
        {"feature": "scores:provision:BM25#z", "value": -0.48, "contribution": 0.30},
        {"feature": "scores:provision:TF-ISF#z", "value": 0.20, "contribution": 0.05},
        {"feature": "scores:BM25-p#z", "value": 1.2, "contribution": 0.2},  # a raw mix: left to the components
        {"feature": "quotes:prov_run_quote", "value": 0.05, "contribution": 0.4},
        {"feature": "cues:cue:means", "value": 1.0, "contribution": 0.1},
    ]
    text = 'The dictionary defines "vehicle" as "a means of carrying or conveying persons or things."'
    provision = "No vehicles in the park. No vehicle may be taken into the park."
    evidence = reason_evidence(text, provision)
    assert evidence == {"quotes_provision": False}
    assert plain_reasons(contributions, evidence) == ["it says what the term means"]
    quoting = 'The ordinance says "no vehicle may be taken into the park" and nothing more.'
    assert plain_reasons(contributions, reason_evidence(quoting, provision))[0] == "it quotes the provision"
    above = [{"feature": "scores:provision:BM25#z", "value": 0.9, "contribution": 0.3},
             {"feature": "scores:provision:TF-ISF#z", "value": 0.4, "contribution": -0.1}]
    assert plain_reasons(above) == [MATCH_PROVISION]
    rewarded_low = [{"feature": "scores:provision:BM25#z", "value": -0.64, "contribution": 0.3}]
    assert plain_reasons(rewarded_low) == []  # the model rewards low overlap: no "match" reason
    assert plain_reasons([{"feature": "scores:BM25#z", "value": 0.5, "contribution": 0.2},
                          {"feature": "scores:QLLM#z", "value": 0.1, "contribution": 0.1}]) == [MATCH_TERM]


@pytest.mark.slow
def test_no_reason_contradicts_its_features_on_every_sentence_of_the_shared_terms(real_prepared):
    from statinterp.learned.model import default_ranker

    ranker = default_ranker()
    total = given = terms = 0
    bad: list[str] = []
    for index in real_prepared:
        terms += 1
        X = ranker.features(index).X
        provision = index.term.provision
        prov_text, citation = (provision.text, provision.citation) if provision else ("", "")
        for i, sentence in enumerate(index.sentences):
            values = X[i]
            contributions = [{"feature": n, "value": float(v), "contribution": float(c)} for n, v, c in
                             zip(ranker.feature_names, values, ranker.contributions(X, i), strict=True)]
            reasons = plain_reasons(contributions, reason_evidence(sentence.text, prov_text))
            total += 1
            given += len(reasons)
            bad += [f"{index.key} {sentence.id}: {b}" for b in contradictions(reasons, contributions, sentence.text,
                                                                              prov_text, citation)]
    print(f"{given} reasons over {total} sentences of {terms} terms; {len(bad)} contradict their features")
    assert terms == 14 and total > 1000 and given > 0
    assert bad == []
