"""``statinterp explain``: why a sentence is where it is under a method or a learned model.

:func:`explain_sentence` finds the candidate, ranks the term with the ranker and returns the
ranker's :meth:`~statinterp.rankers.base.Ranker.explain` components (base score, context
contributions, gates and thresholds; or a learned model's largest feature contributions)
together with the sentence's rank; :func:`format_explanation` prints them as indented text.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from statinterp.errors import UsageError, terminal_safe

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex
    from statinterp.rankers.base import Ranker

__all__ = ["candidate_position", "explain_sentence", "format_explanation", "plain_reasons"]

#: Plain-language reasons, each from the learned features that carry it (prefixes of feature
#: names). A reason is given when one of its features moved the score up and is present in the
#: sentence (value > 0; for standardised ``#z`` features: above the term's mean).
REASONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("it quotes the provision", ("quotes:prov_run", "citations:source_section", "citations:source_full")),
    ("it says what the term means", ("cues:cue:means", "cues:cue:defined", "cues:cue:refers_to",
                                  "cues:cue:copular_term", "cues:cue:term_within_meaning", "cues:cue:interpret")),
    ("it gives an example", ("cues:cue:for_example", "cues:cue:such_as", "cues:cue:includes",
                          "cues:cue:example_noun")),
    ("it applies the term to facts", ("cues:cue:because", "cues:cue:whether", "cues:cue:holding",
                                   "cues:cue:requires", "cues:cue:term_subject", "cues:cue:party_subject",
                                   "cues:cue:test", "cues:cue:factors", "cues:cue:determining")),
    ("it cites {n} case{s}", ("citations:case",)),
    ("its paragraph discusses the provision", ("scores:provision:", "citations:par_source", "neighbours:par:",
                                               "cues:par_")),
    ("its words match the term and its provision closely", ("scores:",)),
)


def candidate_position(index: TermIndex, sentence_id: str) -> int:
    """Position of the candidate with ``sentence_id`` in ``index`` (UsageError if absent)."""
    for i, s in enumerate(index.sentences):
        if s.id == sentence_id:
            return i
    raise UsageError(f"sentence {sentence_id!r} is not a candidate of term {index.key!r} "
                     f"({len(index)} candidates; `statinterp rank {index.term.query!r} --format csv` lists their ids)")


def explain_sentence(ranker: Ranker, index: TermIndex, sentence_id: str, top: int = 10) -> dict:
    """Rank, score and score components of one sentence under ``ranker`` (of a learned model,
    the ``top`` largest feature contributions)."""
    from statinterp.evaluation.ranking import rank

    i = candidate_position(index, sentence_id)
    ranking = rank(ranker, index)
    position = int(np.flatnonzero(ranking.order == i)[0]) + 1
    components = ranker.explain(index, i)
    reasons: list[str] = []
    for key, value in components.items():  # a learned model lists every feature's contribution, largest first
        if isinstance(value, list) and value and all(isinstance(v, dict) and "contribution" in v for v in value):
            reasons = plain_reasons(value)  # from every feature, not just the top shown
            components[key] = value[:top]
    s = index.sentences[i]
    return {
        "term": index.key,
        "sentence": s.id,
        "text": s.text,
        "label": s.label,
        "method": ranker.name,
        "rank": position,
        "candidates": len(index),
        "score": float(ranking.scores[i]),
        "reasons": reasons,
        "components": components,
    }


def plain_reasons(contributions: list[dict]) -> list[str]:
    """Plain-language reasons (:data:`REASONS`) from a learned model's feature contributions
    (``{"feature", "value", "contribution"}``, largest first): each reason once, in the order of
    its largest upward contribution."""
    out: list[tuple[float, str]] = []
    seen = set()
    for c in contributions:
        name, value, contribution = c["feature"], float(c["value"]), float(c["contribution"])
        if contribution <= 0 or value <= 0:
            continue
        for text, prefixes in REASONS:
            if text in seen or not any(name.startswith(p) for p in prefixes):
                continue
            if "{n}" in text:
                n = int(round(value))
                text = text.format(n=n, s="" if n == 1 else "s")
            seen.add(text)
            out.append((contribution, text))
            break
    return [t for _, t in sorted(out, key=lambda x: -x[0])]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return value


def _lines(value: Any, indent: int) -> list[str]:
    pad = "  " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{k}:")
                out.extend(_lines(v, indent + 1))
            else:
                out.append(f"{pad}{k}: {_scalar(v)}")
    elif isinstance(value, list):
        if value and all(isinstance(v, dict) and "feature" in v for v in value):
            w = max(len(v["feature"]) for v in value)
            out.append(f"{pad}{'feature':<{w}}  {'value':>10}  {'contribution':>12}")
            for v in value:
                out.append(f"{pad}{v['feature']:<{w}}  {v['value']:>10.4g}  {v['contribution']:>+12.4f}")
        else:
            for v in value:
                if isinstance(v, (dict, list)):
                    out.append(f"{pad}-")
                    out.extend(_lines(v, indent + 1))
                else:
                    out.append(f"{pad}- {_scalar(v)}")
    else:
        out.append(f"{pad}{_scalar(value)}")
    return out


def _scalar(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def format_explanation(expl: dict, fmt: str = "text") -> str:
    """The explanation as indented text or JSON."""
    expl = _plain(expl)
    if fmt == "json":
        return json.dumps(expl, indent=2, ensure_ascii=False) + "\n"
    head = [f"{expl['method']}: sentence {expl['sentence']} of {expl['term']!r} ranks {expl['rank']} of "
            f"{expl['candidates']} (score {expl['score']:.6g}; label: {expl['label'] or 'unlabelled'})",
            f"  {expl['text']}", ""]
    if expl.get("reasons"):
        head += ["Why it ranks here: " + "; ".join(expl["reasons"]) + ".", ""]
    head.append("Components:")
    return terminal_safe("\n".join(head + _lines(expl["components"], 1)), keep_newlines=True) + "\n"
