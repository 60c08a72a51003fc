"""Converting a format-1 model file (a joblib pickle) to the current format: ``statinterp model upgrade``.

Reading a format-1 file unpickles it, and unpickling runs whatever code the file carries. So
nothing else in statinterp reads one (:func:`statinterp.learned.model.load_model` refuses it
with a line pointing here); this module does, only when the user runs ``statinterp model
upgrade`` on a file they trust. The pickled components (a scikit-learn ``StandardScaler`` and
coefficients, or a ``HistGradientBoostingRegressor``) are turned into plain arrays, then the
arrays' scores are checked to be the same bits as scikit-learn's on a probe matrix (and on the
features the caller gives, if any) before the new file is written.
"""

from __future__ import annotations

import datetime
import io
import warnings
from pathlib import Path

import numpy as np

from statinterp.errors import InputError
from statinterp.learned.model import (
    FORMAT_VERSION,
    PICKLE_FORMAT,
    LearnedRanker,
    LinearComponent,
    TreesComponent,
    read_header,
    save_model,
)
from statinterp.learned.trees import BadTrees, TreeArrays

__all__ = ["read_pickled_model", "upgrade_model"]


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
    from statinterp.learned.model import one_blas_thread

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
