"""The optimised paths give the same results as simple references (issue 4).

* vectorised sentence spans (:func:`statinterp.text.analysis.array_sentence_spans`) equal
  :func:`statinterp.text.segmentation.sentence_spans`, on hand-made texts and on real case texts;
* analysis in worker processes equals analysis in this process;
* :class:`~statinterp.index.term_index.StatsAccumulator` equals naive counting;
* the column-wise count matrix and the occurrences read off it equal a coordinate construction
  and ``np.bincount``; TF-ISF's and BM25's ``score_units`` (their one kernel on the entries where
  tf > 0) equal combining the dense evidence (the same kernel on the dense counts), bit for bit,
  and that combination equals a plain column-by-column sum;
* :meth:`Vocabulary.add_all <statinterp.text.analysis.Vocabulary.add_all>` equals adding one by one;
* a prepare that reads the analysis cache, and one that reads the prepared-corpus cache, equal a
  prepare without any cache (every array, every statistic, every lexical score).

No speed is asserted here: timings live in ``benchmarks/`` (``python -m benchmarks.run``).
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from spacy.attrs import IDX, IS_SPACE, LENGTH, SENT_START

from statinterp.errors import StatinterpWarning
from statinterp.index.term_index import StatsAccumulator, prepare, prepared_cache
from statinterp.rankers.grammar import build_method
from statinterp.text import analysis
from statinterp.text.analysis import Analyzer, TokenSeqs, Vocabulary, array_sentence_spans
from statinterp.text.segmentation import build_pipeline, sentence_spans
from statinterp.workflow import open_corpus

LEXICAL = [f"{base}{suffix}" for base in ("TF-ISF", "BM25", "QLLM") for suffix in ("", "-c", "-o", "-p", "-r")]

#: Texts with the awkward corners: leading/trailing/inner whitespace of every kind, empty lines,
#: whitespace-only texts, star-page lines, abbreviations, quotes and brackets after periods.
TRICKY = [
    "",
    " ",
    "\n\n \t\n",
    "One sentence.",
    "  Leading spaces. Trailing spaces.   ",
    "\nStarts with a newline.\nTwo lines here.\n",
    "See 17 U.S.C. § 1201(a)(3)(B) (2012). Id. at 5. The Court agreed.\n*457\nNext page starts here.",
    "He said, \"Stop.\" Then he left.  (It was late.) [Footnote.]\n\n\nAfter three newlines.",
    "A\u00a0non-breaking space. Tab\there.\r\nWindows line. Unicode\u2028line sep. Em\u2003space.",
    "*12\nA first line that is a page marker.",
    "Smith v. Jones, 123 F. Supp. 2d 456 (S.D.N.Y. 2001). Google, Inc. complied.   \n   \n",
    "etc. . . . and so on.    \t",
]


def _columns(doc):
    arr = doc.to_array([SENT_START, IDX, LENGTH, IS_SPACE]).astype(np.int64)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]


def _assert_spans_equal(nlp, texts):
    for doc in nlp.pipe(texts):
        expected = np.asarray(sentence_spans(doc), dtype=np.int32).reshape(-1, 2)
        if len(doc):
            got = array_sentence_spans(*_columns(doc))
        else:
            got = np.zeros((0, 2), dtype=np.int32)
        np.testing.assert_array_equal(got, expected, err_msg=repr(doc.text[:200]))


@pytest.mark.parametrize("legal_rules", [True, False])
def test_vectorised_sentence_spans_equal_the_reference_on_tricky_texts(legal_rules):
    _assert_spans_equal(build_pipeline(legal_rules=legal_rules), TRICKY)


def test_vectorised_sentence_spans_equal_the_reference_on_example_texts():
    corpus = open_corpus()
    texts = [c.text for t in corpus for c in t.cases.values()]
    _assert_spans_equal(build_pipeline(), texts)


@pytest.mark.slow
def test_vectorised_sentence_spans_equal_the_reference_on_real_case_texts(real_corpus):
    """A deterministic sample of real case texts (every 8th case of every term)."""
    texts = [c.text for t in real_corpus for c in list(t.cases.values())[::8]]
    assert len(texts) > 100
    _assert_spans_equal(build_pipeline(), texts)


def test_analyzer_uses_the_vectorised_spans(monkeypatch):
    """The analyzer's sentences are exactly segmentation.sentence_spans of each doc."""
    an = Analyzer(cache_dir=False, n_process=1)
    got = an.analyse(TRICKY)
    for text, at in zip(TRICKY, got, strict=False):
        doc = an.worker.nlp(text)
        expected = np.asarray(sentence_spans(doc), dtype=np.int32).reshape(-1, 2)
        np.testing.assert_array_equal(at.sentences, expected)


# --------------------------------------------------------------------------------------------
# Worker processes


def _words(an, analysed):
    words = an.vocab.words
    return [([words[i] for i in a.ids.tolist()], a.starts.tolist(), a.ends.tolist(), a.sentences.tolist())
            for a in analysed]


@pytest.mark.slow
def test_multi_process_analysis_equals_single_process(tmp_path):
    corpus = open_corpus()
    texts = [c.text for t in corpus for c in t.cases.values()] + TRICKY
    texts = texts + texts[:3]  # repeated texts are analysed once
    single = Analyzer(cache_dir=False, n_process=1)
    expected = single.analyse(texts)
    multi = Analyzer(cache_dir=tmp_path, n_process=2, batch_size=2)
    got = multi.analyse(texts)
    assert multi.vocab.words == single.vocab.words
    assert _words(multi, got) == _words(single, expected)
    for a, b in zip(got, expected, strict=False):
        np.testing.assert_array_equal(a.ids, b.ids)
    assert multi._pool is None  # no session: the processes are gone
    # the entries the main process wrote read back the same
    warm = Analyzer(cache_dir=tmp_path, n_process=1)
    assert _words(warm, warm.analyse(texts)) == _words(single, expected)


def test_automatic_process_count_and_sessions(monkeypatch):
    an = Analyzer(cache_dir=False)
    assert an.n_process is None
    small = [("a", "short text"), ("b", "another")]
    assert an._processes_for(small) == 1
    monkeypatch.setattr(Analyzer, "AUTO_PROCESS_CHARS", 5)
    monkeypatch.setattr(analysis, "_usable_cpus", lambda: 8)
    assert an._processes_for(small) == Analyzer.AUTO_MAX_PROCESSES
    monkeypatch.setattr(analysis, "_usable_cpus", lambda: 1)
    assert an._processes_for(small) == 1
    assert Analyzer(cache_dir=False, n_process=3)._processes_for(small) == 1  # too few texts for 3
    assert Analyzer(cache_dir=False, n_process=1)._processes_for(small * 10) == 1


@pytest.mark.slow
def test_a_session_keeps_the_worker_processes_for_every_call():
    corpus = open_corpus()
    texts = [c.text for t in corpus for c in t.cases.values()]
    an = Analyzer(cache_dir=False, n_process=2, batch_size=1)
    with an.session():
        first = an.analyse(texts[:4])
        pool = an._pool
        assert pool is not None
        an.forget()
        second = an.analyse(texts[:4] + texts[4:8])
        assert an._pool is pool
    assert an._pool is None
    plain = Analyzer(cache_dir=False, n_process=1)
    assert _words(an, second) == _words(plain, plain.analyse(texts[:8]))
    assert _words(an, first) == _words(plain, plain.analyse(texts[:4]))


def test_cache_writer_thread_reports_errors_in_the_caller(tmp_path, monkeypatch):
    """Errors of the background cache writes reach the caller of analyse."""
    def broken(self, digest, entry):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(analysis.AnalysisCache, "put", broken)
    an = Analyzer(cache_dir=tmp_path, n_process=1)
    with pytest.raises(RuntimeError, match="disk on fire"):
        an.analyse(TRICKY[3:6])


# --------------------------------------------------------------------------------------------
# Statistics and vocabulary


def _naive(batches):
    n_units = total = 0
    df: Counter = Counter()
    cf: Counter = Counter()
    for units in batches:
        for i in range(len(units)):
            row = units.row(i).tolist()
            if row:
                n_units += 1
            total += len(row)
            df.update(set(row))
            cf.update(row)
    return n_units, total, df, cf


@pytest.mark.parametrize("flush", [1, 50, 1 << 23])
@pytest.mark.parametrize("matrix", [1, 40, 1 << 16])
def test_stats_accumulator_equals_naive_counting(monkeypatch, flush, matrix):
    """Both ways to find distinct (unit, token) pairs (sorting, sparse matrix) and any flushing."""
    monkeypatch.setattr(StatsAccumulator, "FLUSH_IDS", flush)
    monkeypatch.setattr(StatsAccumulator, "MATRIX_IDS", matrix)
    rng = np.random.default_rng(7)
    batches = []
    for b in range(12):
        lengths = rng.integers(0, 9, size=int(rng.integers(0, 15)))
        vocab = int(rng.integers(1, 40 + 30 * b))
        seqs = [rng.integers(0, vocab, size=int(n)).astype(np.int32) for n in lengths]
        batches.append(TokenSeqs.from_list(seqs))
    acc = StatsAccumulator("sentence")
    for units in batches:
        acc.add(units)
    size = 500
    st = acc.result(size)
    n_units, total, df, cf = _naive(batches)
    assert (st.n_units, st.total_tokens) == (n_units, total)
    np.testing.assert_array_equal(st.df, [df.get(t, 0) for t in range(size)])
    np.testing.assert_array_equal(st.cf, [cf.get(t, 0) for t in range(size)])
    assert st.df.dtype == np.float64 and st.cf.dtype == np.float64


def _random_seqs(rng, n_max=30, vocab=20, length=6):
    n = int(rng.integers(0, n_max))
    seqs = [rng.integers(0, vocab, size=int(rng.integers(0, length))).astype(np.int32) for _ in range(n)]
    return TokenSeqs.from_list(seqs)


def test_count_matrices_equal_the_coordinate_construction_and_leave_the_ids_alone():
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    for _ in range(60):
        units = _random_seqs(rng)
        vocab = 20
        ids_before = units.ids.copy()
        rows = np.repeat(np.arange(len(units), dtype=np.int32), units.lengths)
        for got, kind in ((units.matrix(vocab), sp.csr_matrix), (units.columns(vocab), sp.csc_matrix)):
            ref = kind((np.ones(len(units.ids)), (rows, units.ids)), shape=(len(units), vocab))
            ref.sum_duplicates()
            assert got.format == ref.format and got.shape == ref.shape
            np.testing.assert_array_equal(got.indptr, ref.indptr)
            np.testing.assert_array_equal(got.indices, ref.indices)
            np.testing.assert_array_equal(got.data, ref.data)
        np.testing.assert_array_equal(units.ids, ids_before)


def test_collection_stats_equal_the_accumulator():
    from statinterp.index.term_index import collection_stats

    rng = np.random.default_rng(4)
    for _ in range(30):
        units = _random_seqs(rng)
        acc = StatsAccumulator("sentence")
        acc.add(units)
        a, b = acc.result(20), collection_stats("sentence", units, 20)
        assert (a.n_units, a.total_tokens) == (b.n_units, b.total_tokens)
        np.testing.assert_array_equal(a.df, b.df)
        np.testing.assert_array_equal(a.cf, b.cf)


def _dense_evidence(sim, query, units, stats, vocab):
    """TF-ISF and BM25 evidence as first written: dense counts, formulas over whole arrays."""
    from statinterp.rankers.lexical import BM25, TFISF

    tf = units.matrix(vocab)[:, query.ids].toarray()
    if isinstance(sim, TFISF):
        idf = np.log((stats.n_units + 1.0) / (0.5 + stats.df_of(query.ids)))
        return np.log1p(tf) * idf
    assert isinstance(sim, BM25)
    lengths = units.lengths.astype(np.float64)[:, None]
    avg = stats.avg_length or 1.0
    tf_part = np.nan_to_num((sim.k1 + 1.0) * tf / (sim.k1 * (1.0 - sim.b + sim.b * lengths / avg) + tf))
    df = stats.df_of(query.ids)
    return tf_part * np.log((stats.n_units - df + 0.5) / (df + 0.5))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the odd parameters divide by 0 on purpose
@pytest.mark.parametrize("params", [{}, {"k1": 0.0, "b": 1.0}, {"k1": 2.0, "b": 0.0}, {"k1": -0.5, "b": 1.5}])
def test_sparse_lexical_evidence_equals_the_dense_formulas(params):
    from statinterp.index.term_index import Query
    from statinterp.rankers.lexical import BM25, TFISF

    rng = np.random.default_rng(5)
    vocab = 20
    shim = type("Index", (), {"vocab": list(range(vocab))})()
    for _ in range(40):
        units = _random_seqs(rng)
        background = _random_seqs(rng, n_max=60)
        acc = StatsAccumulator("sentence")
        acc.add(background)
        stats = acc.result(vocab)
        ids = np.unique(rng.integers(0, vocab, size=int(rng.integers(0, 5)))).astype(np.int32)
        query = Query(ids, rng.integers(1, 3, size=len(ids)).astype(np.float64), [])
        for sim in (TFISF(), BM25(**params)):
            got = sim.evidence(query, units, stats, shim)
            ref = _dense_evidence(sim, query, units, stats, vocab)
            assert got.shape == ref.shape
            np.testing.assert_array_equal(got, ref)
            assert (np.signbit(got) == np.signbit(ref)).all()  # the same zeros too
            np.testing.assert_array_equal(sim.combine(got, query, stats), sim.combine(ref, query, stats))


def test_occurrences_count_every_id_and_out_of_range_ids_are_refused():
    rng = np.random.default_rng(6)
    for _ in range(30):
        units = _random_seqs(rng)
        np.testing.assert_array_equal(units.occurrences(20), np.bincount(units.ids, minlength=20))
        # a view whose offsets do not start at 0
        part = TokenSeqs(units.ids, units.offsets[len(units) // 2 :])
        rows = np.repeat(np.arange(len(part), dtype=np.int32), part.lengths)
        ids = units.ids[part.offsets[0] : part.offsets[-1]]
        ref = _coordinate_csc((np.ones(len(ids)), (rows, ids)), (len(part), 20))
        got = part.columns(20)
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
        assert got.dtype == np.float64
        np.testing.assert_array_equal(part.occurrences(20), np.bincount(ids, minlength=20))
    # counts are summed in the smallest integers that hold the longest row: rows at and past the limits
    for n in (255, 256, 65535, 65536):
        units = TokenSeqs.from_list([np.full(n, 3, dtype=np.int32), np.array([1, 3, 1], dtype=np.int32)])
        got = units.columns(20)
        assert got.dtype == np.float64 and got[0, 3] == n and got[1, 3] == 1 and got[1, 1] == 2 and got.nnz == 3
        assert units.occurrences(20)[3] == n + 1
    with pytest.raises(ValueError):
        TokenSeqs.from_list([np.array([0, 20], dtype=np.int32)]).columns(20)
    with pytest.raises(ValueError):
        TokenSeqs.from_list([np.array([-1, 2], dtype=np.int32)]).columns(20)


def _coordinate_csc(coo, shape):
    import scipy.sparse as sp

    m = sp.csc_matrix(coo, shape=shape)
    m.sum_duplicates()
    return m


def _sequential_sum(evidence, weights):
    """Σ_j evidence[:, j] · weights[j] by a plain loop, column after column from 0."""
    out = np.zeros(evidence.shape[0])
    for i in range(evidence.shape[0]):
        total = 0.0
        for j in range(evidence.shape[1]):
            total += float(evidence[i, j]) * float(weights[j])
        out[i] = total
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the odd parameters divide by 0 on purpose
@pytest.mark.parametrize("params", [{}, {"k1": 0.0, "b": 1.0}, {"k1": 2.0, "b": 0.0, "k3": 0.0},
                                    {"k1": -0.5, "b": 1.5}, {"k3": -1.0}])
@pytest.mark.parametrize("background", ["random", "larger df than N"])
def test_sparse_unit_scores_equal_combining_the_dense_evidence(params, background):
    """``score_units`` of TF-ISF and BM25 adds only the query tokens' entries (or falls back to
    the dense path); it equals ``combine(evidence)`` bit for bit, and ``combine`` equals a plain
    column-by-column sum (and a matrix product up to rounding)."""
    from statinterp.index.term_index import Query
    from statinterp.rankers.lexical import BM25, TFISF

    rng = np.random.default_rng(8)
    vocab = 20
    shim = type("Index", (), {"vocab": list(range(vocab))})()
    for _ in range(40):
        units = _random_seqs(rng, n_max=40, length=9)
        acc = StatsAccumulator("sentence")
        acc.add(_random_seqs(rng, n_max=60))
        stats = acc.result(vocab)
        if background != "random":  # statistics of another collection: IDF may be NaN or infinite
            stats.df[: vocab // 2] += stats.n_units + 1.0
        ids = np.unique(rng.integers(0, vocab, size=int(rng.integers(0, 7)))).astype(np.int32)
        query = Query(ids, rng.integers(1, 4, size=len(ids)).astype(np.float64), [])
        for sim in (TFISF(), BM25(**params)):
            evidence = sim.evidence(query, units, stats, shim)
            combined = sim.combine(evidence, query, stats)
            got = sim.score_units(query, units, stats, shim)
            assert got.shape == (len(units),) and got.dtype == np.float64
            np.testing.assert_array_equal(got, combined)
            weights = (np.log1p(query.counts) if isinstance(sim, TFISF)
                       else (sim.k3 + 1.0) * query.counts / (sim.k3 + query.counts))
            np.testing.assert_array_equal(combined, _sequential_sum(evidence, weights))
            if np.isfinite(combined).all():
                np.testing.assert_allclose(combined, evidence @ weights, rtol=1e-13, atol=1e-13)


def test_vocabulary_add_all_equals_adding_one_by_one():
    words = ["b", "a", "b", "c", "a", "d", "", "e"]
    one = Vocabulary()
    expected = [one.add(w) for w in words[:3]] + [one.add(w) for w in words[3:]]
    many = Vocabulary()
    got = many.add_all(words[:3]).tolist() + many.add_all(words[3:]).tolist()
    assert got == expected and many.words == one.words
    assert many.add_all([]).shape == (0,) and many.add_all([]).dtype == np.int32


# --------------------------------------------------------------------------------------------
# Cold, warm and cached prepare


def _scores(prepared):
    return {(name, ix.key): build_method(name).score(ix) for name in LEXICAL for ix in prepared}


def _assert_same_prepared(a, b):
    assert a.analyzer.vocab.words == b.analyzer.vocab.words
    assert list(a.indices) == list(b.indices)
    assert (a.background.description, a.fallbacks) == (b.background.description, b.fallbacks)
    for ix, jx in zip(a, b, strict=False):
        assert len(ix) == len(jx)
        for lvl, u in ix.levels.items():
            v = jx.levels[lvl]
            np.testing.assert_array_equal(u.seqs.ids, v.seqs.ids)
            np.testing.assert_array_equal(u.seqs.offsets, v.seqs.offsets)
            np.testing.assert_array_equal(u.row, v.row)
            assert u.labels == v.labels
        assert set(ix.neighbours) == set(jx.neighbours)
        for d, u in ix.neighbours.items():
            np.testing.assert_array_equal(u.seqs.ids, jx.neighbours[d].seqs.ids)
            np.testing.assert_array_equal(u.seqs.offsets, jx.neighbours[d].seqs.offsets)
            np.testing.assert_array_equal(u.row, jx.neighbours[d].row)
        np.testing.assert_array_equal(ix.single_segment, jx.single_segment)
        for lvl, x in ix.background.stats.items():
            y = jx.background[lvl]
            assert (x.level, x.n_units, x.total_tokens) == (y.level, y.n_units, y.total_tokens)
            np.testing.assert_array_equal(x.df, y.df)
            np.testing.assert_array_equal(x.cf, y.cf)
        np.testing.assert_array_equal(ix.query.ids, jx.query.ids)
        np.testing.assert_array_equal(ix.query.counts, jx.query.counts)
        assert ix.query.tokens == jx.query.tokens
        assert (ix.provision is None) == (jx.provision is None)
        if ix.provision is not None:
            np.testing.assert_array_equal(ix.provision.ids, jx.provision.ids)
    sa, sb = _scores(a), _scores(b)
    for key, value in sa.items():
        np.testing.assert_array_equal(value, sb[key], err_msg=str(key))


def _prepared_files(folder):
    return sorted((folder / "prepared").rglob("*.bin"))


@pytest.mark.slow
@pytest.mark.parametrize("statistics", ["background", "candidates"])
def test_cold_warm_and_cached_prepare_agree(tmp_path, monkeypatch, statistics):
    corpus = open_corpus()
    plain = prepare(corpus, Analyzer(cache_dir=False), statistics=statistics)
    cold = prepare(corpus, Analyzer(cache_dir=tmp_path), statistics=statistics)
    _assert_same_prepared(plain, cold)
    assert len(_prepared_files(tmp_path)) == 1

    def no_spacy(self, texts, *args, **kwargs):
        raise AssertionError("spaCy ran although the corpus is cached")

    monkeypatch.setattr(analysis._Worker, "run", no_spacy)
    warm = prepare(corpus, Analyzer(cache_dir=tmp_path), statistics=statistics)  # prepared-corpus cache
    _assert_same_prepared(plain, warm)
    for path in _prepared_files(tmp_path):
        path.unlink()
    warm_analysis = prepare(corpus, Analyzer(cache_dir=tmp_path), statistics=statistics)  # analysis cache only
    _assert_same_prepared(plain, warm_analysis)


@pytest.mark.slow
def test_cold_and_cached_prepare_agree_on_real_terms(real_corpus, tmp_path):
    from statinterp.corpus.dataset import Corpus

    corpus = Corpus({k: real_corpus.terms[k] for k in ("semiconductor_chip_product", "mechanical_recordation")})
    plain = prepare(corpus, Analyzer(cache_dir=False, n_process=1))
    cold = prepare(corpus, Analyzer(cache_dir=tmp_path, n_process=2))
    warm = prepare(corpus, Analyzer(cache_dir=tmp_path))
    _assert_same_prepared(plain, cold)
    _assert_same_prepared(plain, warm)


def test_prepared_cache_key_follows_the_corpus_content(tmp_path):
    from dataclasses import replace

    corpus = open_corpus()
    an = Analyzer(cache_dir=tmp_path)
    key = prepared_cache(corpus, an, "background", None).key
    assert prepared_cache(corpus, Analyzer(cache_dir=tmp_path), "background", None).key == key
    assert prepared_cache(corpus, an, "candidates", None).key != key
    term = corpus.terms["vehicle"]
    s0 = term.sentences[0]
    changed = replace(s0, text=s0.text[:-1])
    term.sentences[0] = changed
    try:
        assert prepared_cache(corpus, an, "background", None).key != key
    finally:
        term.sentences[0] = s0
    # labels and the provision are not part of the arrays: they do not change the key
    term.sentences[0] = replace(s0, label=None)
    try:
        assert prepared_cache(corpus, an, "background", None).key == key
    finally:
        term.sentences[0] = s0
    assert prepared_cache(corpus, Analyzer(cache_dir=False), "background", None) is None
    used = Analyzer(cache_dir=tmp_path)
    used.vocab.add("word")
    assert prepared_cache(corpus, used, "background", None) is None  # ids would differ


@pytest.mark.slow
def test_damaged_prepared_cache_is_discarded_with_a_warning_and_rebuilt(tmp_path):
    corpus = open_corpus()
    plain = prepare(corpus, Analyzer(cache_dir=False))
    prepare(corpus, Analyzer(cache_dir=tmp_path))
    (path,) = _prepared_files(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.warns(StatinterpWarning, match="damaged prepared cache entry"):
        again = prepare(corpus, Analyzer(cache_dir=tmp_path))
    _assert_same_prepared(plain, again)
    (path,) = _prepared_files(tmp_path)  # rebuilt
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatinterpWarning)
        _assert_same_prepared(plain, prepare(corpus, Analyzer(cache_dir=tmp_path)))


@pytest.mark.slow
def test_prepared_cache_yields_to_a_changed_analysis_entry(tmp_path):
    """A damaged analysis entry is still found (and reported) although a prepared file exists."""
    corpus = open_corpus()
    plain = prepare(corpus, Analyzer(cache_dir=False))
    prepare(corpus, Analyzer(cache_dir=tmp_path))
    entries = sorted((tmp_path / "analysis").rglob("*.bin"))
    entries[0].write_bytes(entries[0].read_bytes()[:-10])
    with pytest.warns(StatinterpWarning, match="damaged analysis cache entry"):
        again = prepare(corpus, Analyzer(cache_dir=tmp_path))
    _assert_same_prepared(plain, again)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatinterpWarning)
        _assert_same_prepared(plain, prepare(corpus, Analyzer(cache_dir=tmp_path)))


@pytest.mark.parametrize("name", ["TF-ISF", "BM25", "QLLM"])
def test_explain_shows_the_evidence_each_score_is_made_of(example, name):
    """One kernel per formula: the per-token evidence ``explain`` shows, combined, is the score
    (bit for bit where the sum is taken in the same order: TF-ISF, BM25)."""
    ix = example["vehicle"]
    sim = build_method(name)
    scores = sim.score(ix)
    stats = ix.background["sentence"]
    for i in range(len(ix)):
        tokens = sim.explain(ix, i)["query tokens"]
        assert list(tokens) == [ix.vocab.words[t] for t in ix.query.ids]
        evidence = np.array([[v["evidence"] for v in tokens.values()]])
        again = sim.combine(sim.direct(evidence), ix.query, stats)[0]
        if name == "QLLM":  # a matrix product: the last bits may depend on the shape
            assert again == pytest.approx(scores[i], rel=1e-13)
        else:
            assert again == scores[i]
