"""The annotated data set's own term zips (or folders of ``TERM-*.json``), read back as cases.

Each term is loaded and validated by :func:`statinterp.corpus.dataset.load_corpus` (a problem
there stops with one line: a data-set file is validated as a whole), its cases as
:class:`~statinterp.corpus.dataset.Case`. Every case becomes a
record whose id is the case's CAP id (``original_id``; the data-set id when it has none), so a
case shared by several terms is stored once. Its head matter is the case text before its
first opinion; each opinion's lines are its paragraphs; text outside the listed opinions (the
data set omits some opinions) becomes an opinion of type ``unlisted``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from statinterp.corpus.dataset import load_corpus
from statinterp.sources.fields import split_lines
from statinterp.sources.records import CaseRecord, OpinionRecord, SkippedRecord
from statinterp.sources.registry import SourceFormat, register, zip_names


def _split_case(text: str, ops: list) -> tuple[str, tuple[OpinionRecord, ...]]:
    """Head matter and opinions of a case text. The data set lists only some opinions of some
    cases (a concurrence may be in the case text but not in the opinion file): text between or
    after the listed opinions becomes an opinion of type ``unlisted``, so the stored case keeps
    its whole text."""
    placed = sorted((text.find(o.text), i) for i, o in enumerate(ops) if o.text and text.find(o.text) >= 0)
    if not placed:
        return text, tuple(OpinionRecord(o.type or "majority", o.author or None, split_lines(o.text)) for o in ops)
    out: list[OpinionRecord] = []
    head = text[:placed[0][0]].rstrip("\n")
    pos = placed[0][0]
    for start, i in placed:
        if start < pos:  # overlaps the previous opinion: keep it as listed
            start = pos
        gap = text[pos:start].strip("\n")
        if gap.strip():
            out.append(OpinionRecord("unlisted", None, split_lines(gap)))
        o = ops[i]
        out.append(OpinionRecord(o.type or "majority", o.author or None, split_lines(o.text)))
        pos = max(pos, start + len(o.text))
    tail = text[pos:].strip("\n")
    if tail.strip():
        out.append(OpinionRecord("unlisted", None, split_lines(tail)))
    return head, tuple(out)


def read_dataset(path: Path) -> Iterator[CaseRecord | SkippedRecord]:
    corpus = load_corpus(path)
    for term in corpus:
        by_case: dict[str, list] = {}
        for op in term.opinions.values():
            by_case.setdefault(op.case_id, []).append(op)
        for cid in sorted(term.cases):
            case = term.cases[cid]
            ops = sorted(by_case.get(cid, []), key=lambda o: (o.position if o.position is not None else 1 << 30, o.id))
            head, opinions = _split_case(case.text, ops)
            yield CaseRecord(
                source="dataset", source_id=case.original_id if case.original_id.strip() else cid,
                name=case.name, name_abbreviation=case.short_name, decision_date=case.date, docket_number="",
                citations=(("official", case.citation),) if case.citation else (),
                court=case.court, jurisdiction=case.jurisdiction, head_matter=head,
                judges="\n".join(case.judges), parties="\n".join(case.parties),
                attorneys="\n".join(case.attorneys), opinions=opinions,
            )


def _sniff(path: Path) -> bool:
    if path.name.lower().endswith(".zip"):
        return any(n.endswith("-case.json") for n in zip_names(path))
    return path.name.endswith("-case.json")


register(SourceFormat(
    "dataset", "the annotated data set's term zips or folders of TERM-*.json", lambda p: read_dataset(Path(p.path)),
    _sniff, group=lambda path: not path.name.lower().endswith(".zip"),
    files=lambda folder: sorted(p for p in folder.glob("*.json") if not p.is_dir()), order=20))
