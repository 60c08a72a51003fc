"""The cleaning step every reader applies (statinterp/sources/cleaning.py): page labels, footnotes,
PDF-born text, encodings, captions -- on small genuine files (tests/fixtures/genuine/README.md)
and on the exact defects seen in real opinions."""

from __future__ import annotations

import json
import re

import pytest

from statinterp.sources import Partition, read_partition
from statinterp.sources.cleaning import (
    Dehyphenator,
    clean_markup,
    clean_opinion,
    clean_plain,
    decode_text,
    dehyphenate,
    drop_page_number_lines,
    is_pdf_text,
    party_caption,
    pdf_caption,
    plain_paragraphs,
)
from statinterp.sources.courtlistener import read_courtlistener
from statinterp.sources.plaintext import read_text, text_case
from statinterp.sources.records import CaseRecord
from tests.support.paths import FIXTURES

GENUINE = FIXTURES / "genuine"
SLIP = GENUINE / "scotus-slip" / "tarrant-11-889.txt"
DC_CIRCUIT = GENUINE / "pdf-text" / "dc-circuit-96-7169.txt"
CAP_HTML = GENUINE / "cap" / "0036-01.html"
CAP_JSON = GENUINE / "cap" / "0036-01.json"
CL_ROWS = GENUINE / "courtlistener" / "opinions.jsonl"
LATIN1 = GENUINE / "latin1" / "peyton-latin1.txt"

#: A page label or a footnote number glued to a word, as the defects showed them (not a citation
#: of a footnote, "n.14", "nn.7", nor a database pin cite, "2010 WL 2817220, *4").
GLUED = re.compile(r"(?<!, )(?<!at )\*\d|\b(?!nn?\.\d)[A-Za-z]*[a-z][.,;”’\"]?\d{1,2}(?=[\s.,;:)]|$)")
#: Running headers and footers of a slip opinion.
HEADER = re.compile(r"Cite as: \d+ U\. ?S\.|\(Slip Opinion\)|OCTOBER TERM, \d{4} +\d|^\d+ +[A-Z ]+ v\. [A-Z]")


def sentences(lines) -> list[str]:
    from statinterp.text.segmentation import build_pipeline

    nlp = build_pipeline()
    return [s.text for line in lines for s in nlp(line).sents]


def starts_ok(opinion) -> list[tuple[str, str]]:
    """(label, the text at its offset) for each page start of an opinion."""
    return [(label, opinion.lines[i][off:off + 20]) for i, starts in enumerate(opinion.page_starts)
            for off, label in starts]


# --- page labels -------------------------------------------------------------------------------

def test_star_labels_in_plain_text_become_page_starts():
    c = clean_opinion(["A security interest *583in a wide range of assets.",
                       "See id. § *58456(b) ¶ 22.) It held."])
    assert c.paragraphs == ("A security interest in a wide range of assets.", "See id. § 56(b) ¶ 22.) It held.")
    assert c.page_starts == (((20, "583"),), ((10, "584"),))
    assert c.paragraphs[0][20:].startswith("in a wide") and c.paragraphs[1][10:].startswith("56(b)")


def test_a_label_on_a_line_of_its_own_starts_the_next_paragraph():
    c = clean_opinion(["over land.", "*345", "A bicycle is plainly a vehicle."])
    assert c.paragraphs == ("over land.", "A bicycle is plainly a vehicle.")
    assert c.page_starts == ((), ((0, "345"),))


def test_markup_page_labels_of_every_source():
    html = ('<p>It was <span class="star-pagination">*Page 758</span> error.</p>'
            '<p>Body <span citation-index="1" class="star-pagination" label="363"> \n *363\n </span>\n formation.</p>'
            '<p>Before <a id="p37" href="#p37" data-label="37" data-citation-index="1" class="page-label">*37</a>'
            'William argued.</p><span class="star-pagination" number="P2" pagescheme="T.C. Memo">*153</span>'
            '<p>Second.</p>')
    c = clean_markup(html)
    assert c.paragraphs == ("It was error.", "Body formation.", "Before William argued.", "Second.")
    assert starts_ok(c) == [("758", "error."), ("363", "formation."), ("37", "William argued."), ("153", "Second.")]


def test_genuine_cap_html_page_starts_point_at_the_first_word_of_each_page():
    html = CAP_HTML.read_text(encoding="utf-8")
    want = re.findall(r'class="page-label">\*(\d+)</a>\s*([A-Za-z][\w’\']*)', html)
    article = re.search(r"<article.*?</article>", html, re.S).group(0)
    c = clean_markup(article)
    got = [(label, text.split()[0]) for label, text in starts_ok(c)]
    assert got and set(got) <= {(label, word) for label, word in want}
    assert all(not GLUED.search(line) for line in c.lines)


# --- footnotes ---------------------------------------------------------------------------------

def test_glued_footnote_marks_leave_words_and_footnotes_follow_the_text():
    c = clean_opinion(["The first point.1 The second point2 follows 42 U.S.C. § 1983 and 5 F.2d 7.",
                       "2", "The officers' testimony3 was clear under the Bankruptcy Code.4", "3",
                       "1 The note one.", "2 Note two.", "3 Note three.", "4 Note four."])
    assert c.paragraphs == ("The first point. The second point follows 42 U.S.C. § 1983 and 5 F.2d 7.",
                            "The officers' testimony was clear under the Bankruptcy Code.")
    assert c.footnotes == ("The note one.", "Note two.", "Note three.", "Note four.")
    assert c.lines[-4:] == c.footnotes


def test_numbers_that_do_not_count_up_stay():
    text = ["Section 1983 applies to Rule 12(b)(6) and Form 10.", "2", "It cost $5 in 1999."]
    assert clean_opinion(text).paragraphs == tuple(text)


def test_markup_footnotes_of_every_source():
    html = ('<p>Convicted.<a class="footnotemark" href="#footnote_1_1" id="ref_footnote_1_1">1</a> Then'
            '<sup id="ref-fn2"><a href="#fn2">2</a></sup> more<footnotemark>3</footnotemark>.</p>'
            '<div class="footnotes"><div class="footnote" id="fn2"><a href="#ref-fn2">2</a><p>Two.</p></div></div>'
            '<aside data-label="1" class="footnote" id="footnote_1_1"><a href="#ref_footnote_1_1">1</a>'
            '<p>. Code 1951, 22-1112.</p></aside><footnote label="3"><p>Three <span class="star-pagination">*9</span>'
            'here.</p></footnote>')
    c = clean_markup(html)
    assert c.paragraphs == ("Convicted. Then more.",)
    assert c.footnotes == ("Two.", "Code 1951, 22-1112.", "Three here.")


def test_genuine_courtlistener_markup(tmp_path):
    cases = [r for r in read_courtlistener(CL_ROWS) if isinstance(r, CaseRecord)]
    assert len(cases) == 2
    peyton = cases[0].opinions[0]
    assert peyton.paragraphs[1] == ("Defendant was convicted by the court of making an obscene and indecent "
                                    "exposure in a public place.")
    assert len(peyton.footnotes) == 9 and peyton.footnotes[0] == "Code 1951, 22-1112."
    assert starts_ok(peyton) and len(peyton.page_starts) == len(peyton.lines)
    columbia = cases[1].opinions[0]
    assert columbia.footnotes == ("Footnote sample",)
    assert starts_ok(columbia) == [("500", columbia.lines[1][:20])]
    for o in (peyton, columbia):
        assert not any(GLUED.search(s) or re.fullmatch(r"\d+", s) for s in o.lines)


def test_genuine_cap_json_footnotes_leave_the_text():
    obj = json.loads(CAP_JSON.read_text(encoding="utf-8"))
    rec = next(r for r in read_partition(Partition(str(CAP_JSON), "cap")) if isinstance(r, CaseRecord))
    op = rec.opinions[0]
    raw_lines = [ln for ln in obj["casebody"]["opinions"][0]["text"].split("\n") if ln.strip()]
    assert len(op.footnotes) == 9 and len(op.paragraphs) == len(raw_lines) - 9
    assert all(not f.startswith(".") for f in op.footnotes)


# --- PDF-born text -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def slip():
    text = SLIP.read_text(encoding="utf-8")
    return text, clean_plain(text)


def test_slip_opinion_is_recognised_and_ordinary_text_is_not():
    assert is_pdf_text(SLIP.read_text(encoding="utf-8")) and is_pdf_text(DC_CIRCUIT.read_text(encoding="utf-8"))
    ordinary = "Smith v. Jones\n\nThe court held that the self-defense claim fails.\n\nAffirmed.\n"
    assert not is_pdf_text(ordinary)
    assert plain_paragraphs(ordinary) == (["Smith v. Jones", "The court held that the self-defense claim fails.",
                                           "Affirmed."], [])


@pytest.mark.slow
def test_slip_opinion_sentences_read_like_the_opinion(slip):
    text, c = slip
    raw_hyphens = sum(1 for ln in text.split("\n") if re.search(r"[a-z]-$", ln))
    assert raw_hyphens > 100
    words = set(re.findall(r"[a-z]+", " ".join(c.lines).lower()))
    split = [m.group(0) for line in c.lines for m in re.finditer(r"\b([a-z]+)-([a-z]+)\b", line)
             if (m.group(1) + m.group(2)) in words]
    assert split == []
    sents = sentences(c.lines)
    assert not [s for s in sents if HEADER.search(s)]
    assert not [s for s in sents if GLUED.search(s)]
    assert not [p for p in c.lines if re.match(r"^\d+ [a-z]", p)]  # no page-break fragment ("6 this plea ...")
    assert len(c.footnotes) >= 10 and all(not re.match(r"^\d", f) for f in c.footnotes)
    assert any("subbasin is located. The remaining subbasin" in p for p in c.paragraphs)  # mark "located.2" gone


def test_page_break_fragment_of_courtlistener_plain_text():
    page1 = "\n".join(["   The defendant entered into the terms set out in"] + ["filler line of the page text"] * 20)
    text = (page1 + " of\n\f                                    6\n\nthis plea agreement.” The court accepted it.\n"
            + "\n".join(["more text of the next page goes"] * 5) + "\n")
    c = clean_plain(text)
    assert not any(re.search(r"(^|\s)6 this plea", p) for p in c.paragraphs)
    assert any("of this plea agreement.” The court accepted it." in p for p in c.paragraphs)


@pytest.mark.slow
def test_line_end_hyphens_rejoin_only_real_words():
    text = "Strict scru-\ntiny requires more. The self-\ndefense claim. A self-defense rule. Atchafa-\nlaya."
    assert dehyphenate(text) == ("Strict scrutiny requires more. The self-defense claim. A self-defense rule. "
                                 "Atchafa-laya.")
    assert dehyphenate("Strict scru- tiny applies; pre- and post-trial.") == (
        "Strict scrutiny applies; pre- and post-trial.")
    assert Dehyphenator("the subbasin and subbasin", ()).join("sub", "basin") == "subbasin"


def test_slip_opinion_caption():
    assert pdf_caption(SLIP.read_text(encoding="utf-8")) == "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL."
    rec = text_case(SLIP.read_text(encoding="utf-8"), "tarrant")
    assert rec.name == "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL."
    assert "OCTOBER TERM" not in rec.name


# --- encodings ---------------------------------------------------------------------------------

def test_latin1_text_is_decoded_and_the_guess_recorded():
    raw = LATIN1.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    text, used = decode_text(raw)
    assert "eithér" in text and used is not None
    recs = list(read_text(LATIN1))
    case = next(r for r in recs if isinstance(r, CaseRecord))
    assert "eithér" in case.text
    forced = next(r for r in read_text(LATIN1, encoding="latin-1") if isinstance(r, CaseRecord))
    assert "eithér" in forced.text
    assert decode_text("plain é".encode()) == ("plain é", None)


@pytest.mark.slow
def test_ingest_reports_the_guessed_encoding_and_takes_a_forced_one(tmp_path, capsys):
    from statinterp.app.cli import main
    from statinterp.collection.store import Collection

    code = main(["ingest", str(LATIN1), "--collection", str(tmp_path / "a"), "--quiet", "--no-citations"])
    out, err = capsys.readouterr()
    assert code == 0 and "not UTF-8; decoded as cp1252" in err and "peyton-latin1.txt" in err
    assert f"decoded: {LATIN1} is not UTF-8; read as cp1252" in out  # the summary keeps the guess
    code = main(["ingest", str(LATIN1), "--collection", str(tmp_path / "j"), "--quiet", "--no-citations",
                 "--format-summary", "json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["decoded"] == [{"file": str(LATIN1), "encoding": "cp1252"}]
    with Collection.open(tmp_path / "a") as c:
        assert "eithér" in c.case(c.case_ids()[0]).text
    code = main(["ingest", str(LATIN1), "--collection", str(tmp_path / "b"), "--quiet", "--no-citations",
                 "--encoding", "latin-1", "--format-summary", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and "decoded as" not in err and json.loads(out)["decoded"] == []
    code = main(["ingest", str(LATIN1), "--collection", str(tmp_path / "c"), "--encoding", "no-such-codec"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown text encoding 'no-such-codec'" in err and len(err.strip().splitlines()) == 1


def test_cap_volume_reads_page_labels_and_footnotes_from_the_html_beside_the_json(tmp_path):
    import shutil
    import zipfile

    vol = tmp_path / "a2d" / "100"
    (vol / "cases").mkdir(parents=True)
    (vol / "html").mkdir()
    shutil.copy(CAP_JSON, vol / "cases" / "0036-01.json")
    shutil.copy(CAP_HTML, vol / "html" / "0036-01.html")
    (vol / "CasesMetadata.json").write_text("[]", encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "100.zip", "w") as zf:  # the release's volume zip: json/ and html/
        zf.write(CAP_JSON, "json/0036-01.json")
        zf.write(CAP_HTML, "html/0036-01.html")
    for part in (Partition(str(vol), "cap"), Partition(str(tmp_path / "100.zip"), "cap")):
        rec = next(r for r in read_partition(part) if isinstance(r, CaseRecord))
        op = rec.opinions[0]
        assert [label for label, _ in starts_ok(op)] == ["38"]
        label, at = starts_ok(op)[0]
        html = CAP_HTML.read_text(encoding="utf-8")
        first_word = re.search(r'data-label="38"[^>]*>\*38</a>\s*(\S+)', html).group(1)
        assert at.startswith(first_word)
        assert len(op.footnotes) == 9 and op.footnotes[0] == "Code 1951, 22-1112."
        assert op.paragraphs[0] == "QUINN, Associate Judge."
        assert not any(GLUED.search(line) for line in op.lines)


def test_an_enumerated_ending_is_not_taken_for_footnotes():
    ending = ["We hold:", "1. The ordinance applies.", "2. The fine stands."]
    assert clean_opinion(ending).paragraphs == tuple(ending)
    cap_notes = clean_opinion(["Text.", "1 . The record.", "2 . Another."])
    assert cap_notes.paragraphs == ("Text.",) and cap_notes.footnotes == ("The record.", "Another.")


def test_a_label_inside_a_word_does_not_split_it():
    c = clean_markup('<p>The secu<span class="star-pagination">*12</span>rity and <span class="star-pagination">'
                     '*13</span> more.</p><p>End.<span class="star-pagination">*14</span></p><p>Next.</p>')
    assert c.paragraphs == ("The security and more.", "End.", "Next.")
    assert starts_ok(c) == [("12", "rity and more."), ("13", "more."), ("14", "Next.")]


@pytest.mark.slow
def test_pdf_texts_through_every_plain_reader(tmp_path):
    """The slip opinion as CourtListener's plain_text and as a .txt file, the D.C. Circuit text as
    a .txt file: no hyphen-split word whose joined form occurs, no header, no glued mark."""
    slip = SLIP.read_text(encoding="utf-8")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": 1, "cluster_id": 7, "type": "020lead", "plain_text": slip}) + "\n",
                    encoding="utf-8")
    case = next(r for r in read_courtlistener(rows) if isinstance(r, CaseRecord))
    cl, head = case.opinions[0], []
    assert cl.lines == clean_plain(slip, head=head).lines  # the syllabus is head matter, as from the PDF
    assert head and case.head_matter == "\n".join(head) and cl.lines[0].startswith("JUSTICE SOTOMAYOR delivered")
    for path in (SLIP, DC_CIRCUIT):
        op = next(r for r in read_text(path) if isinstance(r, CaseRecord)).opinions[0]
        words = set(re.findall(r"[a-z]+", op.text.lower()))
        assert not [m.group(0) for m in re.finditer(r"\b([a-z]+)-([a-z]+)\b", op.text)
                    if m.group(1) + m.group(2) in words]
        assert not [s for s in sentences(op.lines) if HEADER.search(s) or GLUED.search(s)]


def test_pin_cites_and_references_are_not_labels_or_marks():
    """Seen in the data set's CAP texts: database star pages, a lone starred number, subdivisions,
    page and paragraph numbers."""
    text = ["Amanuel, 2006 WL 266560, at *3. Carter, 2005 U.S. Dist. LEXIS 21348 at *26-27; id. at *20-*21.",
            "Laws for Juvenile Sex Offenders *9 (May 1, 2009).",
            "See Wis. Adm. Code § ETF 11.08(2)(b)3 which applies (R. 39, p.2).",
            "Costs under paragraph II.4 of this Agreement.1", "1 . A note."]
    c = clean_opinion(text)
    assert c.paragraphs == tuple(text[:3]) + ("Costs under paragraph II.4 of this Agreement.",)
    assert c.page_starts == () and c.footnotes == ("A note.",)


def test_a_single_page_break_label_followed_by_a_word():
    c = clean_opinion(["The court held *584 that the lien attached."])
    assert c.paragraphs == ("The court held that the lien attached.",)
    assert starts_ok(c) == [("584", "that the lien attach")]


def test_any_text_gives_a_well_formed_opinion():
    """Random text (markers and sentinels of the cleaning step included): no exception, one page-start
    entry per line when there are any, every offset inside its line, no empty line."""
    import random

    alphabet = "ab Cd12*-—.,;()[]“”\n\f\t§¶_\ue000\ue001\ue002"
    rnd = random.Random(7)
    for _ in range(500):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 300)))
        for op in (clean_plain(text), clean_opinion(text.split("\n")),
                   clean_markup("<p>" + text.replace("*", '<span class="star-pagination">*').replace("-", "</span>"))):
            assert all(line.strip() == line and line for line in op.lines)
            assert not op.page_starts or len(op.page_starts) == len(op.lines)
            assert all(0 <= off < len(op.lines[i]) for i, s in enumerate(op.page_starts) for off, _ in s)


# A web copy of a PDF-born order (Hogarth v. Bell, tests/fixtures/genuine/courtlistener: its
# plain_text): page numbers as lines of their own, a page break inside a sentence, "[1]" marks,
# the footnotes after a "---------" rule and a "Notes:" heading, a trailer after them.
WEB_COPY = """Case Description
1

HOGARTH v. BELL

ORDER

2

This matter is before the court in his official capacity. [1] The motions are ripe.

The facts are that plaintiff takes photographs of her ballots in the voting booth, to

3

promote the candidates she votes for. [2]

4

SO ORDERED.

---------

Notes:

[1] The court has amended the caption.

[2] Internal citations are omitted.

---------

Citation
Hogarth v. Bell, 5:24-CV-481-FL (E.D.N.C. 2025)
"""


def test_page_number_lines_and_bracketed_notes_of_a_web_copy_leave_the_text():
    op = clean_plain(WEB_COPY)
    assert op.paragraphs == (
        "Case Description", "HOGARTH v. BELL", "ORDER",
        "This matter is before the court in his official capacity. The motions are ripe.",
        "The facts are that plaintiff takes photographs of her ballots in the voting booth, to promote the "
        "candidates she votes for.",
        "SO ORDERED.", "Citation Hogarth v. Bell, 5:24-CV-481-FL (E.D.N.C. 2025)")
    assert op.footnotes == ("The court has amended the caption.", "Internal citations are omitted.")


def test_number_lines_that_do_not_count_up_stay():
    text = "Sums\n\n12\n\n7\n\n30\n\nEnd."
    assert drop_page_number_lines(text) == text
    assert clean_plain(text).paragraphs == ("Sums", "12", "7", "30", "End.")


def test_a_caption_with_the_parties_around_a_v_line_names_the_case():
    """The D.C. Circuit's PDF text opens with the court's name; the case is the parties."""
    case = text_case(DC_CIRCUIT.read_text(encoding="utf-8"), "dc")
    assert case.name == "Ideal Electronic Security Co., Inc., et al. v. International Fidelity Insurance Company"
    assert party_caption("Smith,\nPlaintiff,\n\nv.\n\nJones,\nDefendant.\n\nOpinion text.") == "Smith v. Jones"
    assert party_caption("No parties here.\nJust text.") is None


def test_footnotes_of_each_opinion_of_a_slip_opinion_start_again_at_1():
    """Fisher v. University of Texas (CourtListener plain_text, PDF-born): Thomas's concurrence has
    footnotes 1-5, Ginsburg's dissent 1-4 of its own; hers were run into Thomas's fifth and her
    marks stayed glued ("the Nation,1 the University", "plans.2 As", "approbation.4")."""
    page = json.loads((GENUINE / "courtlistener" / "api-opinions-page.json").read_text(encoding="utf-8"))
    text = next(r["plain_text"] for r in page["results"] if "FISHER v. UNIVERSITY" in (r["plain_text"] or ""))
    op = clean_plain(text)
    assert len(op.footnotes) == 9
    assert op.footnotes[5].startswith("See Brief for Amherst College") and op.footnotes[4].endswith(".")
    body = " ".join(op.paragraphs)
    assert "across the Nation, the University" in body and "such plans. As for" in body
    assert "merits our approbation." in body and not re.search(r"Nation,1|plans\.2|approbation\.4", body)


def test_cap_page_labels_of_a_parallel_reporter_are_not_pins():
    # CAP's markup of a case with two paginations (e.g. 590 S.E.2d 792): labels of the second
    # citation's reporter carry data-citation-index="2" and must not become page starts.
    html = ('<section class="casebody"><article class="opinion"><p>First words '
            '<a id="p479" href="#p479" data-label="479" data-citation-index="2" class="page-label">*479</a>'
            'here and '
            '<a id="p795" href="#p795" data-label="795" data-citation-index="1" class="page-label">*795</a>'
            'there.</p></article></section>')
    c = clean_markup(html)
    labels = [label for starts in c.page_starts for _, label in starts]
    assert labels == ["795"]
    assert "479" not in " ".join(c.lines)
