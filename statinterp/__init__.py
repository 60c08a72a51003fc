"""statinterp: rank case-law sentences that explain a statutory term.

Typical use::

    from statinterp import open_corpus, prepare_corpus, build_method, rank, evaluate_methods

    corpus = open_corpus("path/to/statutory_interpretation")   # or None for the example data
    prepared = prepare_corpus(corpus)
    ranking = rank(build_method("TF-ISF-p"), prepared["technological measure"])
    for row in ranking.rows(5):
        print(row.rank, row.score, row.text)
    print(ranking.evaluate())                                  # {'nDCG@10': ..., 'nDCG@100': ...}
"""

import importlib

#: Where each exported name lives. The submodules pull in spaCy, gensim, SciPy and friends,
#: so they are imported only when a name is first used (PEP 562); ``import statinterp.app.cli``
#: and ``statinterp --help`` stay fast.
_EXPORTS = {
    "Analyzer": ".text.analysis",
    "Interpolated": ".rankers.base", "Recursive": ".rankers.base",
    "Corpus": ".corpus.dataset", "TermData": ".corpus.dataset", "load_corpus": ".corpus.dataset",
    "InputError": ".errors", "StatinterpError": ".errors", "UsageError": ".errors",
    "macro_average": ".evaluation.metrics", "ndcg": ".evaluation.metrics", "parse_metric": ".evaluation.metrics",
    "random_baseline_ndcg": ".evaluation.metrics",
    "PreparedCorpus": ".index.term_index", "TermIndex": ".index.term_index", "prepare": ".index.term_index",
    "build_method": ".rankers.grammar", "list_methods": ".rankers.grammar", "parse_method": ".rankers.grammar",
    "with_params": ".rankers.grammar",
    "DomainGate": ".rankers.gates", "Expanded": ".rankers.base", "Gate": ".rankers.base", "Gated": ".rankers.base",
    "NoveltyGate": ".rankers.gates",
    "NewWordRatio": ".rankers.novelty", "NewWords": ".rankers.novelty", "NoveltyMeasure": ".rankers.novelty",
    "WMDNovelty": ".rankers.novelty",
    "Cosine": ".rankers.cosine", "RandomOrder": ".rankers.lexical",
    "load_provisions": ".corpus.provisions",
    "Ranking": ".evaluation.ranking", "rank": ".evaluation.ranking", "results_frame": ".evaluation.ranking",
    "Component": ".rankers.base", "Ranker": ".rankers.base", "Requirements": ".rankers.base",
    "Similarity": ".rankers.base",
    "BM25": ".rankers.lexical", "QLLM": ".rankers.lexical", "TFISF": ".rankers.lexical",
    "evaluate_methods": ".evaluation.ranking", "example_data_path": ".workflow", "open_corpus": ".workflow",
    "prepare_corpus": ".workflow",
}

__version__ = "0.1.0"

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
