"""Found candidates checked against labelled data (``statinterp find --against``).

A labelled sentence is *found exactly* when a found candidate of the same case has the same
text after whitespace normalisation (runs of whitespace -> one space, ends trimmed); it is
*found* (containment) when a found candidate of the same case contains it or lies inside it.
Cases are paired by their whole text (whitespace-normalised), else by name, date and
citation.

Labels are carried over to the found candidates: a candidate takes the label of the labelled
sentence it equals, else of the labelled sentences it contains or lies inside (the highest
gain when there are several). Candidates with no label are *extra*; evaluating on the
labelled candidates with the extra ones removed gives condensed lists (the metrics drop
unlabelled sentences; ``statinterp evaluate`` says how many).
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from statinterp.corpus.dataset import LABEL_GAINS, TermData

__all__ = ["AgainstResult", "normalise", "compare_with_labelled", "labelled_tables"]

_SPACE_RE = re.compile(r"\s+")
#: A footnote's mark standing on a line of its own inside a labelled sentence ("... the exchanges\n7\n
#: violated section 4c ..."): the cleaning step takes it out of the stored text (docs/data-format.md,
#: "Cleaning"), so a sentence is also compared without it.
_LONE_MARK_RE = re.compile(r"\n\d{1,3}\n")
#: The label CAP's text gives a footnote ("4 .Available at ...", "16 . If some ..."): the cleaning step
#: stores the footnote without it, so a labelled sentence that opens a footnote is also compared without it.
_NOTE_LABEL_RE = re.compile(r"^\s*\d{1,3} \.\s*")


def normalise(text: str) -> str:
    """Whitespace runs to one space, ends trimmed."""
    return _SPACE_RE.sub(" ", text).strip()


@functools.lru_cache(maxsize=4096)
def _text_key(text: str) -> str:
    """Digest of a case's normalised text (memoised: the same cases are compared term after term)."""
    return hashlib.sha256(normalise(text).encode("utf-8", "surrogatepass")).hexdigest()


def _case_keys(term: TermData) -> tuple[dict[str, str], dict[tuple[str, str, str], str]]:
    by_text, by_meta = {}, {}
    for cid, case in term.cases.items():
        by_text[_text_key(case.text)] = cid
        by_meta[(case.short_name or case.name, case.date, case.citation)] = cid
    return by_text, by_meta


@dataclass
class AgainstResult:
    """How the found candidates of one term compare with its labelled sentences."""

    term: str
    labelled: int = 0  # labelled sentences
    found_exact: int = 0  # ... found as exactly the same sentence
    found_contained: int = 0  # ... found inside or around a candidate (includes the exact ones)
    candidates: int = 0  # found candidates
    labels_carried: int = 0  # candidates that received a label
    extra: int = 0  # candidates without a label
    cases_unpaired: int = 0  # labelled cases with no found case
    missed: list[str] = field(default_factory=list)  # labelled sentence ids not found (containment)
    labels: dict[str, str] = field(default_factory=dict)  # found sentence id -> carried label

    def as_dict(self) -> dict:
        return {
            "term": self.term, "labelled": self.labelled, "found_exact": self.found_exact,
            "found_contained": self.found_contained, "candidates": self.candidates,
            "labels_carried": self.labels_carried, "extra": self.extra, "cases_unpaired": self.cases_unpaired,
            "exact_rate": self.found_exact / self.labelled if self.labelled else None,
            "contained_rate": self.found_contained / self.labelled if self.labelled else None,
            "missed": self.missed,
        }

    def summary(self) -> str:
        def rate(n):
            return f"{100 * n / self.labelled:.1f}%" if self.labelled else "n/a"
        return (f"{self.term}: {self.found_contained} of {self.labelled} labelled sentences found "
                f"({rate(self.found_contained)}; {self.found_exact} exactly the same, {rate(self.found_exact)}); "
                f"labels carried to {self.labels_carried} of {self.candidates} candidates; {self.extra} extra "
                f"candidate(s) without a label")


def compare_with_labelled(found: TermData, labelled: TermData) -> AgainstResult:
    """Compare ``found`` (unlabelled candidates) with ``labelled`` and carry its labels over."""
    result = AgainstResult(found.key)
    labelled_sentences = [s for s in labelled.sentences if s.label is not None]
    result.labelled = len(labelled_sentences)
    result.candidates = len(found.sentences)
    text_key, meta_key = _case_keys(found)
    # labelled case id -> found case id
    pair: dict[str, str | None] = {}
    for cid, case in labelled.cases.items():
        key = _text_key(case.text)
        pair[cid] = text_key.get(key) or meta_key.get((case.short_name or case.name, case.date, case.citation))
    result.cases_unpaired = sum(
        1 for cid in {s.case_id for s in labelled_sentences} if pair.get(cid) is None)

    found_by_case: dict[str, list[tuple[str, str]]] = {}
    for s in found.sentences:
        found_by_case.setdefault(s.case_id, []).append((s.id, normalise(s.text)))
    best: dict[str, str] = {}  # found id -> label (exact matches first, then containment)
    exact_of: dict[str, str] = {}
    for s in labelled_sentences:
        # as labelled, without a lone mark, and without a footnote's label
        targets = {normalise(s.text), normalise(_LONE_MARK_RE.sub("\n", s.text)),
                   normalise(_NOTE_LABEL_RE.sub("", s.text))}
        candidates = found_by_case.get(pair.get(s.case_id) or "", [])
        exact = [fid for fid, text in candidates if text in targets]
        around = [fid for fid, text in candidates if text not in targets
                  and any(target in text or text in target for target in targets)]
        if exact:
            result.found_exact += 1
            for fid in exact:
                exact_of[fid] = s.label  # type: ignore[assignment]
        if exact or around:
            result.found_contained += 1
        else:
            result.missed.append(s.id)
        for fid in around:
            if fid not in best or LABEL_GAINS[s.label] > LABEL_GAINS[best[fid]]:  # type: ignore[index]
                best[fid] = s.label  # type: ignore[assignment]
    best.update(exact_of)  # an exact match wins over containment
    result.labels = best
    result.labels_carried = len(best)
    result.extra = result.candidates - result.labels_carried
    return result


def labelled_tables(tables: dict[str, dict[str, Any]], labels: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Copy of the found tables (``find``'s: cases typed, the other kinds records) with ``label``
    set on the sentences that carry one (None elsewhere)."""
    out = {kind: dict(records) for kind, records in tables.items()}
    out["sentence"] = {sid: {**rec, "label": labels.get(sid)} for sid, rec in tables["sentence"].items()}
    return out
