"""The learned ranker: scikit-learn models over the features of :mod:`.features`, as a Ranker.

Learners (``learner=``):

``linear``
    Pointwise ridge regression on the gains (features standardised over the training
    sentences; each training term weighs the same, whatever its number of sentences).
``pairwise``
    A linear pairwise ranker (RankNet/RankSVM style): logistic regression on feature
    differences x_i − x_j of sentence pairs of the *same* term with different gains, the
    target being g_i > g_j. The same number of pairs is drawn from every training term
    (``pairs_per_term``), so every term weighs the same; each pair appears in both orders.
``hgb``
    Pointwise gradient-boosted trees (:class:`~sklearn.ensemble.HistGradientBoostingRegressor`)
    on the gains, each term weighing the same.
``ensemble`` (default)
    The mean of the ``pairwise`` and ``hgb`` scores, each z-scored over the term's candidates
    (so neither dominates by scale).

A trained :class:`LearnedRanker` is a :class:`~statinterp.rankers.base.Ranker`: ranking,
evaluation and the CLI treat it like any method. Its name is ``learned:<file stem>`` when
loaded from a file (``learned:<learner>`` before it is saved).

scikit-learn fits the learners; a fitted learner keeps only plain arrays (a linear one: the
feature means, standard deviations and coefficients; the trees: :class:`.trees.TreeArrays`) and
scores from them with the same operations as scikit-learn, so scores are the same bits.

Model files (:func:`save_model` / :func:`load_model`, format 2): a first line
``STATINTERP-MODEL``, a second line holding a JSON header (format version, statinterp /
scikit-learn / NumPy / Python versions, learner, hyperparameters, feature settings, names and
families, training terms, skipped feature groups, payload size and a SHA-256 checksum), then the
fitted arrays as an ``.npz`` archive, read with ``allow_pickle=False``. Reading a model file runs
no code from it. Files are written atomically (:mod:`statinterp.cache.files`). Format 1 files
(a pickle after the header) are refused; ``statinterp model upgrade`` converts one that the user
trusts (:func:`upgrade_model`, below).

**The shipped model**: what ``statinterp rank`` (and ``review``) use when
neither a method nor a model is chosen.

``data/models/default.statinterp-model`` (installed as ``statinterp.data``): the ``ensemble``
learner trained on the 14 terms of the annotated data set with the feature families that need
no word vectors. How it was made and how it scores: ``data/models/README.md``.

**Format-1 files** (a joblib pickle) are converted to the current format by
:func:`upgrade_model` (``statinterp model upgrade``). Reading a format-1 file unpickles it, and
unpickling runs whatever code the file carries. So nothing else in statinterp reads one
(:func:`load_model` refuses it with a line pointing here); :func:`upgrade_model` does, only when
the user runs ``statinterp model upgrade`` on a file they trust. The pickled components (a
scikit-learn ``StandardScaler`` and coefficients, or a ``HistGradientBoostingRegressor``) are
turned into plain arrays, then the arrays' scores are checked to be the same bits as scikit-
learn's on a probe matrix (and on the features the caller gives, if any) before the new file is
written.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import sys
import warnings
import zipfile
import zlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from statinterp.cache import files as atomic
from statinterp.cache.files import NotRegularFile, TooLarge, open_regular
from statinterp.errors import InputError, StatinterpWarning, UsageError, read_limited
from statinterp.learned.features import FeatureMatrix, FeatureSettings, extract_features, features_of_index, zscore
from statinterp.learned.trees import BadTrees, TreeArrays
from statinterp.rankers.base import Ranker

__all__ = ["LEARNERS", "LearnedRanker", "fit_ranker", "fit_matrices", "save_model", "load_model",
           "read_header", "MAGIC", "FORMAT_VERSION", "PICKLE_FORMAT", "default_model_path", "default_ranker",
           "read_pickled_model", "upgrade_model"]

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

MAGIC = b"STATINTERP-MODEL"

FORMAT_VERSION = 2

LEARNERS = {
    "ensemble": "the default: mean of the pairwise and hgb scores, each z-scored within the term",
    "pairwise": "logistic regression on feature differences of same-term sentence pairs (linear)",
    "linear": "pointwise ridge regression on the gains (linear)",
    "hgb": "pointwise gradient-boosted trees (HistGradientBoostingRegressor) on the gains",
}


def term_weights(groups: Sequence[np.ndarray]) -> np.ndarray:
    """Sample weights (mean 1) under which each group (one training term's rows) counts equally."""
    w = np.concatenate([np.full(len(g), 1.0 / max(1, len(g))) for g in groups])
    return w / w.mean() if len(w) else w

_BLAS_CONTROLLER: list = []


def one_blas_thread():
    """A context in which BLAS runs on one thread. The linear learners' solvers (L-BFGS, Cholesky)
    and scores are BLAS products whose last bits depend on how many threads share a product; on
    one thread the fitted coefficients, and so the rankings, are the same on any machine load and
    core count. (The learners' matrices are small: one thread costs little.) The thread-pool
    controller is made once (after scikit-learn has loaded SciPy's BLAS): making one per call
    costs ~30 ms, which thousands of scorings (permutation importance) would pay."""
    import sklearn.linear_model  # noqa: F401 - loads every BLAS the learners use before the controller looks
    from threadpoolctl import ThreadpoolController

    if not _BLAS_CONTROLLER:
        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


class LearnerComponent:
    """One learner fitted with scikit-learn, kept as plain arrays: ``raw(X)`` scores,
    ``contributions(X, i)``; ``hyperparameters()`` and ``arrays()`` are what a model file stores."""

    kind = ""

    def fit(self, mats: list[np.ndarray], gains: list[np.ndarray], seed: int) -> LearnerComponent:
        raise NotImplementedError

    def hyperparameters(self) -> dict:
        raise NotImplementedError

    def arrays(self) -> dict[str, np.ndarray]:
        """The fitted state, by name (numeric arrays only)."""
        raise NotImplementedError

    def raw(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def contributions(self, X: np.ndarray, i: int) -> np.ndarray:
        """Per feature, the change of candidate ``i``'s raw score when the feature is set to its
        term mean (the candidates' mean) instead of its value."""
        base = self.raw(X[i: i + 1])[0]
        means = X.mean(axis=0)
        probe = np.repeat(X[i: i + 1], X.shape[1], axis=0)
        probe[np.arange(X.shape[1]), np.arange(X.shape[1])] = means
        return base - self.raw(probe)


class LinearComponent(LearnerComponent):
    """Ridge (pointwise) or logistic regression on pair differences (pairwise), standardised.

    Its fitted state is three arrays: the training sentences' feature means ``mean_`` and
    standard deviations ``scale_`` (scikit-learn's :class:`~sklearn.preprocessing.StandardScaler`)
    and the coefficients ``coef_`` of the standardised features. Scores are computed from them
    with the same operations, in the same order, as scikit-learn's, so they are the same bits."""

    def __init__(self, kind: str, alpha: float = 10.0, C: float = 0.003, pairs_per_term: int = 3000):
        self.kind = kind
        self.alpha = alpha
        self.C = C
        self.pairs_per_term = pairs_per_term

    def hyperparameters(self) -> dict:
        return {"alpha": self.alpha, "C": self.C, "pairs_per_term": self.pairs_per_term}

    def fit(self, mats, gains, seed):
        with one_blas_thread():
            return self._fit(mats, gains, seed)

    def _fit(self, mats, gains, seed):
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.preprocessing import StandardScaler

        X = np.vstack(mats)
        scaler = StandardScaler().fit(X)
        if self.kind == "linear":
            y = np.concatenate(gains)
            model = Ridge(alpha=self.alpha).fit(scaler.transform(X), y, sample_weight=term_weights(gains))
            return self.set_state(scaler.mean_, scaler.scale_, model.coef_)
        rng = np.random.default_rng(seed)
        diffs, targets = [], []
        for Xt, g in zip(mats, gains, strict=False):
            if len(g) < 2 or len(np.unique(g)) < 2:
                continue
            Z = scaler.transform(Xt)
            i = rng.integers(0, len(g), self.pairs_per_term * 2)
            j = rng.integers(0, len(g), self.pairs_per_term * 2)
            keep = g[i] != g[j]
            i, j = i[keep][: self.pairs_per_term], j[keep][: self.pairs_per_term]
            d = Z[i] - Z[j]
            t = (g[i] > g[j]).astype(int)
            diffs += [d, -d]
            targets += [t, 1 - t]
        if not diffs:
            raise UsageError("pairwise training needs a term with at least two different labels")
        model = LogisticRegression(C=self.C, fit_intercept=False, max_iter=5000)
        model.fit(np.vstack(diffs), np.concatenate(targets))
        return self.set_state(scaler.mean_, scaler.scale_, model.coef_[0])

    def set_state(self, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray) -> LinearComponent:
        self.mean_ = np.asarray(mean, dtype=np.float64)
        self.scale_ = np.asarray(scale, dtype=np.float64)
        self.coef_ = np.asarray(coef, dtype=np.float64)
        return self

    def arrays(self) -> dict[str, np.ndarray]:
        return {"mean": self.mean_, "scale": self.scale_, "coef": self.coef_}

    def standardise(self, X: np.ndarray) -> np.ndarray:
        """``(X - mean_) / scale_`` as ``StandardScaler.transform`` computes it (a copy in the
        input's memory order, then in-place subtraction and division), so that the product with
        ``coef_`` below is the same BLAS call on the same bytes."""
        Z = np.array(X, dtype=np.float64, order="K", copy=True)
        Z -= self.mean_
        Z /= self.scale_
        return Z

    def raw(self, X):
        with one_blas_thread():
            return self.standardise(X) @ self.coef_

    def contributions(self, X, i):
        """coef × standardised value (standardised with the training sentences' mean and sd)."""
        with one_blas_thread():
            return self.coef_ * self.standardise(X[i: i + 1])[0]


class TreesComponent(LearnerComponent):
    """Gradient-boosted trees (scikit-learn's :class:`~sklearn.ensemble.HistGradientBoostingRegressor`).

    Its fitted state is the trees as plain arrays (:class:`.trees.TreeArrays`), which score a
    matrix as scikit-learn's predictor does: the same nodes, thresholds and additions in the
    same order."""

    kind = "hgb"

    def __init__(self, max_iter: int = 100, learning_rate: float = 0.1, max_leaf_nodes: int = 8,
                 min_samples_leaf: int = 30, l2_regularization: float = 1.0):
        self.params = dict(max_iter=max_iter, learning_rate=learning_rate, max_leaf_nodes=max_leaf_nodes,
                            min_samples_leaf=min_samples_leaf, l2_regularization=l2_regularization)

    def hyperparameters(self) -> dict:
        return dict(self.params)

    def params_for(self, n_samples: int) -> dict:
        """The scikit-learn parameters for ``n_samples`` training rows: ``min_samples_leaf`` is
        capped at a quarter of them, so that tiny training sets can still split."""
        leaf = max(1, min(self.params["min_samples_leaf"], n_samples // 4))
        return dict(self.params, min_samples_leaf=leaf)

    def fit(self, mats, gains, seed):
        from sklearn.ensemble import HistGradientBoostingRegressor

        X = np.vstack(mats)
        y = np.concatenate(gains)
        model = HistGradientBoostingRegressor(random_state=seed, early_stopping=False, **self.params_for(len(y)))
        model.fit(X, y, sample_weight=term_weights(gains))
        self.trees = TreeArrays.of_sklearn(model)
        return self

    def arrays(self) -> dict[str, np.ndarray]:
        return self.trees.arrays()

    def raw(self, X):
        return self.trees.predict(X)

#: The component kinds of each learner.
COMPONENTS = {"linear": ("linear",), "pairwise": ("pairwise",), "hgb": ("hgb",), "ensemble": ("pairwise", "hgb")}

#: The names these classes had when format-1 (pickled) model files were written: only
#: ``statinterp model upgrade`` unpickles one (:func:`upgrade_model`), and finds them here.
_Component, _Linear, _Trees = LearnerComponent, LinearComponent, TreesComponent


def _component(kind: str) -> LearnerComponent:
    return TreesComponent() if kind == "hgb" else LinearComponent(kind)


class LearnedRanker(Ranker):
    """A ranker learned across terms; scores a term from its :func:`extract_features` matrix.

    A fitted model, not a parameter value: unlike the other rankers it may be changed in place
    (its ``label`` is set when it is loaded)."""

    _mutable = True

    def __init__(self, learner: str, settings: FeatureSettings, feature_names: list[str],
                 feature_families: list[str], components: list[LearnerComponent], trained_on: list[str],
                 skipped: dict[str, str] | None = None, label: str | None = None):
        self.learner = learner
        self.settings = settings
        self.feature_names = list(feature_names)
        self.feature_families = list(feature_families)
        self.components = components
        self.trained_on = list(trained_on)
        self.skipped = dict(skipped or {})
        self.label = label

    @property
    def name(self) -> str:
        return self.label or f"learned:{self.learner}"

    def __repr__(self) -> str:
        return (f"LearnedRanker(learner={self.learner!r}, features={len(self.feature_names)}, "
                f"trained_on={len(self.trained_on)} terms, name={self.name!r})")

    # -- scoring -----------------------------------------------------------------------------
    def features(self, index: TermIndex) -> FeatureMatrix:
        """The model's features of ``index``, computed once per index object and kept while it lives
        (:func:`statinterp.learned.features.features_of_index`), so scoring and explaining a term's
        sentences one after another do not extract them again."""
        return features_of_index(index, self.settings).select(self.feature_names)

    def score_matrix(self, X: np.ndarray) -> np.ndarray:
        """Scores of one term's candidates from their feature matrix (columns = ``feature_names``)."""
        if X.shape[0] == 0:
            return np.zeros(0)
        if len(self.components) == 1:
            return np.asarray(self.components[0].raw(X), dtype=np.float64)
        return np.mean([zscore(c.raw(X)) for c in self.components], axis=0)

    def score(self, index: TermIndex) -> np.ndarray:
        fm = self.features(index)
        missing = [k for k in fm.skipped if k not in self.skipped]
        if index.term.provision is None or not index.term.provision.text.strip():  # one line, saying what to give
            def for_provision(k: str) -> bool:  # what the provision makes; a column not computed follows from it
                return "provision" in fm.skipped[k] or fm.skipped[k].startswith("not computed for this term")

            no_provision = [k for k in missing if for_provision(k)]
            if no_provision:
                n = len(set(no_provision) & set(self.feature_names))
                warnings.warn(f"term {index.key!r} has no source provision, so {n} of {self.name}'s features are 0 "
                              "and its ranking is weaker: give one with --provision TEXT, --provision-file FILE, or "
                              "--provision-cite CITE --uscode FILE", StatinterpWarning, stacklevel=2)
                missing = [k for k in missing if k not in no_provision]
        if missing:
            warnings.warn(f"{self.name}: for term {index.key!r} some features could not be computed and are 0: "
                          + "; ".join(f"{k} ({fm.skipped[k]})" for k in missing[:3])
                          + (f"; and {len(missing) - 3} more" if len(missing) > 3 else ""), StatinterpWarning,
                          stacklevel=2)
        return self.score_matrix(fm.X)

    # -- explanation -------------------------------------------------------------------------
    def contributions(self, X: np.ndarray, i: int) -> np.ndarray:
        """Per feature, its contribution to candidate ``i``'s score (see :meth:`explain`)."""
        if len(self.components) == 1:
            return self.components[0].contributions(X, i)
        total = np.zeros(X.shape[1])
        for c in self.components:
            sd = c.raw(X).std()
            total += c.contributions(X, i) / (sd if sd > 1e-12 else 1.0)
        return total / len(self.components)

    def explain(self, index: TermIndex, i: int) -> dict:
        """Every feature's contribution to candidate ``i``'s score, largest magnitude first
        (:func:`statinterp.evaluation.explain.explain_sentence` shows the first ``top``).

        Linear learners: coefficient × standardised feature value. Trees and the ensemble:
        the score minus the score with the feature replaced by its mean over the term's
        candidates (for the ensemble, per component in units of the component's standard
        deviation over the term, averaged, matching how the ensemble combines them).
        """
        fm = self.features(index)
        scores = self.score_matrix(fm.X)
        contrib = self.contributions(fm.X, i)
        order = np.argsort(-np.abs(contrib), kind="stable")
        rank = int(np.sum(scores > scores[i])) + 1
        how = ("coefficient x standardised value" if self.learner in ("linear", "pairwise")
               else "score minus score with the feature at its term mean")
        return {
            "method": self.name,
            "learner": self.learner,
            "score": float(scores[i]),
            "rank": rank,
            "candidates": len(scores),
            "contributions (" + how + ")": [
                {"feature": self.feature_names[j], "value": float(fm.X[i, j]), "contribution": float(contrib[j])}
                for j in order],
        }

    def importances(self) -> dict[str, float] | None:
        """|standardised coefficient| per feature for linear learners (None otherwise)."""
        if self.learner in ("linear", "pairwise"):
            coef = np.abs(cast(LinearComponent, self.components[0]).coef_)
            return dict(zip(self.feature_names, coef.tolist(), strict=False))
        return None


def fit_matrices(mats: Sequence[FeatureMatrix], gains: Sequence[np.ndarray], terms: Sequence[str],
                 settings: FeatureSettings, learner: str = "ensemble", seed: int = 0,
                 shared: dict | None = None) -> LearnedRanker:
    """Fit on precomputed feature matrices (one per training term; unlabelled rows are dropped).

    ``shared`` (a dict, kind -> fitted component) lets learners fitted on the *same* data reuse
    each other's components (the ensemble reuses the pairwise and hgb fits).
    """
    if learner not in LEARNERS:
        raise UsageError(f"unknown learner {learner!r}; valid: {', '.join(LEARNERS)}")
    if not mats:
        raise UsageError("no labelled term to train on")
    # the training terms in name order: the stacked rows, the pairs drawn per term and so the model
    # do not depend on the order in which the terms were loaded
    order = sorted(range(len(mats)), key=lambda k: terms[k])
    mats, gains, terms = [mats[k] for k in order], [gains[k] for k in order], [terms[k] for k in order]
    names = list(mats[0].names)
    families = list(mats[0].families)
    skipped: dict[str, str] = {}
    Xs, ys = [], []
    for fm, g in zip(mats, gains, strict=False):
        if list(fm.names) != names:
            fm = fm.select(names)
        skipped.update(fm.skipped)
        g = np.asarray(g, dtype=np.float64)
        ok = ~np.isnan(g)
        if ok.any():
            Xs.append(fm.X[ok])
            ys.append(g[ok])
    if not Xs:
        raise UsageError("no labelled sentence to train on")
    shared = {} if shared is None else shared
    comps = []
    for kind in COMPONENTS[learner]:
        if kind not in shared:
            shared[kind] = _component(kind).fit(Xs, ys, seed)
        comps.append(shared[kind])
    return LearnedRanker(learner, settings, names, families, comps, list(terms), skipped)


def fit_ranker(indices: Sequence[TermIndex], settings: FeatureSettings | None = None, learner: str = "ensemble",
               seed: int = 0) -> LearnedRanker:
    """Extract the features of every labelled term in ``indices`` and fit a ranker on all of them."""
    settings = settings or FeatureSettings()
    labelled = sorted((ix for ix in indices if ix.term.labelled), key=lambda ix: ix.key)  # load order: no effect
    if not labelled:
        raise UsageError("no loaded term has labelled sentences: nothing to train on")
    mats = [extract_features(ix, settings) for ix in labelled]
    names = common_feature_names(mats)
    mats = [m.select(names) for m in mats]
    return fit_matrices(mats, [ix.gains for ix in labelled], [ix.key for ix in labelled], settings, learner, seed)


def common_feature_names(mats: Sequence[FeatureMatrix]) -> list[str]:
    """Feature names of the first matrix, extended by any a later term has (order kept)."""
    names: list[str] = []
    seen: set[str] = set()
    for m in mats:
        for n in m.names:
            if n not in seen:
                seen.add(n)
                names.append(n)
    return names


def save_model(ranker: LearnedRanker, path: str | Path, force: bool = False, command: str | None = None,
               header: dict | None = None) -> Path:
    """Write ``ranker`` to ``path`` (atomic; an existing file is replaced only with ``force``).

    The header records the command that made the model (``command``; default: this process's
    command line), the versions of Python and of every library that can change its scores
    (:func:`statinterp.provenance.library_versions`) and the native thread pools; ``header``
    adds or replaces entries (:func:`upgrade_model` keeps the training command of an upgraded
    file). The fitted arrays follow as an ``.npz`` archive; the header's ``checksum`` covers
    both (:func:`load_model` checks it before reading an array)."""
    from statinterp.provenance import command_line, library_versions, thread_libraries

    path = Path(path)
    head = {
        "format": FORMAT_VERSION,
        "command": command if command is not None else command_line(program=Path(sys.argv[0]).name or "python"),
        "versions": library_versions(),
        "thread_libraries": thread_libraries(),
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "learner": ranker.learner,
        "features": ranker.settings.to_dict(),
        "feature_names": ranker.feature_names,
        "feature_families": ranker.feature_families,
        "trained_on": ranker.trained_on,
        "skipped": ranker.skipped,
        "components": [{"kind": c.kind, "hyperparameters": c.hyperparameters()} for c in ranker.components],
        **(header or {}),
    }
    payload = npz_bytes({f"{k}.{name}": a for k, c in enumerate(ranker.components) for name, a in c.arrays().items()})
    head["payload_bytes"] = len(payload)  # a reader reads no more than this
    head["checksum"] = checksum(head, payload)
    data = MAGIC + b"\n" + json.dumps(head, sort_keys=True).encode() + b"\n" + payload
    atomic.write_bytes(path, data, force=force)
    return path


def checksum(header: dict, payload: bytes) -> str:
    """``sha256:<hex>`` of the header's canonical JSON (without its ``checksum``), a newline and
    the payload. Detects damage and edits (it is no signature: anyone can recompute it)."""
    canonical = json.dumps({k: v for k, v in header.items() if k != "checksum"}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(canonical.encode() + b"\n" + payload).hexdigest()


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """``arrays`` as an ``.npz`` archive (one ``NAME.npy`` per array, names in order, fixed
    timestamps: the same arrays give the same bytes). Object arrays cannot be written."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w") as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(arrays[name]), allow_pickle=False)
    return buf.getvalue()

#: A model file is never larger than this (the default ensemble is a few MB).
MAX_MODEL_BYTES = 512 * 1024 * 1024

#: ... nor its JSON header line.
MAX_HEADER_BYTES = 4 * 1024 * 1024


def read_header(path: str | Path) -> tuple[dict, bytes]:
    """The JSON header of a model file and the payload bytes after it (format 1 and 2 files).

    Only a regular file is read (a FIFO, a device such as ``/dev/zero`` or a folder is refused
    before anything is read), and never more than :data:`MAX_MODEL_BYTES`, nor more than the
    header's ``payload_bytes`` (files written since it was recorded).
    """
    path = Path(path)
    try:
        with open_regular(path, MAX_MODEL_BYTES) as fh:
            first = fh.readline(len(MAGIC) + 1)
            if first.rstrip(b"\n") != MAGIC:
                raise InputError(path, "is not a statinterp model file (made by `statinterp train`)")
            line = fh.readline(MAX_HEADER_BYTES + 1)
            if len(line) > MAX_HEADER_BYTES or not line.endswith(b"\n"):
                raise InputError(path, "has a damaged header")
            try:
                header = json.loads(line)
            except (ValueError, UnicodeDecodeError, RecursionError):
                raise InputError(path, "has a damaged header (not JSON, or nested too deeply)") from None
            if not isinstance(header, dict) or header.get("format") not in (PICKLE_FORMAT, FORMAT_VERSION):
                raise InputError(path, f"has model format {header.get('format') if isinstance(header, dict) else '?'}; "
                                       f"this statinterp reads format {FORMAT_VERSION}")
            declared = header.get("payload_bytes")
            if isinstance(declared, int) and not isinstance(declared, bool) and 0 <= declared <= MAX_MODEL_BYTES:
                limit, exact = declared, True
            else:
                limit, exact = MAX_MODEL_BYTES, False
            payload = read_limited(fh, limit)
    except FileNotFoundError:
        raise InputError(path, "does not exist") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not a model file") from None
    except NotRegularFile as exc:
        raise InputError(path, f"is {exc.kind}, not a model file (made by `statinterp train`)") from None
    except TooLarge as exc:
        raise InputError(path, f"is too large for a statinterp model file ({exc})") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(payload) > limit or (exact and len(payload) != declared):
        expected = f"{limit}" if exact else f"at most {limit}"
        raise InputError(path, f"is damaged: the model holds {'more than ' if len(payload) > limit else ''}"
                               f"{min(len(payload), limit)} bytes where {expected} were expected; "
                               "retrain it with `statinterp train`")
    return header, payload

#: The format of the model files written before 2026-11 (a joblib pickle after the header).
PICKLE_FORMAT = 1

#: The arrays of a model file, unpacked, are never larger than this (the default model's: ~0.1 MB).
MAX_ARRAY_BYTES = 256 * 1024 * 1024

#: ... nor more than this many.
MAX_ARRAYS = 1000


def legacy_refusal(path: str | Path) -> InputError:
    """The one-line refusal of a format-1 (pickled) model file, saying how to convert it."""
    return InputError(path, "is an old statinterp model file (format 1, a pickle, which can run any code when "
                            "read): it is not read. If you trust where it came from, convert it with "
                            f"`statinterp model upgrade {path} NEW_FILE` (or retrain it with `statinterp train`)")


def load_model(path: str | Path) -> LearnedRanker:
    """Read a model file written by :func:`save_model`; its name becomes ``learned:<file stem>``.

    Reading runs no code from the file: the header is JSON, the arrays are read with
    ``allow_pickle=False``, and every value is checked (types, shapes, feature and tree
    indices) before a ranker is built. Anything wrong is an :class:`InputError` naming the file
    and what is wrong; a format-1 file (a pickle) is refused without being read
    (:func:`legacy_refusal`).
    """
    path = Path(path)
    header, payload = read_header(path)
    if header["format"] == PICKLE_FORMAT:
        raise legacy_refusal(path)
    if header.get("checksum") != checksum(header, payload):
        raise InputError(path, "is damaged or was edited: its checksum does not match its contents; "
                               "retrain it with `statinterp train`")
    arrays = read_npz(path, payload)
    ranker = ranker_of(path, header, arrays)
    ranker.label = f"learned:{path.stem}"
    return ranker


def read_npz(path: Path, payload: bytes) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` payload, read without pickles and within :data:`MAX_ARRAY_BYTES`."""
    if not payload.startswith(b"PK\x03\x04"):
        raise InputError(path, "is damaged: its arrays are not an .npz archive")
    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ARRAYS or sum(i.file_size for i in infos) > MAX_ARRAY_BYTES:
                raise InputError(path, f"holds more arrays than a model has (over {MAX_ARRAYS} or "
                                       f"{MAX_ARRAY_BYTES} bytes)")
            for info in infos:
                name = info.filename.removesuffix(".npy")
                if name == info.filename or name in arrays:
                    raise InputError(path, f"has an unexpected member {info.filename!r} in its arrays")
                with zf.open(info) as fh:
                    data = read_limited(fh, info.file_size)
                arrays[name] = _array_of(path, name, data)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError,
            NotImplementedError, RuntimeError) as exc:  # the last two: unknown compression, encryption
        raise InputError(path, f"is damaged: its arrays cannot be read ({type(exc).__name__}: {exc})") from None
    return arrays


def _array_of(path: Path, name: str, data: bytes) -> np.ndarray:
    """One ``.npy`` array: its header is checked (no objects, no more elements than bytes) before
    anything is allocated."""
    fh = io.BytesIO(data)
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    else:
        raise InputError(path, f"array {name!r} has .npy version {version}")
    if dtype.hasobject or dtype.kind not in "biuf":
        raise InputError(path, f"array {name!r} has type {dtype}, not numbers")
    if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize > len(data) - fh.tell():
        raise InputError(path, f"array {name!r} is damaged: it holds fewer bytes than its shape {shape} needs")
    fh.seek(0)
    return np.lib.format.read_array(fh, allow_pickle=False)


def _field(path: Path, header: dict, key: str, kind: type, item: type | tuple[type, ...] | None = None) -> Any:
    """``header[key]``, checked to be a ``kind`` (of ``item`` values for lists and dicts)."""
    value: Any = header.get(key)
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok and item is not None:
        values = value.values() if isinstance(value, dict) else value
        ok = all(isinstance(v, item) and not isinstance(v, bool) for v in values)
    if not ok:
        of = " or ".join(t.__name__ for t in (item if isinstance(item, tuple) else (item,))) if item else ""
        what = f"a {kind.__name__}" + (f" of {of} values" if of else "")
        raise InputError(path, f"has a damaged header: {key!r} is not {what}")
    return value


def _settings_of(path: Path, features: dict) -> FeatureSettings:
    """The feature settings of a header, each checked to be of its type before use."""
    lists = {"families": str, "score_methods": str, "vector_methods": str, "neighbour_offsets": int}
    scalars = {"standardise": str, "vectors": str, "dense_model": str, "dense_dims": int, "case_citations": str}
    for key, item in lists.items():
        if key in features:
            _field(path, features, key, list, item)
    for key, kind in scalars.items():
        if key in features:
            _field(path, features, key, kind)
    try:
        return FeatureSettings.from_dict(features)
    except UsageError as exc:
        raise InputError(path, f"has feature settings this statinterp cannot use: {exc}") from None


def ranker_of(path: Path, header: dict, arrays: dict[str, np.ndarray]) -> LearnedRanker:
    """The ranker a (format 2) header and its arrays describe, every part checked."""
    learner = _field(path, header, "learner", str)
    if learner not in COMPONENTS:
        raise InputError(path, f"has an unknown learner {learner!r}; this statinterp knows {', '.join(COMPONENTS)}")
    settings = _settings_of(path, _field(path, header, "features", dict))
    names = _field(path, header, "feature_names", list, str)
    families = _field(path, header, "feature_families", list, str)
    trained_on = _field(path, header, "trained_on", list, str)
    skipped = _field(path, header, "skipped", dict, str)
    specs = _field(path, header, "components", list, dict)
    if not names or len(set(names)) != len(names) or len(families) != len(names):
        raise InputError(path, "has a damaged header: the feature names are empty, repeated, or not one per family")
    kinds = [spec.get("kind") for spec in specs]
    if tuple(kinds) != COMPONENTS[learner]:
        raise InputError(path, f"has a damaged header: learner {learner!r} is made of "
                               f"{', '.join(COMPONENTS[learner])}, not {', '.join(map(str, kinds)) or 'nothing'}")
    expected: set[str] = set()
    comps: list[LearnerComponent] = []
    for k, spec in enumerate(specs):
        params = _field(path, spec, "hyperparameters", dict, (int, float))
        mine = {name[len(f"{k}."):]: a for name, a in arrays.items() if name.startswith(f"{k}.")}
        comp = _component(spec["kind"])
        known = comp.hyperparameters()
        if set(params) != set(known):
            raise InputError(path, f"has a damaged header: component {k} ({spec['kind']}) has hyperparameters "
                                   f"{', '.join(sorted(params))}, not {', '.join(sorted(known))}")
        if isinstance(comp, LinearComponent):
            comp.alpha, comp.C, comp.pairs_per_term = params["alpha"], params["C"], params["pairs_per_term"]
            vecs = {}
            for name in ("mean", "scale", "coef"):
                a = mine.get(name)
                if a is None or a.shape != (len(names),) or a.dtype.kind != "f" or not np.isfinite(a).all():
                    raise InputError(path, f"is damaged: array {k}.{name} is missing or not "
                                           f"{len(names)} finite numbers")
                vecs[name] = a.astype(np.float64)
            if (vecs["scale"] == 0).any():
                raise InputError(path, f"is damaged: array {k}.scale holds a zero")
            comp.set_state(vecs["mean"], vecs["scale"], vecs["coef"])
        else:
            assert isinstance(comp, TreesComponent)
            comp.params = dict(params)
            try:
                comp.trees = TreeArrays.from_arrays(mine, n_features=len(names))
            except BadTrees as exc:
                raise InputError(path, f"is damaged: the trees of component {k}: {exc}") from None
        expected |= {f"{k}.{name}" for name in comp.arrays()}
        comps.append(comp)
    extra = sorted(set(arrays) - expected)
    if extra:
        raise InputError(path, f"is damaged: unexpected arrays {', '.join(extra[:3])}")
    return LearnedRanker(learner, settings, names, families, comps, trained_on, skipped)


def default_model_path() -> Path:
    """Where the shipped default model is installed."""
    return Path(str(resources.files("statinterp.data").joinpath("models", "default.statinterp-model")))


def default_ranker() -> LearnedRanker:
    """The shipped default model, loaded (its name: ``learned:default``)."""
    return load_model(default_model_path())


def read_pickled_model(path: str | Path) -> tuple[dict, LearnedRanker, list[tuple[object, object]]]:
    """Unpickle a format-1 model file: its header, its ranker with array components, and per
    component the scikit-learn objects it was pickled with (to compare scores).

    RUNS ANY CODE THE FILE CARRIES: call only on a file the user has said they trust."""
    import joblib

    path = Path(path)
    header, payload = read_header(path)
    if header["format"] != PICKLE_FORMAT:
        raise InputError(path, f"is already a format-{FORMAT_VERSION} model file: there is nothing to upgrade")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's version warnings: the scores are compared below
            ranker = joblib.load(io.BytesIO(payload))
    except Exception as exc:  # noqa: BLE001 - any unpickling failure means a file this cannot convert
        raise InputError(path, f"the pickled model cannot be read ({type(exc).__name__}: {exc})") from None
    if not isinstance(ranker, LearnedRanker):
        raise InputError(path, "does not hold a statinterp learned ranker")
    fitted: list[tuple[object, object]] = []
    for k, comp in enumerate(ranker.components):
        state = vars(comp)
        try:
            if isinstance(comp, LinearComponent):
                scaler, coef = state.pop("scaler"), state["coef_"]
                state.pop("model", None)
                comp.set_state(scaler.mean_, scaler.scale_, coef)
                fitted.append((scaler, coef))
            elif isinstance(comp, TreesComponent):
                model = state.pop("model")
                comp.trees = TreeArrays.of_sklearn(model)
                fitted.append((model, None))
            else:
                raise InputError(path, f"component {k} is a {type(comp).__name__}, which this cannot convert")
        except (KeyError, AttributeError, BadTrees) as exc:
            raise InputError(path, f"component {k} ({comp.kind}) cannot be converted ({type(exc).__name__}: "
                                   f"{exc})") from None
    return header, ranker, fitted


def probe_matrix(n_features: int, rows: int = 512, seed: int = 0) -> np.ndarray:
    """Feature rows to compare old and new scores on: normal values, a few large ones, NaNs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, n_features))
    X[rng.random(X.shape) < 0.02] = np.nan
    X[rng.random(X.shape) < 0.02] *= 1e3
    return X


def same_scores(ranker: LearnedRanker, fitted: list[tuple[object, object]], X: np.ndarray) -> bool:
    """Whether every converted component scores ``X`` with exactly the bits of its scikit-learn objects."""
    for comp, (obj, coef) in zip(ranker.components, fitted, strict=True):
        if isinstance(comp, LinearComponent):
            with one_blas_thread():
                old = obj.transform(X) @ coef  # type: ignore[attr-defined]
        else:
            old = obj.predict(X)  # type: ignore[attr-defined]
        new = comp.raw(X)
        if old.dtype != new.dtype or old.shape != new.shape or old.tobytes() != new.tobytes():
            return False
    return True


def upgrade_model(old: str | Path, new: str | Path, *, force: bool = False, command: str | None = None,
                  check: list[np.ndarray] | None = None) -> Path:
    """Convert the format-1 model file ``old`` (UNPICKLED: it runs any code it carries) to a
    current one at ``new``. The training command, date and library versions of ``old`` are kept
    in the new header (``upgraded`` records this conversion). Nothing is written unless the
    converted model scores a probe matrix, and each matrix of ``check``, with the same bits as
    the pickled one."""
    from statinterp.provenance import library_versions

    old = Path(old)
    header, ranker, fitted = read_pickled_model(old)
    for X in [probe_matrix(len(ranker.feature_names)), *(check or [])]:
        if not same_scores(ranker, fitted, X):
            raise InputError(old, "converted, the model would not give the same scores as the pickled one; "
                                  "retrain it with `statinterp train`")
    kept = {k: header[k] for k in ("command", "created", "versions", "thread_libraries") if k in header}
    kept["upgraded"] = {
        "from_format": PICKLE_FORMAT,
        "command": command,
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "versions": library_versions(),
    }
    return save_model(ranker, new, force=force, command=command, header=kept)
