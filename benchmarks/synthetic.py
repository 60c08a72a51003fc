"""Synthetic corpora for the growth benchmark, drawn from the real data's distributions.

:func:`write_profile` records, from a prepared real corpus, what a synthetic corpus needs: the
sentence-level unigram distribution of the background collection (``cf``), a sample of real
candidate sentence lengths, the mean number of spaCy sentences per paragraph (line) and of
paragraphs per case, and the token ids of the real queries.

:func:`build_synthetic` then generates ``n`` candidate sentences whose lengths are drawn from
the real lengths and whose tokens are drawn from the real unigram distribution; consecutive
sentences form paragraphs (sizes geometric with the real mean) and consecutive paragraphs form
cases. It builds the :class:`~statinterp.index.term_index.UnitSet` of each level directly (the paragraph and
case levels share the sentence level's token array), computes the background statistics of the
synthetic collection itself and returns a :class:`~statinterp.index.term_index.TermIndex` that the toolkit's
rankers score as they score a real term.
"""

from __future__ import annotations

import time

import numpy as np

#: The rankers timed by the growth benchmark: each lexical similarity alone and with its
#: paragraph and case context.
GROWTH_METHODS = [f"{base}{suffix}" for base in ("TF-ISF", "BM25", "QLLM") for suffix in ("", "-p", "-c")]

#: The query of the synthetic term (its tokens' real ids are used).
GROWTH_QUERY = "leadership_role_in_an_organization"


def write_profile(prepared, path: str) -> dict:
    """Save the real distributions (see the module docstring) to ``path`` (an ``.npz``)."""
    bg = prepared.background
    lengths = np.concatenate([ix.levels["sentence"].seqs.lengths for ix in prepared])
    queries = {ix.key: ix.query.ids.astype(np.int32) for ix in prepared}
    info = {
        "vocab_size": len(prepared.analyzer.vocab),
        "sentences_per_paragraph": bg["sentence"].n_units / bg["paragraph"].n_units,
        "paragraphs_per_case": bg["paragraph"].n_units / bg["case"].n_units,
    }
    np.savez(path, cf=bg["sentence"].cf, lengths=lengths[lengths > 0].astype(np.int32),
             sentences_per_paragraph=info["sentences_per_paragraph"],
             paragraphs_per_case=info["paragraphs_per_case"],
             **{f"query:{k}": v for k, v in queries.items()})
    return info


class _VocabSize:
    """Stands in for the vocabulary: scorers only need its length."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n


def _group(n: int, mean: float, rng: np.random.Generator) -> np.ndarray:
    """Boundaries (offsets into ``0..n``) of consecutive groups with geometric sizes of ``mean``."""
    sizes = rng.geometric(1.0 / max(mean, 1.0), size=n // max(int(mean), 1) + 16)
    while sizes.sum() < n:
        sizes = np.concatenate([sizes, rng.geometric(1.0 / max(mean, 1.0), size=len(sizes))])
    ends = np.cumsum(sizes)
    ends = ends[: int(np.searchsorted(ends, n)) + 1]
    ends[-1] = n
    return np.concatenate([[0], ends]).astype(np.int64)


def build_synthetic(n: int, profile_path: str, seed: int = 0):
    """A :class:`TermIndex` of ``n`` synthetic candidate sentences; and facts about it."""
    from statinterp.index.term_index import LEVELS, Background, Query, StatsAccumulator, TermIndex, UnitSet
    from statinterp.text.analysis import TokenSeqs

    prof = np.load(profile_path)
    rng = np.random.default_rng(seed)
    cf = prof["cf"]
    p = cf / cf.sum()
    lengths = rng.choice(prof["lengths"], size=n).astype(np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    ids = np.searchsorted(cdf, rng.random(total), side="right").astype(np.int32)
    ids = np.minimum(ids, len(cf) - 1)
    sentences = TokenSeqs(ids, offsets)
    par_bounds = _group(n, float(prof["sentences_per_paragraph"]), rng)  # in sentences
    case_bounds = _group(len(par_bounds) - 1, float(prof["paragraphs_per_case"]), rng)  # in paragraphs
    paragraphs = TokenSeqs(ids, offsets[par_bounds])
    cases = TokenSeqs(ids, offsets[par_bounds[case_bounds]])
    par_of = np.repeat(np.arange(len(par_bounds) - 1), np.diff(par_bounds))
    case_of_par = np.repeat(np.arange(len(case_bounds) - 1), np.diff(case_bounds))
    levels = {
        "sentence": UnitSet(sentences, np.arange(n, dtype=np.int64)),
        "paragraph": UnitSet(paragraphs, par_of.astype(np.int64)),
        "opinion": UnitSet(cases, case_of_par[par_of].astype(np.int64)),  # one opinion per case
        "case": UnitSet(cases, case_of_par[par_of].astype(np.int64)),
    }
    start = time.perf_counter()
    stats = {}
    for lvl in LEVELS:
        acc = StatsAccumulator(lvl)
        acc.add(levels[lvl].seqs)
        stats[lvl] = acc.result(len(cf))
    stats_wall = time.perf_counter() - start
    growth_key = f"query:{GROWTH_QUERY}"
    qids = prof[growth_key] if growth_key in prof else prof[[k for k in prof if k.startswith("query:")][0]]
    query = Query(np.asarray(qids, dtype=np.int32), np.ones(len(qids)), [str(i) for i in qids])
    index = TermIndex(term=None, sentences=[None] * n, levels=levels, neighbours={},
                      single_segment=np.ones(n, dtype=bool), query=query, provision=None,
                      background=Background(stats, "the synthetic collection"), vocab=_VocabSize(len(cf)),
                      analyzer=None)
    info = {"tokens": total, "paragraphs": len(par_bounds) - 1, "cases": len(case_bounds) - 1,
            "statistics_wall": stats_wall, "query_tokens": len(qids)}
    return index, info


def rank_all(index) -> dict[str, float]:
    """Seconds to score and order the candidates with each of :data:`GROWTH_METHODS`."""
    from statinterp.evaluation.metrics import rank_order
    from statinterp.rankers.grammar import build_method

    n = len(index)
    ids = np.char.add("s", np.char.zfill(np.arange(n).astype(str), 8))  # sentence ids, as strings
    out = {}
    for name in GROWTH_METHODS:
        start = time.perf_counter()
        scores = build_method(name).score(index)
        order = rank_order(scores, ids)
        out[name] = time.perf_counter() - start
        assert len(order) == n and np.isfinite(scores).all()
    return out
