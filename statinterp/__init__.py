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

from .analysis import Analyzer
from .context import Interpolated, Recursive
from .corpus import Corpus, TermData, load_corpus
from .errors import InputError, StatinterpError, UsageError
from .evaluation import macro_average, ndcg, parse_metric, random_baseline_ndcg
from .index import PreparedCorpus, TermIndex, prepare
from .methods import build_method, list_methods
from .provisions import load_provisions
from .ranking import Ranking, rank
from .scorers.base import Ranker, Similarity
from .scorers.lexical import BM25, QLLM, TFISF
from .workflow import evaluate_methods, example_data_path, open_corpus, prepare_corpus

__version__ = "0.1.0"

__all__ = [
    "Analyzer", "BM25", "Corpus", "InputError", "Interpolated", "PreparedCorpus", "QLLM", "Ranker", "Ranking",
    "Recursive", "Similarity", "StatinterpError", "TFISF", "TermData", "TermIndex", "UsageError", "build_method",
    "evaluate_methods", "example_data_path", "list_methods", "load_corpus", "load_provisions", "macro_average",
    "ndcg", "open_corpus", "parse_metric", "prepare", "prepare_corpus", "random_baseline_ndcg", "rank",
]
