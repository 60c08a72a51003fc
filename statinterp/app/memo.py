"""A research memo of a term: its provision, the sentences that explain it with their pin cites,
grouped by jurisdiction and court level, and a table of authorities (``statinterp memo``, the
review page's "Export memo").

:func:`build_memo` chooses the sentences: those the reviewer labelled high or certain value
(their labels, :mod:`statinterp.corpus.labels`), in the ranking's order; where the term has
no such label, the top ``top`` sentences of the ranking, and the memo says that they are
unreviewed. Each entry carries its pin cite (:func:`statinterp.corpus.pin_cites.sentence_pin_cite`),
a link back to its opinion on CourtListener (:func:`opinion_link`) and its court's authority
(:func:`statinterp.corpus.authority.court_authority`). :func:`write_memo` writes it as Word
(``.docx``, python-docx), Markdown (``.md``) or HTML (``.html``), by the file's extension.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from statinterp.corpus.authority import LEVEL_ORDER, court_authority
from statinterp.corpus.pin_cites import case_cite, parse_cite, sentence_pin_cite
from statinterp.errors import UsageError

if TYPE_CHECKING:
    from statinterp.corpus.dataset import Case, TermData
    from statinterp.evaluation.ranking import Ranking

__all__ = ["FORMATS", "Memo", "MemoEntry", "build_memo", "memo_bytes", "opinion_link", "write_memo"]

#: The labels a memo quotes, highest first.
MEMO_LABELS = ("high value", "certain value")
#: Output formats by file extension.
FORMATS = {".docx": "docx", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}
COURTLISTENER = "https://www.courtlistener.com"
_LEVEL_HEADINGS = {"supreme": "Supreme courts", "appellate": "Intermediate appellate courts",
                   "trial": "Trial courts", "": "Courts of unknown level"}


def opinion_link(case: Case) -> str:
    """A link to the case's opinion: CourtListener's page of the cluster for a CourtListener case,
    else CourtListener's citation lookup (``/c/REPORTER/VOLUME/PAGE/``) of its official citation
    in a reporter eyecite knows; ``""`` otherwise."""
    if case.source == "courtlistener" and case.original_id.isdigit():
        slug = re.sub(r"[^a-z0-9]+", "-", (case.short_name or case.name).lower()).strip("-") or "opinion"
        return f"{COURTLISTENER}/opinion/{case.original_id}/{slug[:60].strip('-')}/"
    parsed = parse_cite(case.citation) if case.citation.strip() else None
    if parsed is None or not parsed.kind or not parsed.volume.isdigit():  # a reporter eyecite does not know: none
        return ""
    reporter = parsed.reporter.replace(" ", "%20")
    return f"{COURTLISTENER}/c/{reporter}/{parsed.volume}/{parsed.page}/"


@dataclass(frozen=True)
class MemoEntry:
    """One quoted sentence: its number in the memo, text, pin cite, link, label (``None``:
    unreviewed) and rank, and its case's name, citation (no pin), court, date and authority."""

    number: int
    sentence_id: str
    text: str
    pin_cite: str
    link: str
    label: str | None
    rank: int
    case_id: str
    case_cite: str
    case_name: str
    court: str
    date: str
    jurisdiction: str  # "federal", a state's name, or "" (unknown)
    level: str  # supreme, appellate, trial, "" (unknown)


@dataclass
class Memo:
    """A term's research memo (:func:`build_memo`)."""

    term: str
    provision_citation: str
    provision_text: str
    basis: str  # how the sentences were chosen, for the reader
    reviewed: bool  # the sentences are the reviewer's labelled ones (else the top ranked, unreviewed)
    method: str
    entries: list[MemoEntry] = field(default_factory=list)
    filters: str = ""  # the case filter the sentences were found with ("": none)

    def groups(self) -> list[tuple[str, list[tuple[str, list[MemoEntry]]]]]:
        """The entries by jurisdiction (federal first, then the states by name, unknown last), each by
        court level (supreme, appellate, trial, unknown), in memo order within."""
        def where(j: str) -> tuple[int, str]:
            return (0, "") if j == "federal" else (2, "") if not j else (1, j)

        out = []
        for jurisdiction in sorted({e.jurisdiction for e in self.entries}, key=where):
            heading = ("Federal courts" if jurisdiction == "federal" else
                       f"{jurisdiction} courts" if jurisdiction else "Courts of unknown jurisdiction")
            mine = [e for e in self.entries if e.jurisdiction == jurisdiction]
            levels = sorted({e.level for e in mine}, key=lambda lv: LEVEL_ORDER.get(lv, 9))
            out.append((heading, [(_LEVEL_HEADINGS[lv], [e for e in mine if e.level == lv]) for lv in levels]))
        return out

    def authorities(self) -> list[tuple[str, str, list[int]]]:
        """The table of authorities: each case quoted (its citation without pin, its link) with the
        numbers of the entries that quote it, alphabetical by case name."""
        cited: dict[str, tuple[str, str, list[int]]] = {}
        for e in self.entries:
            cited.setdefault(e.case_id, (e.case_cite, e.link, []))[2].append(e.number)
        return sorted(cited.values(), key=lambda item: (item[0].lower(), item[0]))


def build_memo(term: TermData, ranking: Ranking, labels: Mapping[str, str] | None = None, *, top: int = 20,
               filters: str = "") -> Memo:
    """The memo of ``term``: the sentences labelled high or certain value in ``labels`` (sentence id
    -> label; the reviewer's), in ``ranking``'s order; without any, ``ranking``'s top ``top``
    sentences, marked unreviewed. Renumbered 1, 2, ... in the order the memo shows them
    (:meth:`Memo.groups`)."""
    rows = ranking.rows()
    known = {r.sentence_id for r in rows}
    labels = {sid: lab for sid, lab in (labels or {}).items() if sid in known}  # a stale label names no sentence
    chosen_labels = {sid: lab for sid, lab in labels.items() if lab in MEMO_LABELS}
    if chosen_labels:
        picked = [r for r in rows if r.sentence_id in chosen_labels]
        n_high = sum(1 for lab in chosen_labels.values() if lab == "high value")
        basis = (f"The {len(picked)} sentences the reviewer labelled high value ({n_high}) or certain value "
                 f"({len(picked) - n_high}), of {len(labels)} labelled, in the order of {ranking.method}.")
    else:
        picked = rows[:top]
        basis = (f"No sentence of this term is labelled high or certain value yet: these are the top {len(picked)} "
                 f"of {len(rows)} sentences as ranked by {ranking.method}, unreviewed. Review them (statinterp "
                 "review) before relying on them.")
    sentences = {s.id: s for s in term.sentences}
    entries = []
    for r in picked:
        s = sentences[r.sentence_id]
        case = term.cases[s.case_id]
        authority = court_authority(case.court, case.jurisdiction)
        entries.append(MemoEntry(0, s.id, s.text, sentence_pin_cite(term, s), opinion_link(case),
                                 chosen_labels.get(s.id) if chosen_labels else None, r.rank, case.id, case_cite(case),
                                 case.short_name or case.name, case.court, case.date, authority.jurisdiction,
                                 authority.level))
    provision = term.provision
    memo = Memo(term.query, provision.citation if provision else "", provision.text if provision else "", basis,
                bool(chosen_labels), ranking.method, entries, filters)
    ordered = [e for _, levels in memo.groups() for _, group in levels for e in group]
    memo.entries = [_renumbered(e, k) for k, e in enumerate(ordered, start=1)]
    return memo


def _renumbered(entry: MemoEntry, number: int) -> MemoEntry:
    from dataclasses import replace

    return replace(entry, number=number)


# ------------------------------------------------------------------------------------------------
# Writers


def _head_lines(memo: Memo) -> list[tuple[str, str]]:
    """(label, value) lines under the title."""
    lines = [("Provision", memo.provision_citation or "none given")]
    if memo.filters:
        lines.append(("Cases searched", memo.filters))
    lines.append(("Sentences", memo.basis))
    return lines


def memo_markdown(memo: Memo) -> str:
    out = [f"# Research memo: “{memo.term}”", ""]
    for label, value in _head_lines(memo):
        out.append(f"**{label}:** {value}  ")
    out.append("")
    if memo.provision_text:
        out += ["## The provision", "", *[f"> {line}" if line else ">" for line in memo.provision_text.splitlines()],
                ""]
    out += ["## What the courts say", ""]
    for heading, levels in memo.groups():
        out += [f"### {heading}", ""]
        for level, entries in levels:
            out += [f"#### {level}", ""]
            for e in entries:
                label = f" *({e.label})*" if e.label else ""
                link = f" [opinion]({e.link})" if e.link else ""
                out.append(f"{e.number}. “{_one_line(e.text)}” {e.pin_cite}.{label}{link}")
            out.append("")
    out += ["## Table of authorities", "", "| Case | Quoted in |", "|---|---|"]
    for cite, link, numbers in memo.authorities():
        shown = f"[{_md_cell(cite)}]({link})" if link else _md_cell(cite)
        out.append(f"| {shown} | {', '.join(map(str, numbers))} |")
    return "\n".join(out) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


_CSS = ("body{font-family:Georgia,serif;max-width:46em;margin:2em auto;line-height:1.45;color:#111}"
        "blockquote{border-left:3px solid #999;margin-left:0;padding-left:1em;color:#333}"
        "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.3em .6em;text-align:left}"
        ".label{color:#555;font-style:italic}")


def memo_html(memo: Memo) -> str:
    e_ = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>Research memo: {e_(memo.term)}</title><style>{_CSS}</style></head><body>",
           f"<h1>Research memo: “{e_(memo.term)}”</h1>", '<dl class="head">']
    for label, value in _head_lines(memo):
        out.append(f"<dt>{e_(label)}</dt><dd>{e_(value)}</dd>")
    out.append("</dl>")
    if memo.provision_text:
        out.append(f'<h2>The provision</h2><blockquote class="provision">{e_(memo.provision_text)}</blockquote>')
    out.append("<h2>What the courts say</h2>")
    for heading, levels in memo.groups():
        out.append(f"<h3>{e_(heading)}</h3>")
        for level, entries in levels:
            out.append(f"<h4>{e_(level)}</h4>")
            first = entries[0].number if entries else 1
            out.append(f'<ol start="{first}">')
            for e in entries:
                label = f' <span class="label">({e_(e.label)})</span>' if e.label else ""
                link = f' <a href="{e_(e.link)}">opinion</a>' if e.link else ""
                out.append(f'<li id="entry-{e.number}">“{e_(_one_line(e.text))}” '
                           f'<span class="pin-cite">{e_(e.pin_cite)}</span>.{label}{link}</li>')
            out.append("</ol>")
    out.append('<h2>Table of authorities</h2><table class="authorities"><thead><tr><th>Case</th><th>Quoted in</th>'
               "</tr></thead><tbody>")
    for cite, link, numbers in memo.authorities():
        shown = f'<a href="{e_(link)}">{e_(cite)}</a>' if link else e_(cite)
        quoted = ", ".join(f'<a href="#entry-{n}">{n}</a>' for n in numbers)
        out.append(f"<tr><td>{shown}</td><td>{quoted}</td></tr>")
    out.append("</tbody></table></body></html>")
    return "\n".join(out) + "\n"


def memo_docx(memo: Memo) -> bytes:
    """The memo as a Word document (python-docx)."""
    from docx import Document
    from docx.shared import Pt

    doc = Document()
    doc.core_properties.title = f"Research memo: {memo.term}"
    doc.core_properties.author = "statinterp"
    doc.add_heading(f"Research memo: “{memo.term}”", level=0)
    for label, value in _head_lines(memo):
        p = doc.add_paragraph()
        p.add_run(f"{label}: ").bold = True
        p.add_run(value)
    if memo.provision_text:
        doc.add_heading("The provision", level=1)
        quote = doc.add_paragraph(memo.provision_text, style="Quote")
        quote.paragraph_format.left_indent = Pt(24)
    doc.add_heading("What the courts say", level=1)
    for heading, levels in memo.groups():
        doc.add_heading(heading, level=2)
        for level, entries in levels:
            doc.add_heading(level, level=3)
            for e in entries:
                p = doc.add_paragraph()
                p.add_run(f"{e.number}. ").bold = True
                p.add_run(f"“{_one_line(e.text)}” ")
                p.add_run(e.pin_cite + ".")
                if e.label:
                    p.add_run(f" ({e.label})").italic = True
                if e.link:
                    p.add_run(" ")
                    _hyperlink(p, e.link, "opinion")
    doc.add_heading("Table of authorities", level=1)
    table = doc.add_table(rows=1, cols=2)
    table.style = "Table Grid"
    table.rows[0].cells[0].text = "Case"
    table.rows[0].cells[1].text = "Quoted in"
    for cite, link, numbers in memo.authorities():
        cells = table.add_row().cells
        cells[0].text = cite
        if link:
            cells[0].paragraphs[0].add_run(" ")
            _hyperlink(cells[0].paragraphs[0], link, "opinion")
        cells[1].text = ", ".join(map(str, numbers))
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _hyperlink(paragraph, url: str, text: str) -> None:
    """An external hyperlink run in a python-docx paragraph (python-docx has no API for it)."""
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    rel = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    style = OxmlElement("w:rStyle")
    style.set(qn("w:val"), "Hyperlink")
    props.append(style)
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    props.append(underline)
    run.append(props)
    t = OxmlElement("w:t")
    t.text = text
    run.append(t)
    link.append(run)
    paragraph._p.append(link)


def memo_format(path: str | Path) -> str:
    """``docx``, ``md`` or ``html`` by the extension of ``path`` (:data:`FORMATS`)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"--out {path}: give a file ending in .docx, .md or .html (the memo's format)")
    return FORMATS[suffix]


def memo_bytes(memo: Memo, fmt: str) -> bytes:
    """The memo in ``fmt`` (``docx``, ``md``, ``html``)."""
    if fmt == "docx":
        return memo_docx(memo)
    if fmt == "md":
        return memo_markdown(memo).encode("utf-8")
    if fmt == "html":
        return memo_html(memo).encode("utf-8")
    raise UsageError(f"unknown memo format {fmt!r}; use docx, md or html")


def write_memo(memo: Memo, path: str | Path, force: bool = False) -> Path:
    """Write the memo atomically in the format of ``path``'s extension."""
    from statinterp.cache import files as atomic

    return atomic.write_bytes(path, memo_bytes(memo, memo_format(path)), force=force)


def memo_summary(memo: Memo) -> str:
    """One line for the terminal."""
    cases = len({e.case_id for e in memo.entries})
    kind = "labelled" if memo.reviewed else "top-ranked, unreviewed"
    return f"{len(memo.entries)} {kind} sentence(s) from {cases} case(s)"
