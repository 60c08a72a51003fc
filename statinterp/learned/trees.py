"""Gradient-boosted regression trees as plain arrays, scored without scikit-learn.

A fitted :class:`~sklearn.ensemble.HistGradientBoostingRegressor` (numeric features, squared
error) predicts ``baseline + tree_1(x) + tree_2(x) + ...``, each tree walked from its root: at a
split node, a missing value (NaN) goes to the side the node learned for missing values, any
other value goes left when it is ``<=`` the node's threshold. :class:`TreeArrays` holds exactly
what that walk reads (per node: feature, threshold, missing side, children, leaf flag, value)
and adds the trees' values in the same order, starting from the same baseline, so that its
scores are the same bits as scikit-learn's (``tests/learned/test_model_files.py`` checks it).

The arrays are what a model file stores (:mod:`statinterp.learned.model`); :meth:`from_arrays`
checks every one of them (types, lengths, children after their parent and inside their tree,
features in range), so that a damaged or crafted file is refused, and a walk always ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TreeArrays", "BadTrees"]

#: Rows scored at once (bounds the (trees x rows) work arrays).
_CHUNK = 4096


class BadTrees(ValueError):
    """The arrays do not describe valid trees (the message says what is wrong)."""


@dataclass
class TreeArrays:
    """Trees laid end to end: tree ``t`` is nodes ``offsets[t]:offsets[t+1]``, node 0 its root.

    ``left``/``right`` are indices within the tree (0 for leaves); ``value`` is a leaf's value."""

    baseline: float
    sizes: np.ndarray  # int64, nodes per tree
    feature: np.ndarray  # int64
    threshold: np.ndarray  # float64
    missing_left: np.ndarray  # bool
    left: np.ndarray  # int64
    right: np.ndarray  # int64
    is_leaf: np.ndarray  # bool
    value: np.ndarray  # float64

    # -- from scikit-learn and to/from a file ------------------------------------------------
    @classmethod
    def of_sklearn(cls, model) -> TreeArrays:
        """The trees of a fitted ``HistGradientBoostingRegressor`` (one tree per iteration,
        numeric features only)."""
        if model.n_trees_per_iteration_ != 1:
            raise BadTrees(f"{model.n_trees_per_iteration_} trees per iteration; a regressor has 1")
        categorical = getattr(model, "is_categorical_", None)
        if getattr(model, "_preprocessor", None) is not None or (categorical is not None and np.any(categorical)):
            raise BadTrees("categorical features are not supported")
        baseline = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
        if baseline.shape != (1,):
            raise BadTrees(f"baseline of shape {baseline.shape}")
        nodes = [predictors[0].nodes for predictors in model._predictors]
        if any(n["is_categorical"].any() for n in nodes):
            raise BadTrees("categorical splits are not supported")

        def cat(field: str, dtype) -> np.ndarray:
            return (np.concatenate([n[field] for n in nodes]) if nodes else np.zeros(0)).astype(dtype)

        leaf = cat("is_leaf", bool)
        return cls.from_arrays({
            "baseline": baseline,
            "sizes": np.asarray([len(n) for n in nodes], dtype=np.int64),
            "feature": np.where(leaf, 0, cat("feature_idx", np.int64)),
            "threshold": np.where(leaf, 0.0, cat("num_threshold", np.float64)),
            "missing_left": cat("missing_go_to_left", bool) & ~leaf,
            "left": np.where(leaf, 0, cat("left", np.int64)),
            "right": np.where(leaf, 0, cat("right", np.int64)),
            "is_leaf": leaf,
            "value": np.where(leaf, cat("value", np.float64), 0.0),
        }, n_features=model.n_features_in_)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"baseline": np.asarray([self.baseline], dtype=np.float64), "sizes": self.sizes,
                "feature": self.feature, "threshold": self.threshold, "missing_left": self.missing_left,
                "left": self.left, "right": self.right, "is_leaf": self.is_leaf, "value": self.value}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_features: int) -> TreeArrays:
        """Check ``arrays`` (as :meth:`arrays` gives them) and build the trees; :class:`BadTrees`
        names the first thing wrong."""
        kinds = {"baseline": "f", "sizes": "i", "feature": "i", "threshold": "f", "missing_left": "b",
                 "left": "i", "right": "i", "is_leaf": "b", "value": "f"}
        missing = sorted(set(kinds) - set(arrays))
        if missing:
            raise BadTrees(f"missing arrays: {', '.join(missing)}")
        a: dict[str, np.ndarray] = {}
        for name, kind in kinds.items():
            v = arrays[name]
            if not isinstance(v, np.ndarray) or v.ndim != 1:
                raise BadTrees(f"{name} is not a one-dimensional array")
            ok = (v.dtype.kind == "b" if kind == "b" else v.dtype.kind == "f" and v.dtype.itemsize == 8
                  if kind == "f" else v.dtype.kind in "iu")
            if not ok:
                raise BadTrees(f"{name} has type {v.dtype}")
            a[name] = v.astype({"b": bool, "f": np.float64, "i": np.int64}[kind])
        if len(a["baseline"]) != 1 or not np.isfinite(a["baseline"][0]):
            raise BadTrees("baseline is not one finite number")
        sizes = a["sizes"]
        if (sizes < 1).any():
            raise BadTrees("a tree has no node")
        n = int(sizes.sum())
        for name in ("feature", "threshold", "missing_left", "left", "right", "is_leaf", "value"):
            if len(a[name]) != n:
                raise BadTrees(f"{name} has {len(a[name])} entries for {n} nodes")
        split = ~a["is_leaf"]
        if ((a["feature"] < 0) | (a["feature"] >= n_features))[split].any():
            raise BadTrees(f"a split reads a feature outside 0..{n_features - 1}")
        if np.isnan(a["threshold"][split]).any() or not np.isfinite(a["value"]).all():
            raise BadTrees("a threshold is NaN or a value is not finite")
        local = np.arange(n) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        size_of = np.repeat(sizes, sizes)
        for side in ("left", "right"):
            child = a[side][split]
            if ((child <= local[split]) | (child >= size_of[split])).any():
                raise BadTrees(f"a {side} child is not after its node within its tree")
        return cls(float(a["baseline"][0]), sizes, a["feature"], a["threshold"], a["missing_left"], a["left"],
                   a["right"], a["is_leaf"], a["value"])

    # -- scoring -----------------------------------------------------------------------------
    def predict(self, X: np.ndarray) -> np.ndarray:
        """The score of every row of ``X``: the baseline plus each tree's leaf value, in tree order."""
        X = np.asarray(X, dtype=np.float64)
        out = np.zeros(X.shape[0], dtype=np.float64)
        out += self.baseline
        if not len(self.sizes):
            return out
        starts = np.cumsum(self.sizes) - self.sizes
        # children as indices into the concatenated nodes (a leaf points at itself)
        split = ~self.is_leaf
        node = np.arange(len(self.is_leaf))
        base = np.repeat(starts, self.sizes)
        left = np.where(split, self.left + base, node)
        right = np.where(split, self.right + base, node)
        steps = int(self.sizes.max())  # children come after their node: no walk is longer
        for lo in range(0, X.shape[0], _CHUNK):
            rows = X[lo: lo + _CHUNK]
            at = np.repeat(starts[:, None], len(rows), axis=1)  # (trees, rows)
            cols = np.arange(len(rows))[None, :]
            for _ in range(steps):
                moving = split[at]
                if not moving.any():
                    break
                x = rows[cols, self.feature[at]]
                go_left = np.where(np.isnan(x), self.missing_left[at], x <= self.threshold[at])
                at = np.where(go_left, left[at], right[at])
            values = self.value[at]
            chunk = out[lo: lo + _CHUNK]
            for t in range(len(self.sizes)):  # one tree after another, as scikit-learn adds them
                chunk += values[t]
        return out
