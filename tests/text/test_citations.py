"""eyecite's citations (statinterp.text.citations): extraction, ingest's stored citations, the
learned features' case columns with each source, and a saved model's source."""

from __future__ import annotations

import json
import logging
import pickle

import numpy as np
import pytest

from statinterp.collection.ingest import Citation, citations_of
from statinterp.errors import UsageError
from statinterp.learned import sentence_patterns
from statinterp.learned.features import CASE_CITATIONS, FeatureSettings, extract_features
from statinterp.learned.model import fit_ranker, load_model, read_header, save_model
from statinterp.sources import Partition, read_partition
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.text import citations
from statinterp.text.citations import case_citation_share, cites_case, find_citations
from statinterp.workflow import example_data_path
from tests.support.cli import run_main
from tests.support.corpora import example_as_two_terms
from tests.support.paths import REPO_ROOT

TEXT = ("In Smith v. Jones, 500 U.S. 100, 105 (1991), the Court held so. Id. at 106. See also 18 U.S.C. "
        "§ 1839(3); Brown, supra, at 7; 12 Harv. L. Rev. 10 (1990); Jones, 500 U.S. at 107.")
CASE_COLUMNS = ("citations:case", "citations:par_case", "citations:case_cite_share")
FAST = FeatureSettings(families=("citations",), vectors="off")


def test_find_citations_kinds_spans_and_sections():
    found = find_citations(TEXT)
    assert [(c.kind, c.text) for c in found] == [
        ("case", "500 U.S. 100"), ("id", "Id."), ("statute", "18 U.S.C. § 1839"), ("supra", "supra,"),
        ("journal", "12 Harv. L. Rev. 10"), ("case", "500 U.S. at 107")]
    for c in found:
        assert TEXT[c.start:c.end].startswith(c.text) and c.full_start <= c.start < c.end <= c.full_end
    full = found[0]
    assert TEXT[full.full_start:full.full_end].endswith("(1991)") and "Smith v. Jones" in TEXT[:full.full_end]
    assert found[2].section == "1839" and found[2].normalized == "18 U.S.C. § 1839"
    assert all(c.section == "" for c in found if c.kind != "statute")
    assert find_citations("The jury found for the plaintiff.") == () == find_citations("") == find_citations(" \n")
    assert [c.kind for c in find_citations("Id.")] == ["id"]  # no digit needed: Id. and supra point back


def test_case_flags_and_share():
    assert cites_case("Id. at 5.") and cites_case("Smith, supra.") and cites_case("See 283 U.S. 25 (1931).")
    assert not cites_case("See 18 U.S.C. § 1839.") and not cites_case("12 Harv. L. Rev. 10 (1990).")
    assert not cites_case("The Smith v. Jones rule applies.")  # a name alone is no citation (the regex says yes)
    assert sentence_patterns.cites_case("The Smith v. Jones rule applies.")
    cite = "Smith v. Jones, 500 U.S. 100 (1991)"
    assert case_citation_share(cite) > 0.9 and case_citation_share("x " * 200 + cite) < 0.1
    assert case_citation_share("No citation here.") == 0.0 and case_citation_share("") == 0.0
    assert 0.0 < case_citation_share("Id. Id. at 4.") <= 1.0  # spans counted once, never above 1


def test_cached_citations_memoises_per_text(monkeypatch):
    citations.cached_citations.cache_clear()
    calls = []
    real = citations.find_citations
    monkeypatch.setattr(citations, "find_citations", lambda t: calls.append(t) or real(t))
    for _ in range(3):
        assert citations.cites_case(TEXT) and citations.case_citation_share(TEXT) > 0
    assert calls == [TEXT]
    citations.cached_citations.cache_clear()


# ------------------------------------------------------------------------------ ingest


def _citations_before(record: CaseRecord) -> tuple[Citation, ...]:
    """Ingest's citations as they were computed before statinterp.text.citations (eyecite called directly)."""
    from eyecite import get_citations

    logging.getLogger("eyecite").setLevel(logging.ERROR)
    kinds = {"FullCaseCitation": "case", "ShortCaseCitation": "case", "FullLawCitation": "statute",
             "FullJournalCitation": "journal"}
    out = []
    for i, op in enumerate(record.opinions):
        for j, para in enumerate(op.paragraphs):
            if not any(ch.isdigit() for ch in para):
                continue
            for cite in get_citations(para):
                kind = kinds.get(type(cite).__name__)
                if kind is None:
                    continue
                start, end = cite.span()
                out.append(Citation(i, j, kind, int(start), int(end), cite.matched_text(), cite.corrected_citation()))
    return tuple(out)


def test_ingest_stores_the_same_citations():
    records = [r for r in read_partition(Partition(str(example_data_path()), "dataset")) if isinstance(r, CaseRecord)]
    assert records
    invented = CaseRecord("test", "1", "Invented v. Case", "Invented", "2020-01-01", "", (), "", "", "", "", "", "",
                          (OpinionRecord("majority", None, ("No cite.", TEXT, "Smith, supra.", "Id.")),))
    for record in records + [invented]:
        assert citations_of(record) == _citations_before(record)
    stored = citations_of(invented)
    assert [c.kind for c in stored] == ["case", "statute", "journal", "case"]  # never Id. or supra
    assert {c.paragraph for c in stored} == {1}


# ------------------------------------------------------------------------------ features


def test_settings_validate_and_record_the_source():
    assert set(CASE_CITATIONS) == {"eyecite", "regex"}
    with pytest.raises(UsageError, match="case_citations"):
        FeatureSettings(case_citations="both")
    for source in CASE_CITATIONS:
        s = FeatureSettings(case_citations=source)
        assert s.to_dict()["case_citations"] == source
        assert FeatureSettings.from_dict(s.to_dict()) == s
        assert pickle.loads(pickle.dumps(s)).case_citations == source


def test_case_columns_with_each_source(example):
    ix = example["vehicle"]
    mats = {src: extract_features(ix, FeatureSettings.from_dict({**FAST.to_dict(), "case_citations": src}))
            for src in CASE_CITATIONS}
    assert mats["eyecite"].names == mats["regex"].names  # same columns: a saved model's names still match
    sents = ix.sentences
    for src, mod in (("eyecite", citations), ("regex", sentence_patterns)):
        fm = mats[src]
        assert fm.column("citations:case").tolist() == [float(mod.cites_case(s.text)) for s in sents]
        assert fm.column("citations:par_case").tolist() == [
            float(mod.cites_case(ix.term.paragraphs[s.paragraph_id].text)) for s in sents]
        assert np.allclose(fm.column("citations:case_cite_share"), [mod.case_citation_share(s.text) for s in sents])
    # only the case columns differ; the statute and provision columns stay the regexes'
    other = [j for j, n in enumerate(mats["regex"].names) if n not in CASE_COLUMNS]
    assert np.array_equal(mats["eyecite"].X[:, other], mats["regex"].X[:, other])
    assert mats["eyecite"].column("citations:par_case").sum() > 0


def test_swapping_the_case_columns_is_the_eyecite_extraction(example):
    """experiments/citation_agreement builds the eyecite matrix from the regex one by replacing the
    case columns: the same matrix as a whole extraction with case_citations='eyecite'."""
    ix = example["vehicle"]
    base = FeatureSettings(vectors="off")
    regex = extract_features(ix, FeatureSettings.from_dict({**base.to_dict(), "case_citations": "regex"}))
    eyecite = extract_features(ix, FeatureSettings.from_dict({**base.to_dict(), "case_citations": "eyecite"}))
    only = extract_features(ix, FeatureSettings.from_dict({**base.to_dict(), "families": ["citations"],
                                                           "case_citations": "eyecite"}))
    X = regex.X.copy()
    for name in CASE_COLUMNS:
        X[:, regex.names.index(name)] = only.column(name)
    assert regex.names == eyecite.names and np.array_equal(X, eyecite.X)


# ------------------------------------------------------------------------------ saved models


def test_a_saved_model_keeps_its_source(example, tmp_path):
    for source in CASE_CITATIONS:
        settings = FeatureSettings.from_dict({**FAST.to_dict(), "case_citations": source})
        model = fit_ranker(list(example), settings, "pairwise")
        path = save_model(model, tmp_path / f"{source}.model")
        assert read_header(path)[0]["features"]["case_citations"] == source
        loaded = load_model(path)
        assert loaded.settings.case_citations == source
        assert np.array_equal(loaded.score(example["vehicle"]), model.score(example["vehicle"]))


def test_a_model_saved_before_the_setting_reads_regex_columns(example):
    settings = FeatureSettings(case_citations="eyecite")
    del settings.__dict__["case_citations"]  # as pickled before the setting existed
    assert pickle.loads(pickle.dumps(settings)).case_citations == "regex"
    shipped = REPO_ROOT / "data" / "models" / "default.statinterp-model"
    if shipped.is_file():
        header, _ = read_header(shipped)
        loaded = load_model(shipped).settings.case_citations
        assert loaded == header["features"].get("case_citations", "regex")


def test_cli_option_matches_the_settings(capsys):
    from statinterp.app.research_commands import cv, train

    default = FeatureSettings().case_citations
    for command in (cv, train):
        option = next(p for p in command.params if p.name == "case_citations")
        assert sorted(option.type.choices) == sorted(CASE_CITATIONS)
        assert f"Default: {default} " in option.help


@pytest.mark.slow
def test_cv_records_the_source_and_check_reruns_it(tmp_path, capsys):
    data = example_as_two_terms(tmp_path / "two")
    reports = tmp_path / "reports"
    code, _, err = run_main(capsys, "cv", "--data", str(data), "-q", "--learner", "pairwise", "--no-vector-features",
                            "--compounds", "Tp-Nr", "--no-importance", "--case-citations", "eyecite",
                            "--report-dir", str(reports))
    assert code == 0, err
    doc = json.loads((reports / "learned.json").read_text())
    assert doc["features"]["case_citations"] == "eyecite"
    assert doc["metadata"]["command"].endswith("--case-citations eyecite --report-dir " + str(reports))
    code, out, err = run_main(capsys, "reproduce", "--check", str(reports / "learned.json"), "-q")
    assert code == 0, out + err


@pytest.mark.slow
def test_court_lookup_answers_as_eyecite_does():
    """citations.court_by_paren (put in eyecite's place for speed) gives eyecite's own answer for
    every courts-db citation string, its prefixes and spellings, and strings no court has."""
    import eyecite.helpers
    from courts_db import courts
    from hypothesis import given, settings
    from hypothesis import strategies as st

    find_citations("Smith v. Jones, 500 F.2d 100 (2d Cir. 1974).")  # installs the fast lookup
    original = eyecite.helpers.__dict__["get_court_by_paren"]
    assert original is citations.court_by_paren
    slow = citations._eyecite_court_by_paren()
    assert slow is not citations.court_by_paren
    probes = {"", "  ", "2d Cir.", "2d Cir. 1974", "D.C. Cir", "Pa.Super.", "SC", "N.Y. App. Div.", "Tex. Crim. App.",
              "Cal. Ct. App. 1999", "D. Mass.", "Zzz", "ÉTAT", "9th"}
    for court in courts[::7]:
        s = court["citation_string"]
        probes.update({s, s.upper(), s.replace(" ", ""), s[: max(1, len(s) // 2)]})
    for probe in sorted(probes):
        assert citations.court_by_paren(probe) == slow(probe), probe

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet=st.sampled_from("abcdnpsty.,( )2Cir9ÉD"), max_size=12))
    def same(s):
        assert citations.court_by_paren(s) == slow(s)

    same()
