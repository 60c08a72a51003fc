"""A genuine tentative ruling of the California Superior Court (Santa Clara County, department 16,
March 2026; pages 13-15 of judgemind/judgemind's fixture, tests/fixtures/genuine/README.md): its
footnote 2 is set in the body's size, opens right under a short footnote rule high on page 14 and
fills the page, going on over page 15; and pages 15, 17, 18 and 20, where three rulings end with
the judge's signature, set right of the middle at a page's foot, over the court's name (a footer
then, and left out), and page 18 opens the next ruling ("Line 3", "Case Name: ..."). The sixth held-apart half of the
text-quality study, judged blind (the note was stored as body text, the signature and the next
caption as one sentence), then looked at for these rules of ``statinterp.sources.pdf``
(``_ruled_high_notes``, ``_breaks``), so in-sample for them."""

from pathlib import Path

from statinterp.sources.pdf import read_pdf
from statinterp.sources.records import CaseRecord

PDF = Path(__file__).parents[1] / "fixtures" / "genuine" / "pdf-calsuperct" / "santaclara-dept16-pages13-15.pdf"


def test_a_long_note_under_a_rule_high_on_its_page_is_a_footnote():
    record = read_pdf(PDF)
    assert isinstance(record, CaseRecord)
    (opinion,) = record.opinions
    notes = [n for n in opinion.notes if "Reply brief" in n]
    assert len(notes) == 1
    assert notes[0].startswith("The Court notes that Plaintiff’s Reply brief, signed by")
    assert "these cases do not appear to exist" in notes[0]  # page 14, from its rule to its foot
    assert notes[0].endswith("(imposing monetary sanctions for citing nonexistent opinions).")  # page 15
    body = " ".join(opinion.paragraphs)
    assert "Reply brief, signed" not in body and "AI hallucinations" not in body
    assert "Hence, Defendant fails to demonstrate the existence of a triable issue" in body


def test_a_signature_at_a_page_foot_is_not_run_into_the_next_page():
    record = read_pdf(PDF.with_name("santaclara-dept16-pages15-17-18-20.pdf"))
    assert isinstance(record, CaseRecord)
    paragraphs = list(record.opinions[0].paragraphs)
    assert "Hon. Vincent I. Parrett" in paragraphs  # page 17's foot, alone (not "... Parrett Line 3")
    assert "Case Name: Heriberto Jara Jurado, et al. v. Ford Motor Company, et al." in paragraphs
    assert not any("Parrett" in p and ("Line 3" in p or "Case Name" in p) for p in paragraphs)
