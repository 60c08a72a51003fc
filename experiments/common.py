"""What the research studies in ``experiments/`` share: paths, logging, a term's labelled
candidates with their features, and the leave-one-term-out ensemble fit.

Studies (not speed benchmarks, which live in ``benchmarks/``) are run from the repository root,
e.g. ``python -m experiments.learned_limits --data ../shared/data/statutory_interpretation``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "statutory_interpretation"
MASK = " targetterm "


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Term:
    """One term's candidates: features, gains (NaN: unlabelled), tie-break ids, term-masked texts."""

    def __init__(self, index, features):
        from statinterp.learned.sentence_patterns import term_pattern

        self.key = index.key
        self.query = index.term.query
        self.X = features.X
        self.gains = np.asarray(index.gains, dtype=np.float64)
        self.labelled = ~np.isnan(self.gains)
        self.ids = index.sentence_ids.astype(str)
        self.texts = [s.text for s in index.sentences]
        rx = term_pattern(self.query)
        self.masked = [rx.sub(MASK, t) for t in self.texts]


def load_terms(data: Path, cache_dir: Path | None, settings):
    """Prepare the corpus at ``data`` and extract the features of each labelled term.

    Returns ``(prepared, terms, (names, families))``: the prepared corpus, a :class:`Term` per
    labelled term key, and the feature column names and families (the same for every term).
    """
    from statinterp.learned.features import extract_features
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(data), cache_dir=cache_dir, show_progress=True)
    terms: dict[str, Term] = {}
    columns: tuple[list[str], list[str]] = ([], [])
    for index in prepared:
        if index.term.labelled:
            log(f"features of {index.key}")
            fm = extract_features(index, settings)
            columns = (fm.names, fm.families)
            terms[index.key] = Term(index, fm)
    return prepared, terms, columns



def term_sample_weights(train: list[Term]) -> np.ndarray:
    """Each training term counts equally, as in the learned ranker's pointwise learners (mean 1)."""
    from statinterp.learned.model import term_weights

    return term_weights([t.gains[t.labelled] for t in train])


def fit_ensemble(train: list[Term], test: Term, settings, names, families) -> np.ndarray:
    from statinterp.learned.features import FeatureMatrix
    from statinterp.learned.model import fit_matrices

    mats = [FeatureMatrix(t.X, names, families, {}) for t in train]
    model = fit_matrices(mats, [t.gains for t in train], [t.key for t in train], settings, "ensemble", 0)
    return model.score_matrix(test.X)



def shown_data(data: Path) -> str:
    """``data`` as a command line should show it: relative to the repository for the shared data
    (wherever the checkout is: a worktree's shared data is not beside it)."""
    shared = ("shared", "data", "statutory_interpretation")
    resolved = Path(data).resolve()
    return "../" + "/".join(shared) if resolved == DEFAULT_DATA.resolve() or resolved.parts[-3:] == shared \
        else str(data)
