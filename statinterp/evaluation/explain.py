"""``statinterp explain``: why a sentence is where it is under a method or a learned model.

:func:`explain_sentence` finds the candidate, ranks the term with the ranker and returns the
ranker's :meth:`~statinterp.rankers.base.Ranker.explain` components (base score, context
contributions, gates and thresholds; or a learned model's largest feature contributions)
together with the sentence's rank; :func:`format_explanation` prints them as indented text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from statinterp.errors import UsageError

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex
    from statinterp.rankers.base import Ranker

__all__ = ["candidate_position", "explain_sentence", "format_explanation", "plain_reasons"]

#: Plain-language reasons, each a statement about the sentence's text that its features can show,
#: as ``(text, kind, features)``; a reason is given only when its features point the way it says
#: and moved the score up (:func:`plain_reasons`). ``features``: exact names, or prefixes ending in
#: ``:``. Kinds:
#:
#: * ``present``: a flag found in the text (a cue, a citation): some feature of the reason is
#:   present (value > 0) and moved the score up (contribution > 0);
#: * ``above``: an overlap standardised within the term (``#z``): *every* feature of the reason is
#:   above the term's mean (value > 0: above the term's typical sentence, none pointing the other
#:   way) and together they moved the score up;
#: * ``quote``: as ``present``, and the text shows it: a quoted span of the sentence shares a run of
#:   at least :data:`QUOTE_RUN_TOKENS` words with the provision (``evidence["quotes_provision"]``,
#:   computed by the caller from the text).
#:
#: Other features (raw scores, the paragraph's or neighbours' similarity, gates, structure) name no
#: fact a reader can check against the text: they are left to the score components.
REASONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("it quotes the provision", "quote", ("quotes:prov_run_quote", "quotes:prov_run_sentence",
                                          "quotes:prov_run_tokens", "quotes:prov_run_of_sentence")),
    ("it cites the provision", "present", ("citations:source_section", "citations:source_full")),
    ("it says what the term means", "present", ("cues:cue:means", "cues:cue:defined", "cues:cue:refers_to",
                                                "cues:cue:copular_term", "cues:cue:term_within_meaning",
                                                "cues:cue:interpret")),
    ("it gives an example", "present", ("cues:cue:for_example", "cues:cue:such_as", "cues:cue:includes",
                                        "cues:cue:example_noun")),
    ("it applies the term to facts", "present", ("cues:cue:because", "cues:cue:whether", "cues:cue:holding",
                                                 "cues:cue:requires", "cues:cue:term_subject",
                                                 "cues:cue:party_subject", "cues:cue:test", "cues:cue:factors",
                                                 "cues:cue:determining")),
    ("it cites case law", "present", ("citations:case",)),
    ("its paragraph cites the provision", "present", ("citations:par_source_section", "citations:par_source_full")),
    ("its words match the provision more closely than the term's average sentence", "above",
     ("scores:provision:",)),
    ("its words match the term more closely than the term's average sentence", "above",
     ("scores:TF-ISF#z", "scores:BM25#z", "scores:QLLM#z")),
)
#: A quoted span "quotes the provision" when it shares a run of at least this many words with it.
QUOTE_RUN_TOKENS = 3


def _carries(name: str, features: tuple[str, ...]) -> bool:
    return any(name.startswith(f) if f.endswith(":") else name == f for f in features)


def candidate_position(index: TermIndex, sentence_id: str) -> int:
    """Position of the candidate with ``sentence_id`` in ``index`` (UsageError if absent)."""
    for i, s in enumerate(index.sentences):
        if s.id == sentence_id:
            return i
    raise UsageError(f"sentence {sentence_id!r} is not a candidate of term {index.key!r} "
                     f"({len(index)} candidates; `statinterp rank {index.term.query!r} --format csv` lists their ids)")


def explain_sentence(ranker: Ranker, index: TermIndex, sentence_id: str, top: int = 10,
                     evidence: Callable[[str, str], dict[str, bool]] | None = None) -> dict:
    """Rank, score and score components of one sentence under ``ranker`` (of a learned model,
    the ``top`` largest feature contributions, and the plain reasons, :func:`plain_reasons`).
    ``evidence(sentence_text, provision_text)``: what the text shows for the reasons that need it
    (``statinterp.learned.sentence_patterns.reason_evidence``); without it they are not given."""
    from statinterp.evaluation.ranking import rank

    i = candidate_position(index, sentence_id)
    ranking = rank(ranker, index)
    position = int(np.flatnonzero(ranking.order == i)[0]) + 1
    components = ranker.explain(index, i)
    reasons: list[str] = []
    for key, value in components.items():  # a learned model lists every feature's contribution, largest first
        if isinstance(value, list) and value and all(isinstance(v, dict) and "contribution" in v for v in value):
            provision = index.term.provision
            seen = evidence(index.sentences[i].text, provision.text if provision else "") if evidence else {}
            reasons = plain_reasons(value, seen)  # from every feature, not just the top shown
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


def plain_reasons(contributions: list[dict], evidence: dict[str, bool] | None = None) -> list[str]:
    """Plain-language reasons (:data:`REASONS`) from a learned model's feature contributions
    (``{"feature", "value", "contribution"}``, every feature): each reason whose features point the
    way it says and moved the score up, in the order of their contribution, largest first.
    ``evidence``: what the caller read in the text (``quotes_provision``); a ``quote`` reason needs it."""
    evidence = evidence or {}
    out: list[tuple[float, str]] = []
    for text, kind, features in REASONS:
        mine = [(float(c["value"]), float(c["contribution"])) for c in contributions
                if _carries(c["feature"], features)]
        if not mine:
            continue
        if kind == "above":
            if all(value > 0 for value, _ in mine) and sum(c for _, c in mine) > 0:
                out.append((sum(c for _, c in mine), text))
            continue
        up = [c for value, c in mine if value > 0 and c > 0]
        if not up or (kind == "quote" and not evidence.get("quotes_provision")):
            continue
        out.append((max(up), text))
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
    """The explanation as indented text or JSON, the sentence's text as it is (a terminal's
    caller escapes control characters: ``statinterp explain`` does)."""
    expl = _plain(expl)
    if fmt == "json":
        return json.dumps(expl, indent=2, ensure_ascii=False) + "\n"
    head = [f"{expl['method']}: sentence {expl['sentence']} of {expl['term']!r} ranks {expl['rank']} of "
            f"{expl['candidates']} (score {expl['score']:.6g}; label: {expl['label'] or 'unlabelled'})",
            f"  {expl['text']}", ""]
    if expl.get("reasons"):
        head += ["Why it ranks here: " + "; ".join(expl["reasons"]) + ".", ""]
    head.append("Components:")
    return "\n".join(head + _lines(expl["components"], 1)) + "\n"
