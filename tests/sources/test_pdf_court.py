"""A PDF's court, read from its first page's head (issue 34: citations a lawyer can paste).

Each genuine PDF of ``tests/fixtures/genuine/pdf/`` (sources in its README) whose first page
names its court gets courts-db's id of that court, so its citation carries the court
("Calvary Chapel of Bangor v. Mills (1st Cir. 2020)"); before, ``court`` was always empty.
Two stay empty, with no guess: the S.D.N.Y. order whose first page has no text layer, and the
Tennessee Workers' Compensation Appeals Board's opinion (courts-db 0.10.27 knows the Supreme
Court's Special Workers Compensation Appeals *Panel*, not the Board: a different body).
"""

from __future__ import annotations

import functools

import pytest

from statinterp.corpus.pin_cites import courts_db_court, format_cite
from statinterp.sources.pdf import _citable, _court, _Line, read_pdf
from statinterp.sources.records import CaseRecord
from tests.support.paths import FIXTURES

PDFS = FIXTURES / "genuine" / "pdf"

COURTS = {
    "ca1-20-1507-calvary-chapel": "ca1",  # United States Court of Appeals / For the First Circuit
    "ca5-21-50498-st-pierre": "ca5",  # United States Court of Appeals / for the Fifth Circuit
    "ca10-21-800-liebowitz": "ca10",  # UNITED STATES COURT OF APPEALS / FOR THE TENTH CIRCUIT
    "azd-mdl-15-2641-bard-remand": "azd",  # IN THE UNITED STATES DISTRICT COURT / FOR THE DISTRICT OF ARIZONA
    "cacd-8-16-cv-01261-experian": "cacd",  # UNITED STATES DISTRICT COURT / CENTRAL DISTRICT OF CALIFORNIA
    "cand-04-0098-alvarado-fedex": "cand",  # IN THE UNITED STATES DISTRICT COURT / FOR THE NORTHERN DISTRICT ...
    "caed-15-208-crane-order": "caed",  # UNITED STATES DISTRICT COURT / FOR THE EASTERN DISTRICT OF CALIFORNIA
    "caed-20-1133-mendoza-redaction": "caed",  # the same heading
    "njd-18-16281-mccrimmon": "njd",  # UNITED STATES DISTRICT COURT / DISTRICT OF NEW JERSEY
    "scotus-11-889-tarrant-pp1-7": "scotus",  # SUPREME COURT OF THE UNITED STATES
    "nc-2022-ncsc-1-gift-surplus": "nc",  # IN THE SUPREME COURT OF NORTH CAROLINA
    "tc-memo-2020-26-bordelon": "tax",  # UNITED STATES TAX COURT
    # In the Missouri Court of Appeals / Eastern District: courts-db's "moctapped" has no citation
    # string, so its parent's id is stored ("Mo. Ct. App.")
    "mo-app-ed108783-jagels": "moctapp",
    "nysd-12-5708-hostess": "",  # page 1 has no text layer
    "tn-wcab-diaz-appeals-board": "",  # a board courts-db does not know
    "ca11-08-14991-robinson": "ca11",  # IN THE UNITED STATES COURT OF APPEALS / FOR THE ELEVENTH CIRCUIT
}


@functools.cache
def _case(stem: str) -> CaseRecord:
    record = read_pdf(PDFS / f"{stem}.pdf")
    assert isinstance(record, CaseRecord), record
    return record


@pytest.mark.parametrize("stem", sorted(COURTS))
def test_court_from_first_page(stem: str) -> None:
    assert _case(stem).court == COURTS[stem]


def test_every_readable_fixture_is_covered() -> None:
    """A fixture PDF added later gets its court asserted here too (the scans are skipped records)."""
    readable = {p.stem for p in PDFS.glob("*.pdf")} - {"scan-no-text-layer", "ecf-stamp-over-scan"}
    assert readable == set(COURTS)


def test_citation_carries_the_court() -> None:
    case = _case("ca1-20-1507-calvary-chapel")
    cite = format_cite(case.name, "", case.court, case.decision_date)
    assert cite == "Calvary Chapel of Bangor v. Mills (1st Cir. 2020)"
    case = _case("mo-app-ed108783-jagels")
    assert format_cite(case.name, "", case.court, case.decision_date) == "Jagels v. State (Mo. Ct. App. 2021)"


def _line(text: str, y: float, x0: float = 150.0, x1: float = 450.0) -> _Line:
    return _Line(text, x0, x1, y, 12.0, 0)


def test_a_court_below_the_caption_is_not_the_court() -> None:
    """"On appeal from the / United States District Court / for the District of Maine" under the
    caption names the court below, not the one deciding: without a head naming its court, none."""
    lines = [_line("No. 20-1507", 620), _line("CALVARY CHAPEL OF BANGOR,", 590), _line("v.", 540),
             _line("JANET T. MILLS,", 510), _line("ON APPEAL FROM THE", 444),
             _line("UNITED STATES DISTRICT COURT", 430), _line("FOR THE DISTRICT OF MAINE", 415)]
    assert _court(lines) == ""
    assert _court([_line("United States Court of Appeals", 700), _line("For the Eighth Circuit", 686)] + lines) == "ca8"


def test_lines_side_by_side_are_not_joined() -> None:
    """Only the line under a line, in its column, is read with it: a stamp beside the court's
    name is not."""
    lines = [_line("UNITED STATES DISTRICT COURT", 700), _line("Judge's Chambers", 690, 470, 560),
             _line("FOR THE NORTHERN DISTRICT OF CALIFORNIA", 686)]
    assert _court(lines) == "cand"


def test_a_court_without_a_citation_string_is_stored_citable() -> None:
    """courts-db's Missouri Court of Appeals, Eastern District has no citation string: its parent's
    id is stored; a court with none up its line is stored by name (cited in full, not as an id)."""
    eastern = courts_db_court("moctapped")
    alabama = courts_db_court("alacirct")
    assert eastern is not None and alabama is not None
    assert _citable(eastern) == "moctapp"
    assert _citable(alabama) == "Alabama Circuit Courts"
    assert format_cite("Doe v. Roe", "", _citable(alabama), "2001-02-03") == "Doe v. Roe (Alabama Circuit Courts 2001)"
