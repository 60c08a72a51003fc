"""Model files hold data, not code (issue 35): format 2 (JSON header + .npz arrays), the refusal
of format-1 pickles, `statinterp model upgrade`, and scores the same bits as scikit-learn's."""

from __future__ import annotations

import io
import json
import operator
import pathlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from statinterp.errors import InputError
from statinterp.learned.features import FeatureSettings
from statinterp.learned.model import (
    FORMAT_VERSION,
    MAGIC,
    LearnedRanker,
    LinearComponent,
    checksum,
    fit_ranker,
    load_model,
    npz_bytes,
    read_header,
    save_model,
)
from statinterp.learned.trees import BadTrees, TreeArrays
from tests.support.cli import assert_one_line_error, capture_main
from tests.support.paths import FIXTURES, REPO_ROOT

LEGACY = FIXTURES / "models" / "default-v1.statinterp-model"
SHIPPED = REPO_ROOT / "data" / "models" / "default.statinterp-model"
FAST = FeatureSettings(vectors="off")


def _legacy_ranker():
    """The legacy fixture unpickled as it was (scikit-learn objects inside): a trusted test file."""
    import joblib

    return joblib.load(io.BytesIO(read_header(LEGACY)[1]))


# ------------------------------------------------------------------------ same bits as scikit-learn


def _tricky_matrix(rng, model_thresholds: np.ndarray, rows: int, cols: int) -> np.ndarray:
    X = rng.normal(size=(rows, cols))
    X[rng.random(X.shape) < 0.1] = np.nan
    # values exactly at split thresholds (the `<=` side), in random places
    if len(model_thresholds):
        mask = rng.random(X.shape) < 0.2
        X[mask] = rng.choice(model_thresholds, size=int(mask.sum()))
    return X


@pytest.mark.slow
def test_trees_score_the_bits_of_scikit_learn():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    X[rng.random(X.shape) < 0.1] = np.nan  # the trees learn a side for missing values
    y = np.nan_to_num(X[:, 0]) * 2 + (np.nan_to_num(X[:, 1]) > 0) + rng.normal(scale=0.1, size=400)
    model = HistGradientBoostingRegressor(max_iter=40, max_leaf_nodes=8, min_samples_leaf=5, random_state=0,
                                          early_stopping=False).fit(X, y)
    trees = TreeArrays.of_sklearn(model)
    assert len(trees.sizes) == 40 and not trees.is_leaf.all()
    probe = _tricky_matrix(rng, trees.threshold[~trees.is_leaf], 5000, 6)
    for Z in (probe, np.asfortranarray(probe), probe[::2], probe[:1]):
        assert trees.predict(Z).tobytes() == model.predict(Z).tobytes()
    assert trees.predict(probe[:0]).shape == (0,)
    # written to arrays and read back: the same trees
    again = TreeArrays.from_arrays(trees.arrays(), n_features=6)
    assert again.predict(probe).tobytes() == model.predict(probe).tobytes()


def test_linear_standardising_is_that_of_scikit_learn():
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 7)) * rng.uniform(0.1, 50, size=7) + rng.normal(size=7)
    X[:, 3] = 2.0  # a constant column: scale 1
    gains = [np.asarray(rng.integers(0, 4, size=150), dtype=float) for _ in range(2)]
    comp = LinearComponent("pairwise", pairs_per_term=500).fit([X[:150], X[150:]], gains, seed=0)
    scaler = StandardScaler().fit(X)
    assert comp.mean_.tobytes() == scaler.mean_.tobytes() and comp.scale_.tobytes() == scaler.scale_.tobytes()
    probe = rng.normal(size=(200, 7)) * 30
    for Z in (probe, np.asfortranarray(probe)):
        assert comp.standardise(Z).tobytes() == scaler.transform(Z).tobytes()
        assert comp.raw(Z).tobytes() == (scaler.transform(Z) @ comp.coef_).tobytes()


def test_the_shipped_model_is_data_and_scores_as_the_pickled_one(example):
    """The shipped default model, converted from the pickled one: every component's scores are the
    same bits as scikit-learn's (and so ``rank vehicle --format json`` is byte-identical; recorded on
    the 14 annotated terms too when the file was converted)."""
    from statinterp.learned.model import one_blas_thread

    header, _ = read_header(SHIPPED)
    assert header["format"] == FORMAT_VERSION and header["upgraded"]["from_format"] == 1
    shipped = load_model(SHIPPED)
    old = _legacy_ranker()
    assert shipped.feature_names == old.feature_names and shipped.settings == old.settings
    ix = example["vehicle"]
    X = shipped.features(ix).X
    with one_blas_thread():
        old_raw = [old.components[0].scaler.transform(X) @ old.components[0].coef_,
                   old.components[1].model.predict(X)]
    new_raw = [c.raw(X) for c in shipped.components]
    assert [a.tobytes() for a in new_raw] == [a.tobytes() for a in old_raw]
    expected = np.mean([(r - r.mean()) / r.std() for r in old_raw], axis=0)
    assert np.allclose(shipped.score(ix), expected, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------ format-1 files: never read


class _WriteMarker:
    """Unpickles to a call of ``Path.write_text(marker, "ran")``: code run by a model file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return pathlib.Path.write_text, (pathlib.Path(self.marker), "ran")


class _PayloadThenModel:
    """Unpickles to ``(payload, model)[1]``: the payload runs, then the real model loads as usual."""

    def __init__(self, marker: Path, model):
        self.marker, self.model = marker, model

    def __reduce__(self):
        return operator.getitem, ((_WriteMarker(self.marker), self.model), 1)


def _format1_file(path: Path, obj) -> Path:
    import joblib

    buf = io.BytesIO()
    joblib.dump(obj, buf, compress=3)
    head = dict(json.loads(LEGACY.read_bytes().split(b"\n", 2)[1]), payload_bytes=len(buf.getvalue()))
    path.write_bytes(MAGIC + b"\n" + json.dumps(head).encode() + b"\n" + buf.getvalue())
    return path


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    """Crafted format-1 files: a payload alone, and a payload followed by a working model; first
    shown to run their payload when unpickled (as every `--model` did before format 2)."""
    import joblib

    folder = tmp_path_factory.mktemp("crafted")
    ranker = _legacy_ranker()
    for name, obj in (("payload", _WriteMarker(folder / "proof-payload")),
                      ("payload+model", _PayloadThenModel(folder / "proof-payload+model", ranker))):
        loaded = joblib.load(io.BytesIO(read_header(_format1_file(folder / "proof.model", obj))[1]))
        assert (folder / f"proof-{name}").read_text() == "ran"  # the payload is real
        if name == "payload+model":
            assert isinstance(loaded, LearnedRanker)  # ... and the model works after it
    marker = folder / "RAN"
    return marker, {"payload": _format1_file(folder / "payload.statinterp-model", _WriteMarker(marker)),
                    "payload+model": _format1_file(folder / "model.statinterp-model",
                                                   _PayloadThenModel(marker, ranker))}


COMMANDS = {
    "rank": ["rank", "vehicle", "-q", "--no-cache", "--model"],
    "evaluate": ["evaluate", "-q", "--no-cache", "--model"],
    "explain": ["explain", "vehicle", "case-01-op1-p010-s4", "-q", "--no-cache", "--model"],
    "review": ["review", "vehicle", "--no-browser", "--port", "0", "--model"],
    "simulate-review": ["simulate-review", "-q", "--no-cache", "--model"],
}


@pytest.mark.parametrize("variant", ["payload", "payload+model"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_crafted_pickle_runs_nothing(crafted, variant, command):
    marker, files = crafted
    code, out, err = capture_main([*COMMANDS[command], str(files[variant])])
    line = assert_one_line_error(code, err, str(files[variant]), "format 1", "statinterp model upgrade")
    assert "NEW_FILE" in line and out == ""
    assert not marker.exists()


def test_a_pickle_inside_the_arrays_runs_nothing(tmp_path):
    """A format-2 file whose array is an object array (a pickle in the .npy) is refused unread."""
    marker = tmp_path / "RAN"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, zf.open("0.coef.npy", "w") as fh:
        np.lib.format.write_array(fh, np.array([_WriteMarker(marker)], dtype=object), allow_pickle=True)
    path = _rewrite(tmp_path / "m.model", SHIPPED, payload=buf.getvalue())
    code, _, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    assert_one_line_error(code, err, "array '0.coef' has type object")
    assert not marker.exists()
    # a raw pickle as the payload: not an .npz
    import pickle

    path = _rewrite(tmp_path / "m.model", SHIPPED, payload=pickle.dumps(_WriteMarker(marker)))
    code, _, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    assert_one_line_error(code, err, "not an .npz archive")
    assert not marker.exists()


# ------------------------------------------------------------------------ damaged and wrong-shaped files


def _parts(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    header, payload = read_header(path)
    with np.load(io.BytesIO(payload), allow_pickle=False) as z:
        return header, {k: z[k] for k in z.files}


def _rewrite(path: Path, source: Path, header: dict | None = None, arrays: dict | None = None,
             payload: bytes | None = None, fix_checksum: bool = True) -> Path:
    """``source`` with its header and arrays changed, the checksum recomputed (unless not wanted)."""
    h, a = _parts(source)
    h = dict(h if header is None else header)
    payload = payload if payload is not None else npz_bytes(a if arrays is None else arrays)
    h["payload_bytes"] = len(payload)
    if fix_checksum:
        h["checksum"] = checksum(h, payload)
    path.write_bytes(MAGIC + b"\n" + json.dumps(h).encode() + b"\n" + payload)
    return path


def _header_change(key, value):
    def change(h, a):
        h[key] = value
    return change


def _array_change(key, fn):
    def change(h, a):
        a[key] = fn(a[key])
    return change


def _drop_array(key):
    def change(h, a):
        del a[key]
    return change


def _backwards_child(h, a):
    left = a["1.left"].copy()
    i = int(np.flatnonzero(~a["1.is_leaf"])[0])
    left[i] = 0
    a["1.left"] = left


DAMAGE = {
    "unknown learner": (_header_change("learner", "forest"), "unknown learner 'forest'"),
    "learner not a string": (_header_change("learner", ["ensemble"]), "'learner' is not a str"),
    "feature names not a list": (_header_change("feature_names", "abc"), "'feature_names' is not a list"),
    "feature name not a string": (_header_change("feature_names", [1, 2]), "'feature_names' is not a list of str"),
    "features not a dict": (_header_change("features", None), "'features' is not a dict"),
    "families of the wrong type": (_header_change("features", {"families": "scores"}), "'families' is not a list"),
    "unknown family": (_header_change("features", {"families": ["nonsense"]}), "unknown feature family"),
    "components missing": (_header_change("components", []), "is made of pairwise, hgb, not nothing"),
    "hyperparameters wrong": (_header_change("components", [{"kind": "pairwise", "hyperparameters": {"C": "x"}},
                                                            {"kind": "hgb", "hyperparameters": {}}]),
                              "'hyperparameters' is not a dict of int or float"),
    "coefficients too short": (_array_change("0.coef", lambda v: v[:3]), "array 0.coef is missing or not 125"),
    "coefficients as integers": (_array_change("0.coef", lambda v: v.astype(np.int64)), "0.coef"),
    "NaN in the mean": (_array_change("0.mean", lambda v: np.where(np.arange(len(v)) == 0, np.nan, v)), "0.mean"),
    "a zero scale": (_array_change("0.scale", lambda v: np.where(np.arange(len(v)) == 0, 0.0, v)), "a zero"),
    "a tree array missing": (_drop_array("1.value"), "missing arrays: value"),
    "a child before its node": (_backwards_child, "left child is not after its node"),
    "a feature out of range": (_array_change("1.feature", lambda v: v + 1000), "reads a feature outside"),
    "tree sizes wrong": (_array_change("1.sizes", lambda v: v + 1), "entries for"),
    "an extra array": (_array_change("0.coef", lambda v: v), None),
}


@pytest.mark.parametrize("what", sorted(DAMAGE))
def test_a_wrong_shaped_model_is_one_line(tmp_path, what):
    change, needle = DAMAGE[what]
    header, arrays = _parts(SHIPPED)
    change(header, arrays)
    if what == "an extra array":
        arrays["2.coef"] = arrays["0.coef"]
        needle = "unexpected arrays 2.coef"
    path = _rewrite(tmp_path / "bad.statinterp-model", SHIPPED, header, arrays)
    with pytest.raises(InputError, match=None) as info:
        load_model(path)
    assert needle in str(info.value), str(info.value)
    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    assert_one_line_error(code, err, str(path), needle)


def test_an_edited_or_damaged_model_fails_its_checksum(tmp_path):
    header, arrays = _parts(SHIPPED)
    header["trained_on"] = ["something else"]
    path = _rewrite(tmp_path / "edited.model", SHIPPED, header, arrays, fix_checksum=False)
    code, _, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    assert_one_line_error(code, err, "checksum does not match")
    data = bytearray(SHIPPED.read_bytes())
    data[-200] ^= 0xFF  # a flipped byte in the arrays
    (tmp_path / "flipped.model").write_bytes(bytes(data))
    with pytest.raises(InputError, match="checksum does not match"):
        load_model(tmp_path / "flipped.model")


def test_a_header_of_the_wrong_shape_is_one_line(tmp_path):
    for line in (b"[1, 2]", b'{"format": "2"}', b"null", b'{"format": 3}'):
        path = tmp_path / "m.model"
        path.write_bytes(MAGIC + b"\n" + line + b"\n")
        code, _, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
        assert_one_line_error(code, err, str(path), "model format")
    for line in (b"[" * 100_000, b"{not json", b"\xff\xfe"):  # before: a RecursionError, an internal error
        path.write_bytes(MAGIC + b"\n" + line + b"\n")
        code, _, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
        assert_one_line_error(code, err, str(path), "damaged header")


@pytest.mark.parametrize("offset", [60, 200, 1000, 5000, -200, -30])
def test_damaged_arrays_with_a_matching_checksum_are_one_line(tmp_path, offset):
    """The checksum recomputed over a damaged archive (as an editor could): the archive itself is
    then what refuses it (CRC, deflate stream, zip directory, .npy header), never an internal error."""
    payload = bytearray(read_header(SHIPPED)[1])
    payload[offset] ^= 0x55
    path = _rewrite(tmp_path / "m.model", SHIPPED, payload=bytes(payload))
    code, _, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    if code == 0:  # a flipped bit in a float: a valid (different) model, which loads
        return
    assert_one_line_error(code, err, str(path))


def test_lying_array_headers_allocate_nothing(tmp_path):
    """An .npy that claims a huge shape with a few bytes behind it is refused before allocation."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, zf.open("0.coef.npy", "w") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
        fh.write(b"\0" * 64)
    path = _rewrite(tmp_path / "m.model", SHIPPED, payload=buf.getvalue())
    with pytest.raises(InputError, match="fewer bytes than its shape"):
        load_model(path)


def test_bad_trees_are_named():
    arrays = {"baseline": np.zeros(1), "sizes": np.array([3]), "feature": np.zeros(3, np.int64),
              "threshold": np.zeros(3), "missing_left": np.zeros(3, bool), "left": np.array([1, 0, 0]),
              "right": np.array([2, 0, 0]), "is_leaf": np.array([False, True, True]), "value": np.array([0, 1.0, 2.0])}
    trees = TreeArrays.from_arrays(arrays, n_features=1)
    assert trees.predict(np.array([[-1.0], [1.0], [np.nan]])).tolist() == [1.0, 2.0, 2.0]
    with pytest.raises(BadTrees, match="right child"):
        TreeArrays.from_arrays({**arrays, "right": np.array([3, 0, 0])}, n_features=1)
    with pytest.raises(BadTrees, match="type"):
        TreeArrays.from_arrays({**arrays, "value": np.array([0, 1, 2])}, n_features=1)


# ------------------------------------------------------------------------ writing and upgrading


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["linear", "hgb"])
def test_round_trip_keeps_every_bit(example, tmp_path, learner):
    model = fit_ranker(list(example), FAST, learner)
    path = save_model(model, tmp_path / f"{learner}.statinterp-model")
    assert path.read_bytes().split(b"\n", 2)[2].startswith(b"PK\x03\x04")
    loaded = load_model(path)
    ix = example["vehicle"]
    assert loaded.score(ix).tobytes() == model.score(ix).tobytes()
    assert loaded.feature_families == model.feature_families and loaded.name == f"learned:{learner}"
    X = model.features(ix).X
    assert loaded.contributions(X, 3).tobytes() == model.contributions(X, 3).tobytes()


def test_model_upgrade_converts_a_trusted_file(tmp_path, example):
    new = tmp_path / "new.statinterp-model"
    code, _, err = capture_main(["model", "upgrade", str(LEGACY), str(new)])
    assert code == 0, err
    header, _ = read_header(new)
    assert header["format"] == FORMAT_VERSION and header["created"] == read_header(LEGACY)[0]["created"]
    assert header["upgraded"]["command"].startswith("statinterp model upgrade")
    ix = example["vehicle"]
    assert load_model(new).score(ix).tobytes() == load_model(SHIPPED).score(ix).tobytes()
    code, _, err = capture_main(["model", "upgrade", str(LEGACY), str(new)])  # exists: --force
    assert code == 2 and "exists" in err
    code, _, err = capture_main(["model", "upgrade", str(new), str(tmp_path / "again.model")])
    assert_one_line_error(code, err, "already a format-2 model file")
    code, out, _ = capture_main(["model", "upgrade", "--help"])
    assert code == 0 and "RUNS ANY CODE" in out
