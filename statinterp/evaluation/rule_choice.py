"""Choosing switchable rules on some terms and measuring them on terms held apart.

Rules chosen on the terms they are measured on flatter themselves: a rule written for a layout
that only one term shows helps that term in-sample and nothing else. :func:`held_apart`
measures the rule choice itself: the terms are cut into folds (:func:`folds`), the rules are
chosen on the other folds' terms (:func:`choose_rules`) and measured on the fold's own, and the
held-apart scores are summed over the folds: what the procedure gives on terms it never saw,
which is what it predicts for new terms.

A *score* is a tuple of counts (say, sentences found exactly and sentences found), summed
element-wise over terms and compared lexicographically (the first count decides, the next ones
break its ties). Everything is deterministic: the folds follow the terms' sorted order, the rules
are tried in the order given, ties go to the rule tried first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

__all__ = ["Score", "choose_rules", "folds", "held_apart", "total_score"]

Score = tuple[int, ...]
#: ``score(rules, term)``: the score of ``term`` with the set of rules ``rules`` switched on.
Scorer = Callable[[frozenset[str], str], Score]


def total_score(score: Scorer, rules: frozenset[str], terms: Iterable[str]) -> Score:
    """``score(rules, term)`` summed element-wise over ``terms`` (``()`` for no terms)."""
    parts = [score(rules, term) for term in terms]
    return tuple(sum(values) for values in zip(*parts, strict=True)) if parts else ()


def choose_rules(rules: Sequence[str], score: Scorer, terms: Sequence[str]) -> tuple[frozenset[str], list[dict]]:
    """The rules that ablation keeps on ``terms``, and the ablation's steps.

    Each rule is taken out of the full set of ``rules`` alone; it is kept when that lowers the total
    score on ``terms`` (:func:`total_score`): a rule is kept only when it earns its place on these
    terms, given all the others. A rule whose work another rule also does (taking either out alone
    changes nothing) is dropped with its twin: the chosen set is scored as a whole, so such a loss
    shows. Each step is ``{"rule": name, "score": total without it}``; the first is ``{"rule": None,
    "score": total with every rule}``. The rule sets scored are the same whatever ``terms`` are (the
    full set and the full set less one rule), so choices on many term subsets share their scores.
    """
    every = frozenset(rules)
    full = total_score(score, every, terms)
    steps: list[dict] = [{"rule": None, "score": full}]
    steps += [{"rule": rule, "score": total_score(score, every - {rule}, terms)} for rule in rules]
    return frozenset(step["rule"] for step in steps[1:] if step["score"] < full), steps


def folds(terms: Iterable[str], k: int) -> list[list[str]]:
    """``terms`` in sorted order dealt into ``k`` folds: the i-th term goes to fold ``i % k``."""
    ordered = sorted(terms)
    if not 1 < k <= len(ordered):
        raise ValueError(f"cannot deal {len(ordered)} terms into {k} folds (2 to {len(ordered)} folds)")
    return [ordered[i::k] for i in range(k)]


def held_apart(rules: Sequence[str], score: Scorer, terms: Sequence[str], k: int) -> dict:
    """The rule choice (:func:`choose_rules`) measured on terms held apart from it.

    For each of the ``k`` folds (:func:`folds`): the rules chosen on the other folds' terms and
    their score on the fold's terms. Returns ``{"folds": [{"held_apart": terms, "chosen": sorted
    rules, "steps": ..., "score": per held-apart term}], "score": summed over every term (each
    scored once, by the rules chosen without it)}``.
    """
    out = []
    per_term: dict[str, Score] = {}
    for fold in folds(terms, k):
        training = [t for t in sorted(terms) if t not in fold]
        chosen, steps = choose_rules(rules, score, training)
        scores = {t: score(chosen, t) for t in fold}
        per_term.update(scores)
        out.append({"held_apart": fold, "chosen": [r for r in rules if r in chosen], "steps": steps,
                    "score": scores})
    return {"folds": out, "score": total_score(lambda _, t: per_term[t], frozenset(), sorted(terms))}
