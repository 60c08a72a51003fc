"""BM25 against a peer: statinterp's vectorised BM25 vs ``rank_bm25.BM25Okapi``.

Collection: every spaCy sentence (with at least one token) of every distinct case text of the
loaded terms, pre-tokenised once by statinterp's analysis (lower-cased lemmas); statinterp gets
the token ids (:class:`~statinterp.text.analysis.TokenSeqs`), rank_bm25 the same tokens as lists of
strings. Queries: the terms' queries (each query token occurs once in its query). Both use
k1 = 1.2, b = 0.75 and statistics (N, df, average length) of this collection.

Where the formulas agree: IDF is log((N - df + 0.5) / (df + 0.5)) in both; rank_bm25 replaces a
negative IDF (a token in more than half of the sentences) by epsilon x the mean IDF, so queries
with such a token are timed but left out of the ranking comparison; statinterp's query-term saturation
(k3 + 1) qtf / (k3 + qtf) is 1 for tokens that occur once in the query; rank_bm25's average
length counts empty documents, so empty sentences are left out of the collection. Under these
conditions both compute the same score, so the rankings (score descending, ties by position)
must be identical.

Where they differ (not compared): statistics from each term's own candidate sentences make
IDF negative for the query tokens (every candidate contains the term; see ``stats.py``), and
rank_bm25 then substitutes epsilon x mean IDF; repeated query tokens count once per occurrence
in rank_bm25 but saturate with k3 in statinterp.

Timed: "index" = statinterp's column-wise count matrix and the collection statistics read off
it (:func:`statinterp.index.term_index.collection_stats`; checked equal to a ``StatsAccumulator``) vs
BM25Okapi's construction; "query" = scoring every sentence for every query. Each is the median of
``repeats`` runs, alternating the two implementations.
"""

from __future__ import annotations

import statistics
import time

import numpy as np


class _VocabSize:
    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n


def collect(corpus, analyzer):
    """(TokenSeqs of every non-empty spaCy sentence of every distinct case text, queries as
    (key, ids, tokens))."""
    from statinterp.index.term_index import Query, _ranges
    from statinterp.text.analysis import TokenSeqs

    texts = list(dict.fromkeys(c.text for t in corpus for c in t.cases.values()))
    parts = []
    for i in range(0, len(texts), 64):
        for at in analyzer.analyse(texts[i : i + 64]):
            seqs = TokenSeqs.from_ranges(at.ids, *_ranges(at, at.sentences))
            keep = np.flatnonzero(seqs.lengths > 0)
            parts.append(seqs.take(keep))
        analyzer.forget()
    units = TokenSeqs.concat(parts)
    queries = []
    for term in corpus:
        q = Query.from_tokens(analyzer.tokens(term.query), analyzer.vocab)
        queries.append((term.key, q))
    return units, queries


def run(corpus, analyzer, repeats: int = 3) -> dict:
    from rank_bm25 import BM25Okapi

    from statinterp.index.term_index import StatsAccumulator, collection_stats
    from statinterp.rankers.lexical import BM25
    from statinterp.text.analysis import TokenSeqs

    units, queries = collect(corpus, analyzer)
    vocab_size = len(analyzer.vocab)
    words = np.asarray(analyzer.vocab.words, dtype=object)
    docs = [words[units.row(i)].tolist() for i in range(len(units))]
    for key, q in queries:
        if (q.counts != 1).any():
            raise RuntimeError(f"query {key} repeats a token; the formulas would differ")
    shim = type("Index", (), {"vocab": _VocabSize(vocab_size)})()
    times = {"statinterp_index": [], "statinterp_query": [], "rank_bm25_index": [], "rank_bm25_query": []}
    cpu = {k: [] for k in times}  # CPU seconds of this process beside the wall seconds (shared machine)
    ours: dict[str, np.ndarray] = {}
    peer: dict[str, np.ndarray] = {}

    def timed(key, f):
        wall, proc = time.perf_counter(), time.process_time()
        out = f()
        times[key].append(time.perf_counter() - wall)
        cpu[key].append(time.process_time() - proc)
        return out

    for _ in range(repeats):
        fresh = TokenSeqs(units.ids, units.offsets)  # no memoised matrix from the previous repeat
        # builds the count matrix scoring reads
        # the lambdas run at once inside timed(); default arguments bind this repeat's values (B023)
        stats = timed("statinterp_index", lambda fresh=fresh: collection_stats("sentence", fresh, vocab_size))
        bm25 = BM25(k1=1.2, b=0.75)
        ours = timed("statinterp_query",
                     lambda bm25=bm25, fresh=fresh, stats=stats: {key: bm25.score_units(q, fresh, stats, shim)
                                                                  for key, q in queries})
        okapi = timed("rank_bm25_index", lambda: BM25Okapi(docs, k1=1.2, b=0.75, epsilon=0.25))
        peer = timed("rank_bm25_query",
                     lambda okapi=okapi: {key: okapi.get_scores([words[i] for i in q.ids.tolist()])
                                          for key, q in queries})

    check = StatsAccumulator("sentence")
    check.add(units)
    check = check.result(vocab_size)
    if not (np.array_equal(check.df, stats.df) and np.array_equal(check.cf, stats.cf)
            and (check.n_units, check.total_tokens) == (stats.n_units, stats.total_tokens)):
        raise RuntimeError("collection_stats differs from StatsAccumulator")
    n = stats.n_units
    identical = compared = 0
    max_diff = 0.0
    per_query = {}
    for key, q in queries:
        a, b = ours[key], peer[key]
        df = stats.df_of(q.ids)
        agree = bool((df < n / 2).all())  # no negative IDF: rank_bm25's epsilon floor does not apply
        order_a = np.lexsort((np.arange(len(a)), -a))
        order_b = np.lexsort((np.arange(len(b)), -b))
        same = bool(np.array_equal(order_a, order_b))
        diff = float(np.max(np.abs(a - b))) if len(a) else 0.0
        if agree:
            compared += 1
            identical += same
            max_diff = max(max_diff, diff)
        per_query[key] = {"tokens": len(q), "formulas_agree": agree, "same_ranking": same, "max_abs_diff": diff,
                          "top10_same": bool(np.array_equal(order_a[:10], order_b[:10])),
                          "max_df_over_N": float(df.max() / n) if len(q) else 0.0,
                          "negative_idf_tokens": [str(words[t]) for i, t in enumerate(q.ids.tolist())
                                                  if df[i] >= n / 2]}
    med = {k: statistics.median(v) for k, v in times.items()}
    # where the formulas differ: each term's own candidate sentences as the collection
    negative = _negative_idf_in_candidate_collections(corpus, analyzer, queries)
    return {
        "sentences": len(units), "tokens": int(len(units.ids)), "vocabulary": vocab_size, "queries": len(queries),
        "query_tokens": int(sum(len(q) for _, q in queries)), "compared": compared,
        "times": times, "median": med, "cpu": cpu, "median_cpu": {k: statistics.median(v) for k, v in cpu.items()},
        "speedup_index": med["rank_bm25_index"] / med["statinterp_index"],
        "speedup_query": med["rank_bm25_query"] / med["statinterp_query"],
        "speedup_total": (med["rank_bm25_index"] + med["rank_bm25_query"])
        / (med["statinterp_index"] + med["statinterp_query"]),
        "identical_rankings": identical, "max_abs_diff": max_diff, "per_query": per_query,
        "candidate_collections_negative_idf": negative,
    }


def _negative_idf_in_candidate_collections(corpus, analyzer, queries) -> dict:
    """How many query tokens get a negative IDF when a term's candidates are the collection."""
    from collections import Counter

    neg = total = 0
    for term, (_key, q) in zip(corpus, queries, strict=False):
        tokens = [set(analyzer.tokens(s.text)) for s in term.sentences]
        df = Counter(t for toks in tokens for t in toks)
        n = len(tokens)
        for t in q.tokens:
            total += 1
            neg += df.get(t, 0) > n / 2
    return {"negative": neg, "query_tokens": total}
