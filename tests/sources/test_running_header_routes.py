"""Ohio's "[Cite as ...]" line is a running header on every text route (issue 34, review of the
readers): one pattern among the running headers (``cleaning._HEADER_PATTERNS``,
:func:`~statinterp.sources.cleaning.is_running_header`), dropped from a plain text, PDF-born text,
an HTML opinion (CourtListener's ``html_with_citations``, CAP's HTML) and a PDF, where before only
a plain text that was not PDF-born dropped it (and HTML kept it as a sentence).

The header line is genuine: *Wiebusch v. Wiebusch*, 186 Ohio App.3d 237 (Ohio Ct. App. 2010), as
CAP's text of the statutory-interpretation data set holds it (quoted already in
tests/sources/test_cleaning_cap_text_footnotes.py); no file of tests/fixtures holds an Ohio
"[Cite as ...]" line. A sentence that quotes "cite as" or cites "[Cite as ...]" inside it stays."""

from __future__ import annotations

import html

from statinterp.sources.cleaning import clean_markup, clean_plain, is_running_header, page_marker, strip_markers
from statinterp.sources.plaintext import text_case
from tests.sources.test_pdf import _draw_text

CITE_AS = "[Cite as Wiebusch v. Wiebusch, 186 Ohio App.3d 237, 2010-Ohio-504.]"
#: Body sentences that quote "cite as" (the first a bracketed cite inside a sentence): text, kept.
QUOTING = ["The court so held [Cite as Wiebusch, at ¶ 3] in passing.",
           "The rule tells a court to cite as authority only the official reports of the decisions."]
BODY = ["The trial court divided the marital property and the husband appealed from that judgment.",
        "We review the division of marital property for an abuse of discretion by the trial court.",
        *QUOTING]


def _stored(paragraphs) -> list[str]:
    return [strip_markers(p) for p in paragraphs]


def test_the_cite_as_line_is_a_running_header_and_a_sentence_quoting_it_is_not():
    assert is_running_header(CITE_AS)
    assert is_running_header("   " + CITE_AS + "  ")
    assert not any(is_running_header(s) for s in QUOTING)
    assert not is_running_header("[Cite as Wiebusch v. Wiebusch] and the court went on to hold that")


def test_a_text_file_drops_the_cite_as_line_and_keeps_sentences_quoting_it():
    record = text_case("\n\n".join([CITE_AS, *BODY]), "wiebusch")
    assert _stored(record.opinions[0].paragraphs) == BODY


def test_pdf_born_text_drops_the_cite_as_line():
    """Form feeds make the text PDF-born: its pages' lines are read as a PDF's are. Before, the
    Ohio line was no running header there and was kept as the opinion's first paragraph."""
    pages = [f"{CITE_AS}\n\n{BODY[0]}\n{BODY[1]}\n\n                 1\n",
             f"{BODY[2]}\n\n{BODY[3]}\n\n                 2\n"]
    op = clean_plain("\f".join(pages))
    stored = " ".join(_stored(op.paragraphs))
    assert "Wiebusch v. Wiebusch, 186" not in stored
    for sentence in BODY:
        assert sentence in stored


def test_an_html_opinion_drops_the_cite_as_paragraph_and_keeps_its_page():
    """CourtListener's html_with_citations / CAP's HTML: a <p> holding only the header was
    stored as a sentence before. The page that starts at it starts at the next paragraph."""
    markup = "".join(f"<p>{html.escape(p)}</p>" for p in [CITE_AS, *BODY])
    assert _stored(clean_markup(f"<div>{markup}</div>").paragraphs) == BODY
    paged = clean_plain("\n\n".join([page_marker("237") + CITE_AS, *BODY]))
    assert _stored(paged.paragraphs) == BODY
    assert paged.page_starts[0] == ((0, "237"),)


def test_a_pre_block_drops_the_cite_as_line():
    op = clean_markup("<pre>" + html.escape("\n\n".join([CITE_AS, *BODY])) + "</pre>")
    assert _stored(op.paragraphs) == BODY


def test_a_pdf_drops_the_cite_as_line(tmp_path):
    """Made here (pypdfium2): the genuine header line above the body on a one-page opinion."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    from statinterp.sources.pdf import layout

    doc = pdfium.PdfDocument.new()
    page = doc.new_page(612, 792)
    _draw_text(doc, page, CITE_AS, 72, 740, 12)
    y = 690
    for line in [BODY[0], BODY[1], *QUOTING]:
        _draw_text(doc, page, line, 72, y, 12)
        y -= 24
    pdfium_c.FPDFPage_GenerateContent(page.raw)
    path = tmp_path / "ohio.pdf"
    doc.save(str(path))
    got = layout(path.read_bytes())
    stored = " ".join(_stored(got.paragraphs))
    assert "Wiebusch v. Wiebusch, 186" not in stored
    assert CITE_AS in got.dropped
    for sentence in QUOTING:
        assert sentence in stored


def test_loose_banners_are_dropped_as_printed_lines_never_as_paragraphs():
    """One home for banners: the looser e-filing stamps (a Fourth Circuit "Appeal: ... Doc: ... Pg:",
    a bankruptcy court's "Case ... Doc 1 Filed ... Desc Main"), any "Cite as:" line and "(Slip
    Opinion)" are banners as a page's printed line (the PDF reader, the edge lines of PDF-born text),
    but a paragraph that opens that way is text."""
    from statinterp.sources.cleaning import is_banner_line

    for line in ("Appeal: 17-2218 Doc: 17 Filed: 10/31/2017 Pg: 1 of 1",
                 "Case 15-11680 Doc 1 Filed 03/31/15 Entered 03/31/15 16:49:55 Desc Main",
                 "  Cite as: 2022 Ark. 12, at 4 (Wood, J., dissenting), with a parenthetical that runs on "
                 "well past the ninety characters",
                 "(Slip Opinion) Page 3"):
        assert is_banner_line(line), line
        assert not is_running_header(line), line
    for line in ("Case law holds otherwise; the court filed its order.", "The Appeal was docketed."):
        assert not is_banner_line(line), line
    assert is_banner_line("Case: 21-50498 Document: 00516242060 Page: 7 Date Filed: 03/16/2022")
