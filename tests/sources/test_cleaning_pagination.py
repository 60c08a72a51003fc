"""CAP HTML with two paginations: only the pages of the citation a case is cited by are pins.

Genuine file: *In re K.N.C.*, 590 S.E.2d 792 (Ga. Ct. App. 2003) = 264 Ga. App. 475, CAP's case HTML
(tests/fixtures/genuine/cap-georgia, see its README row): "*793" labels of S.E.2d
(data-citation-index 1) and "**476" labels of Ga. App. (index 2) between the same paragraphs.
"""

from __future__ import annotations

from pathlib import Path

from statinterp.collection.store import line_pages
from statinterp.sources.cap import read_cap_folder
from statinterp.sources.cleaning import cap_pagination
from statinterp.sources.records import CaseRecord

VOLUME = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "cap-georgia" / "SE2d" / "590"


def _case() -> CaseRecord:
    (case,) = list(read_cap_folder(VOLUME))
    assert isinstance(case, CaseRecord)
    return case


def test_the_case_is_cited_by_its_official_citation_whose_pagination_is_1():
    case = _case()
    assert case.official_citation == "590 S.E.2d 792"
    assert cap_pagination(case.citations) == "1"


def test_kn_c_pages_are_those_of_590_se2d_only():
    case = _case()
    labels = [label for op in case.opinions for starts in op.page_starts for _, label in starts]
    assert labels and set(labels) <= {str(p) for p in range(793, 799)}, labels  # not 476-482 of Ga. App.


def test_kn_c_hand_checked_pin_is_795():
    # The sentence opens on page 795 of S.E.2d ("*796 falls inside the sentence"); with the
    # Ga. App. labels taken it was pinned 479.
    case = _case()
    pages = line_pages(case)
    quote = "the mother argues that the juvenile court erred in denying her motion to continue"
    found = [(k, i) for k, op in enumerate(case.opinions) for i, line in enumerate(op.lines) if quote in line]
    assert len(found) == 1
    k, i = found[0]
    assert pages[k][i] == "795"


def test_pagination_follows_the_cited_citation_in_caps_type_order():
    # CAP numbers paginations by its citations sorted by type: official, nominative, parallel, vendor.
    assert cap_pagination([("parallel", "264 Ga. App. 475"), ("official", "590 S.E.2d 792")]) == "1"
    assert cap_pagination([("official", "264 Ga. App. 475"), ("parallel", "590 S.E.2d 792")]) == "1"
    assert cap_pagination([("nominative", "5 Hill 1"), ("official", "12 N.Y. 3")]) == "1"
    # No official citation: the case is cited by its first, here a vendor's, which CAP puts after the parallel one.
    assert cap_pagination([("vendor", "2003 WL 1"), ("parallel", "590 S.E.2d 792")]) == "2"
    assert cap_pagination([]) == "1"
