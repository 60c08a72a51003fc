"""Ingest's fast citation pass (statinterp.text.citations.stored_citations) stores what eyecite finds.

Three claims, each checked here: a text without a digit holds no stored citation (every citation
pattern of eyecite needs one: checked pattern by pattern, and eyecite run on every paragraph of the
data set without one); the patterns tried only after a boundary and a digit cannot match anywhere
else, and trying them there gives ``finditer``'s matches; and over every paragraph of the data set,
and in the citations table of a collection, the stored citations are eyecite's ``get_citations``
of the stored kinds (where eyecite's own answer depends on the hash order of its extractors, the
one eyecite gives in its own extractor order).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parse

import pytest

from statinterp.collection.ingest import ingest
from statinterp.sources import Partition, read_partition
from statinterp.sources.records import CaseRecord
from statinterp.text import citations
from statinterp.text.citations import STORED_KINDS, StoredCitation, stored_citations

REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
needs_digit = citations._needs_digit


def starts_with_digit(pattern) -> bool:
    """Whether every match of the parsed ``pattern`` starts with a ``\\d`` character."""
    if not len(pattern):
        return False
    op, av = pattern[0]
    if citations._digit_item(op, av):
        return True
    if op is sre.SUBPATTERN:
        return starts_with_digit(av[3])
    if op is sre.BRANCH:
        return all(starts_with_digit(b) for b in av[1])
    if op in REPEATS:
        return av[0] >= 1 and starts_with_digit(av[2])
    return False


def test_the_pattern_checks_tell_apart():
    def parse(p: str):
        return sre_parse.parse(p, 0)

    assert needs_digit(parse(r"(?P<v>[1-9]\d*) U\.S\. (?P<p>\d+)")) and needs_digit(parse(r"Id\.(?=.*\d)"))
    assert not needs_digit(parse(r"\d*U\.S\.")) and not needs_digit(parse(r"(?:\d+|supra)"))
    assert not needs_digit(parse(r"[\d½]")) and not needs_digit(parse(r"[^a-z]"))
    assert starts_with_digit(parse(r"(?P<year>1\d{3}|20\d{2}) x")) and not starts_with_digit(parse(r"(?:\d )?U"))


def _extractors():
    citations.stored_citations("1")  # builds the tokenizer
    tok = citations._tokenizer()
    return tok, list(enumerate(tok.extractors))


@pytest.mark.slow
def test_which_citation_patterns_need_a_digit():
    """Stored citations come only from citation tokens; most patterns that make one need a digit,
    not all ("Abb. Adm. xiv": optional volume, Roman page). A pattern said to need one does (every
    digit-first pattern, checked here from its parse), and the rest are found."""
    tok, extractors = _extractors()
    pats = [(i, e) for i, e in extractors if tok.citation[i]]
    assert len(pats) > 6000  # reporters, laws and journals
    free = [e for i, e in pats if not tok.needs_digit(i)]
    assert 100 < len(free) < 600
    assert all(tok.needs_digit(i) == needs_digit(sre_parse.parse(e.regex, e.flags)) for i, e in pats)
    assert not any(tok.citation[i] for i, e in extractors if "supra" in e.strings or "id." in e.strings)
    abb = [e for e in free if "Abb\\.\\s*\\s*Adm" in e.regex]
    assert abb and any(e.compiled_regex.search("See Abb. Adm. xiv here.") for e in abb)
    assert [c.text for c in stored_citations("See 1 Abb. Adm. xiv here.")] == ["1 Abb. Adm. xiv"]


@pytest.mark.slow
def test_digit_first_patterns_begin_with_a_boundary_then_a_digit():
    tok, extractors = _extractors()
    flagged = [(i, e) for i, e in extractors if tok.digit_first[i]]
    assert len(flagged) > 6000
    for _, e in flagged:
        assert e.regex.startswith("(?:^|[^a-zA-Z0-9])(")
        first_group = sre_parse.parse(e.regex, e.flags)[1]
        assert first_group[0] is sre.SUBPATTERN and starts_with_digit(first_group[1][3]), e.regex


TRICKY = ["12 U.S. 5", "x12 U.S. 5 and (13 U.S. 6), 14 U.S. 7; 1999 WL 12345", "a\n500 F.2d 100\n",
          "\u0661\u0662 U.S. 5 \u0967\u0968 F. 3", "12 U.S. 512 U.S. 5", "9 Cal. 2d 1 9 Cal.2d 1", "", "no digits"]


@pytest.mark.slow
def test_matches_at_digit_starts_equal_finditer():
    tok, extractors = _extractors()
    flagged = [e for i, e in extractors if tok.digit_first[i]]
    texts = TRICKY + [p for p in _sample_paragraphs() if citations._DIGIT.search(p)][:300]
    for k, text in enumerate(texts):
        starts = citations._digit_starts(text)
        chosen = [tok.extractors[i] for i in tok.chosen(text) if tok.digit_first[i]]
        for e in flagged if k < len(TRICKY) else chosen:
            want = [(m.span(), m.groupdict()) for m in e.compiled_regex.finditer(text)]
            assert [(m.span(), m.groupdict()) for m in citations._matches(e.compiled_regex, text, starts)] == want


def _reversed_tokenizer():  # noqa: ANN202
    """eyecite's tokenizer running the same extractors as ours, in the reverse order."""
    from eyecite.tokenizers import AhocorasickTokenizer

    tok, _ = _extractors()

    class Reversed(AhocorasickTokenizer):
        def get_extractors(self, text: str) -> list:
            return [tok.extractors[i] for i in reversed(tok.chosen(text))]

    return Reversed()


def test_eyecite_own_answer_can_depend_on_hash_order_ours_does_not():
    """Two of eyecite's patterns match "N.Y. Corr. Law § 168" with different groups; eyecite keeps
    the first of its hash-ordered set. In eyecite's own extractor order it is "N.Y. Corr. Law"."""
    from eyecite import get_citations

    tok, _ = _extractors()
    text = "See N.Y. Corr. Law § 168."
    assert [c.corrected_citation() for c in get_citations(text, tokenizer=_reversed_tokenizer())] == [
        "N.Y. Law § 168"]
    assert [c.corrected_citation() for c in get_citations(text, tokenizer=tok)] == ["N.Y. Corr. Law § 168"]
    assert stored_citations(text) == (StoredCitation("statute", 4, 24, "N.Y. Corr. Law § 168",
                                                     "N.Y. Corr. Law § 168"),)


def test_without_eyecites_private_names_eyecite_itself_is_used(monkeypatch):
    text = ("In Smith v. Jones, 500 U.S. 100, 105 (1991), the Court held so. Id. at 106. See also 18 U.S.C. "
            "§ 1839(3); Brown, supra, at 7; 12 Harv. L. Rev. 10 (1990); Jones, 500 U.S. at 107.")
    fast = stored_citations(text)
    assert [c.kind for c in fast] == ["case", "statute", "journal", "case"]
    monkeypatch.setattr(citations, "_tokenizer", lambda: None)  # as if eyecite's private names were gone
    assert stored_citations(text) == fast == _reference(text)
    assert [c.kind for c in citations.find_citations(text)] == ["case", "id", "statute", "supra", "journal", "case"]


# ------------------------------------------------------------------------------ the data set


def _reference(text: str, tokenizer=None) -> tuple[StoredCitation, ...]:
    """eyecite's ``get_citations`` over ``text``, its citations of the stored kinds as a collection
    keeps them (one per span, in span order), as ingest computed them before stored_citations."""
    from eyecite import get_citations

    if not text.strip():
        return ()
    out = {}
    for c in get_citations(text, **({"tokenizer": tokenizer} if tokenizer is not None else {})):
        kind = citations.KINDS.get(type(c).__name__)
        if kind in STORED_KINDS:
            start, end = c.span()
            out[(start, end)] = StoredCitation(kind, start, end, c.matched_text(), c.corrected_citation())
    return tuple(out[k] for k in sorted(out))


def _records(folder: Path, limit: int | None = None) -> list[CaseRecord]:
    seen: dict[str, CaseRecord] = {}
    for z in sorted(folder.glob("*.zip"))[:limit]:
        for r in read_partition(Partition(str(z), "dataset")):
            if isinstance(r, CaseRecord):
                seen.setdefault(r.source_id, r)
    return list(seen.values())


_SAMPLE: list[str] = []


def _sample_paragraphs() -> list[str]:
    """The paragraphs of one term's cases (empty without the data set)."""
    from tests.support.paths import REAL_DATA

    if not _SAMPLE and REAL_DATA.is_dir():
        _SAMPLE.extend(p for r in _records(REAL_DATA, 1) for op in r.opinions for p in op.lines)
    return _SAMPLE


@pytest.fixture(scope="module")
def paragraphs(shared_data) -> list[str]:
    """Every line of every opinion of the data set's distinct cases (as ingest stores them)."""
    out = [p for r in _records(shared_data) for op in r.opinions for p in op.lines]
    assert len(out) > 90_000
    return out


@pytest.mark.slow
def test_paragraphs_without_a_digit(paragraphs):
    """The paragraphs without a digit: stored_citations (which tries only the patterns that need
    none) gives eyecite's answer on each."""
    plain = [p for p in paragraphs if not citations._DIGIT.search(p)]
    holding = [p for p in plain if _reference(p)]
    print(f"{len(plain)} of {len(paragraphs)} paragraphs without a digit, {len(holding)} with a stored citation")
    assert len(plain) > 10_000
    assert [p for p in plain if stored_citations(p) != _reference(p)] == []


@pytest.mark.slow
def test_stored_citations_are_eyecites_on_every_paragraph(paragraphs):
    """On every paragraph with a digit, stored_citations equals eyecite run as ingest ran it before
    (plain ``get_citations``); where they differ, eyecite's own answer depends on its extractors'
    order (plain eyecite takes them in the hash order of this process, PYTHONHASHSEED), and ours
    is the one eyecite gives in its own extractor order. Reversing that order is only one other
    order: a paragraph may give the same answer in eyecite's order and reversed, and another in
    the hash order, so the reversed answer is not required to differ."""
    tok, _ = _extractors()
    texts = [p for p in paragraphs if citations._DIGIT.search(p)]
    n_cites, order_dependent = 0, 0
    for text in texts:
        ours = stored_citations(text)
        n_cites += len(ours)
        if ours != _reference(text):
            assert ours == _reference(text, tok), text  # so plain eyecite's answer depends on the order
            order_dependent += 1
    print(f"{len(texts)} paragraphs, {n_cites} citations, {order_dependent} where eyecite's answer "
          "depends on the hash order")
    # How many paragraphs plain eyecite answers otherwise depends on the hash seed of the process
    # (9, 42 and 50 of 63,660 with three seeds): the bound is a share of the paragraphs, 0.5 %.
    assert n_cites > 40_000 and order_dependent < len(texts) // 200


@pytest.mark.slow
def test_collection_citations_table_equals_eyecite_over_every_paragraph(shared_data, tmp_path):
    """The citations table of a collection ingested with stored_citations equals the rows eyecite
    gives each stored paragraph (ingest before this change: plain ``get_citations`` per paragraph)."""
    zips = sorted(shared_data.glob("*.zip"))
    sources = [str(z) for z in zips if z.stem in ("dependent_on_hours_worked", "mechanical_recordation",
                                                 "semiconductor_chip_product")]
    assert len(sources) == 3
    ingest(sources, tmp_path / "col", fmt="dataset", statistics=False)
    tok, _ = _extractors()
    with sqlite3.connect(tmp_path / "col" / "collection.sqlite") as db:
        stored = db.execute("SELECT paragraph_id, start, end, kind, text, normalized FROM citations "
                            "ORDER BY paragraph_id, start, end, kind").fetchall()
        want = []
        for pid, text in db.execute("SELECT id, text FROM paragraphs ORDER BY id"):
            plain, ordered = _reference(text), _reference(text, tok)
            assert plain == ordered, text  # no order-dependent paragraph here: plain eyecite is the reference
            want += [(pid, c.start, c.end, c.kind, c.text, c.normalized) for c in plain]
    assert len(stored) > 300
    assert stored == sorted(want)
