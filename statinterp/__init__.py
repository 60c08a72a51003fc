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
#: so they are imported only when a name is first used (PEP 562); ``import statinterp.cli``
#: and ``statinterp --help`` stay fast.
_EXPORTS = {
    "Analyzer": ".analysis",
    "Interpolated": ".context", "Recursive": ".context",
    "Corpus": ".corpus", "TermData": ".corpus", "load_corpus": ".corpus",
    "InputError": ".errors", "StatinterpError": ".errors", "UsageError": ".errors",
    "macro_average": ".evaluation", "ndcg": ".evaluation", "parse_metric": ".evaluation",
    "random_baseline_ndcg": ".evaluation",
    "PreparedCorpus": ".index", "TermIndex": ".index", "prepare": ".index",
    "build_method": ".methods", "list_methods": ".methods",
    "load_provisions": ".provisions",
    "Ranking": ".ranking", "rank": ".ranking",
    "Ranker": ".scorers.base", "Similarity": ".scorers.base",
    "BM25": ".scorers.lexical", "QLLM": ".scorers.lexical", "TFISF": ".scorers.lexical",
    "evaluate_methods": ".workflow", "example_data_path": ".workflow", "open_corpus": ".workflow",
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
