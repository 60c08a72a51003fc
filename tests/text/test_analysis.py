"""Text analysis (statinterp.text.analysis): the token definition, the on-disk cache and its repair,
and slicing tokens by character offsets."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statinterp.cache.store import default_cache_dir
from statinterp.corpus.dataset import load_corpus
from statinterp.text import analysis
from statinterp.text.analysis import Analyzer
from statinterp.workflow import example_data_path

TEXTS = [
    "The Vehicles, vehicles!  CARS; and a car's wheel.\nSection 12 applies to 3 trucks -- § 4.",
    "A bicycle is plainly a vehicle. It carries a rider.\nThe ordinance (Park Ord. § 1) says so.",
]


@pytest.fixture(scope="module")
def analyzer():
    return Analyzer(cache_dir=False)


def _words(an: Analyzer, ids) -> list[str]:
    return [an.vocab.words[i] for i in ids]


# --------------------------------------------------------------------------------------------
# What a token is


def test_tokens_are_lowercased_lemmas_of_word_tokens(analyzer):
    assert analyzer.tokens("Vehicles") == ["vehicle"]
    assert analyzer.tokens("The Vehicles, vehicles! CARS; 3 trucks -- § 4.") == [
        "the", "vehicle", "vehicle", "car", "3", "truck", "4"]
    assert analyzer.tokens("... -- §§ (!) ;") == []
    assert analyzer.tokens("") == []


def test_analysed_tokens_match_tokens_and_point_at_their_characters(analyzer):
    text = TEXTS[0]
    at = analyzer.analyse([text])[0]
    assert _words(analyzer, at.ids) == analyzer.tokens(text)
    assert len(at.starts) == len(at.ends) == len(at.ids)
    assert np.all(np.diff(at.starts) > 0) and np.all(at.ends > at.starts)
    forms = [text[s:e] for s, e in zip(at.starts, at.ends, strict=False)]
    assert forms[:5] == ["The", "Vehicles", "vehicles", "CARS", "and"]
    for form in forms:  # every token holds a letter or a digit; punctuation is never a token
        assert any(ch.isalnum() for ch in form), form
    assert "§" not in "".join(forms) and "," not in "".join(forms)
    # sentence spans are character spans of the text, in order, not crossing the line break
    spans = [tuple(s) for s in at.sentences.tolist()]
    nl = text.index("\n")
    assert spans == sorted(spans)
    assert all(not (s < nl < e) for s, e in spans)
    assert text[spans[0][0]:spans[0][1]].startswith("The Vehicles")


def test_the_same_text_is_analysed_once(monkeypatch, tmp_path):
    calls = []
    original = analysis._Worker.run

    def counting(self, texts, *args, **kwargs):
        calls.append(list(texts))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(analysis._Worker, "run", counting)
    an = Analyzer(cache_dir=tmp_path)
    out = an.analyse([TEXTS[0], TEXTS[1], TEXTS[0]])
    assert sum(len(c) for c in calls) == 2
    assert out[0] is out[2]
    an.analyse([TEXTS[1]])  # in memory now: spaCy does not run again
    assert sum(len(c) for c in calls) == 2


# --------------------------------------------------------------------------------------------
# The cache


def _cache_files(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "analysis").rglob("*.bin"))


def _forbid_spacy(monkeypatch):
    def fail(self, texts, *args, **kwargs):
        raise AssertionError(f"spaCy ran on {len(texts)} text(s) although they are cached")

    monkeypatch.setattr(analysis._Worker, "run", fail)


def _assert_same(a_an, a_list, b_an, b_list):
    for a, b in zip(a_list, b_list, strict=True):
        np.testing.assert_array_equal(a.starts, b.starts)
        np.testing.assert_array_equal(a.ends, b.ends)
        np.testing.assert_array_equal(a.sentences, b.sentences)
        np.testing.assert_array_equal(a.ids, b.ids)
        assert _words(a_an, a.ids) == _words(b_an, b.ids)


def test_second_run_reads_the_cache_without_spacy(monkeypatch, tmp_path):
    first = Analyzer(cache_dir=tmp_path)
    cold = first.analyse(TEXTS)
    files = _cache_files(tmp_path)
    assert len(files) == len(TEXTS)
    assert all(str(p).startswith(str(tmp_path)) for p in files)

    _forbid_spacy(monkeypatch)
    second = Analyzer(cache_dir=tmp_path)
    warm = second.analyse(TEXTS)
    _assert_same(first, cold, second, warm)
    assert second.vocab.words == first.vocab.words
    assert _cache_files(tmp_path) == files


@pytest.mark.slow
def test_uncached_cold_and_warm_runs_agree(tmp_path):
    plain = Analyzer(cache_dir=False)
    ref = plain.analyse(TEXTS)
    cold_an = Analyzer(cache_dir=tmp_path)
    cold = cold_an.analyse(TEXTS)
    warm_an = Analyzer(cache_dir=tmp_path)
    warm = warm_an.analyse(TEXTS)
    _assert_same(plain, ref, cold_an, cold)
    _assert_same(plain, ref, warm_an, warm)
    assert not list(tmp_path.rglob("*.tmp"))  # no stray temporary files


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not an analysis cache entry\n" * 5)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_truncate, _garbage, _empty, _flip_middle_byte],
                         ids=["truncated", "garbage", "empty", "flipped-byte"])
@pytest.mark.slow
def test_damaged_cache_entry_is_warned_about_discarded_and_rebuilt(monkeypatch, tmp_path, damage):
    first = Analyzer(cache_dir=tmp_path)
    good = first.analyse(TEXTS)
    target = first.cache.path(analysis.text_hash(TEXTS[1]))
    assert target.exists()
    damage(target)

    second = Analyzer(cache_dir=tmp_path)
    with pytest.warns(UserWarning, match="damaged"):
        again = second.analyse(TEXTS)
    _assert_same(first, good, second, again)
    assert target.exists()  # rebuilt

    _forbid_spacy(monkeypatch)  # the rebuilt entry is whole: a third run reads it silently
    third = Analyzer(cache_dir=tmp_path)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _assert_same(first, good, third, third.analyse(TEXTS))


@pytest.mark.slow
def test_entry_of_another_text_is_not_used(tmp_path):
    """An intact entry stored under the wrong text's name must not pass for that text."""
    first = Analyzer(cache_dir=tmp_path)
    good = first.analyse(TEXTS)
    a = first.cache.path(analysis.text_hash(TEXTS[0]))
    b = first.cache.path(analysis.text_hash(TEXTS[1]))
    shutil.copyfile(a, b)
    second = Analyzer(cache_dir=tmp_path)
    with pytest.warns(UserWarning, match="damaged"):
        again = second.analyse(TEXTS)
    _assert_same(first, good, second, again)


def test_cache_location_follows_statinterp_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("STATINTERP_CACHE", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    an = Analyzer()
    an.analyse(["A vehicle."])
    assert _cache_files(tmp_path / "here")


def test_tests_never_use_the_users_cache(analysis_cache_dir):
    assert default_cache_dir() == analysis_cache_dir
    assert default_cache_dir() != Path.home() / ".cache" / "statinterp"


# --------------------------------------------------------------------------------------------
# Slicing by offsets


def test_token_range_keeps_only_whole_tokens(analyzer):
    text = "Vehicles and bicycles."
    at = analyzer.analyse([text])[0]
    assert at.token_range(0, len(text)) == (0, 3)
    assert _words(analyzer, at.tokens(0, 8)) == ["vehicle"]
    assert _words(analyzer, at.tokens(0, 7)) == []  # "Vehicle" cut short: not wholly inside
    assert _words(analyzer, at.tokens(1, 12)) == ["and"]
    assert _words(analyzer, at.tokens(9, len(text))) == ["and", "bicycle"]
    lo, hi = at.token_range(3, 3)
    assert hi == lo  # an empty range never has a negative length


def test_tokens_by_offsets_equal_separate_analysis_on_example_data():
    """Each sentence and paragraph of the example data, sliced out of its case analysis by
    character offsets, has the tokens of its own separate analysis."""
    term = load_corpus(example_data_path()).term("vehicle")
    an = Analyzer(cache_dir=False)
    case_ids = sorted(term.cases)
    hosts = dict(zip(case_ids, an.analyse([term.cases[c].text for c in case_ids]), strict=False))
    checked = 0
    pieces = [(s.case_id, s.text) for s in term.sentences]
    pieces += [(p.case_id, p.text) for p in term.paragraphs.values()]
    pieces += [(o.case_id, o.text) for o in term.opinions.values()]
    for case_id, text in pieces:
        case_text = term.cases[case_id].text
        start = case_text.find(text)
        assert start >= 0
        by_offsets = _words(an, hosts[case_id].tokens(start, start + len(text)))
        alone = an.analyse([text])[0]
        assert by_offsets == _words(an, alone.ids), text
        assert by_offsets == an.tokens(text)
        checked += 1
    assert checked == 47 + 42 + 10


@pytest.mark.slow
def test_a_long_run_keeps_spacys_vocabulary_and_the_memos_bounded(monkeypatch):
    """spaCy's pipeline is built afresh when its string store passes the limit, and the lemma
    memo and the segmenter's class cache forget themselves at their limits; the analyses are
    those of an unbounded run."""
    from statinterp.text import segmentation

    texts = [f"Case {k}: the zqx{k}word and blorf{k}ing rules. It applied {k * 7} times." for k in range(40)]

    def analysed(an: Analyzer) -> list[tuple[list[str], list[int], list]]:
        return [([an.vocab.words[i] for i in a.ids], a.starts.tolist(), a.sentences.tolist())
                for a in an.analyse(texts)]

    expected = analysed(Analyzer(cache_dir=False, n_process=1))
    monkeypatch.setattr(analysis, "MAX_MEMO_FORMS", 5)
    monkeypatch.setattr(segmentation, "MAX_CACHED_CLASSES", 5)
    worker = analysis._Worker(legal_rules=True)
    strings_fresh = len(worker.nlp.vocab.strings)
    monkeypatch.setattr(analysis, "MAX_SPACY_STRINGS", strings_fresh + 10)
    for batch in (texts[:20], texts[20:]):
        worker.run(batch)
        assert len(worker.nlp.vocab.strings) == strings_fresh  # a pipeline built afresh: the new words are gone
        assert len(worker.lemmas._memo) <= 5
        assert len(segmentation._class_cache) <= 5 + 20  # the limit, plus one text's distinct tokens
    assert analysed(Analyzer(cache_dir=False, n_process=1)) == expected
    assert any("zqx3word" in words for words, _, _ in expected)
    assert len({w for words, _, _ in expected for w in words}) > 100  # unbounded, the caches would hold them all


# --------------------------------------------------------------------------------------------
# The tokenizer cache warmer (spaCy's cache is skipped after a text's first special case)

_CHUNKS = ["U.S.", "can't", "Cir.", "(a)", "F.3d", "§", "1201(a)(3).", "don't", "Mr.", "e.g.,", "pre-employment",
           "“quoted”", "http://x.com/a.", "--", "Id.", "id", "Co.,", ":)", "U.S.C.", "'s", "court's", "word",
           "Word.", "(1)", "*457", "i.e.", "St.", "$1,000.00", "10%.", "A/B", "Supp.", "2d", "¶", "3.", "...",
           "vehicles,", "Vehicles;", "Ill.", "ill."]


def _tokens(nlp, texts: list[str]) -> list[list[tuple[str, str, bool]]]:
    return [[(t.text, t.whitespace_, bool(t.is_sent_start)) for t in doc] for doc in nlp.pipe(texts)]


@pytest.fixture(scope="module")
def plain_nlp():
    from statinterp.text.segmentation import build_pipeline

    return build_pipeline()


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(_CHUNKS), st.sampled_from([" ", "  ", "\n", " \n", "\t"])),
                         max_size=40), min_size=1, max_size=4))
def test_warming_the_tokenizer_cache_changes_no_token(plain_nlp, chunked):
    """Tokens and sentences of warmed texts are those of a fresh pipeline's (cache as spaCy fills it)."""
    from statinterp.text.segmentation import build_pipeline

    texts = ["".join(c + gap for c, gap in text) for text in chunked]
    warmed = build_pipeline()
    analysis.TokenizerCacheWarmer(warmed).warm(texts)
    assert _tokens(warmed, texts) == _tokens(plain_nlp, texts)


@pytest.mark.slow
def test_warmed_analysis_of_real_case_text_equals_a_plain_spacy_pass(plain_nlp, real_corpus):
    """On real case texts (special cases early in each: the case spaCy's cache skips), the
    worker's warmed pass gives the tokens and sentences of a plain pass, and its tokenizer has
    taken every chunk of the texts."""
    term = real_corpus.term("technological measure")
    texts = [term.cases[c].text for c in sorted(term.cases)[:6]]
    worker = analysis._Worker(legal_rules=True)
    worker.run(texts)
    assert worker.tokenizer_cache._seen == {chunk for t in texts for chunk in t.split()}
    assert worker.nlp.tokenizer.max_cache_size >= analysis.MAX_WARM_CHUNKS
    assert _tokens(worker.nlp, texts) == _tokens(plain_nlp, texts)


def test_the_warmer_stops_at_its_limit():
    from statinterp.text.segmentation import build_pipeline

    warmer = analysis.TokenizerCacheWarmer(build_pipeline(), max_chunks=10)
    texts = [" ".join(f"w{k}x{i}" for i in range(8)) for k in range(5)]
    warmer.warm(texts)
    assert len(warmer._seen) == 16  # two texts' chunks: the limit was passed within the second


@pytest.mark.slow
def test_analyser_accepts_texts_beyond_spacys_default_max_length():
    from statinterp.text.analysis import Analyzer

    text = "The vehicle is in the park. " * 40_000  # 1.12 million characters > spaCy's 1,000,000
    (analysed,) = Analyzer(cache_dir=False).analyse([text])
    assert len(analysed.ids) == 6 * 40_000
    assert len(analysed.sentences) == 40_000
