"""Tests of the word-embedding layer: training, loading, caching, cosine and WMD."""

from __future__ import annotations

import hashlib
import math
import os
import random
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from gensim.models import Word2Vec
from gensim.models.fasttext import FastTextKeyedVectors
from gensim.models.keyedvectors import KeyedVectors

from statinterp.cache.namespaces import CacheWarning, VectorCache
from statinterp.errors import InputError, UsageError
from statinterp.rankers.embedding import WMDScorer, cosine_scores, wmd
from statinterp.vectors.embeddings import (
    DomainVectors,
    VectorSettings,
    apply_phrases,
    load_vectors,
    mean_unit_vector,
    train_phrases,
    train_vectors,
)
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT


# ----------------------------------------------------------------------------------------
# helpers


def make_kv(vectors: dict[str, list[float]]) -> KeyedVectors:
    dim = len(next(iter(vectors.values())))
    kv = KeyedVectors(dim)
    kv.add_vectors(list(vectors), np.array(list(vectors.values()), dtype=np.float32))
    return kv


def random_kv(n_words: int = 14, dim: int = 6, seed: int = 3) -> KeyedVectors:
    rng = np.random.default_rng(seed)
    kv = KeyedVectors(dim)
    kv.add_vectors([f"w{i}" for i in range(n_words)], rng.normal(size=(n_words, dim)).astype(np.float32))
    return kv


def synthetic_corpus(n_sentences: int = 300, seed: int = 7) -> list[list[str]]:
    """Random sentences over a small vocabulary; every 3rd contains a fixed 3-word phrase."""
    rng = random.Random(seed)
    vocab = [f"tok{i}" for i in range(40)] + ["economic", "value", "independent"]
    corpus = []
    for i in range(n_sentences):
        sentence = [rng.choice(vocab) for _ in range(rng.randint(6, 12))]
        if i % 3 == 0:
            at = rng.randint(0, len(sentence))
            sentence[at:at] = ["independent", "economic", "value"]
        corpus.append(sentence)
    return corpus


SMALL = dict(dim=10, epochs=2, window=3, min_count=1, phrase_min_count=3, phrase_threshold=1.0)


def fingerprint(kv: KeyedVectors) -> str:
    digest = hashlib.sha256()
    digest.update("\n".join(kv.index_to_key).encode())
    digest.update(np.ascontiguousarray(kv.vectors).tobytes())
    return digest.hexdigest()


# ----------------------------------------------------------------------------------------
# settings


def test_settings_key_is_stable_and_names_every_relevant_setting():
    a = VectorSettings("word2vec", dim=20)
    assert a.key() == VectorSettings("word2vec", dim=20).key()
    assert a.key() != VectorSettings("word2vec", dim=21).key()
    assert a.key() != VectorSettings("fasttext", dim=20).key()
    assert a.key() != VectorSettings("word2vec", dim=20, seed=2).key()
    assert a.key() != VectorSettings("word2vec", dim=20, phrase_threshold=5).key()
    # n-gram settings only matter for fastText, phrase settings only with phrases
    assert a.key() == VectorSettings("word2vec", dim=20, bucket=10).key()
    assert "bucket=10" in VectorSettings("fasttext", bucket=10).key()
    no_phrases = VectorSettings("word2vec", phrases=False)
    assert no_phrases.key() == VectorSettings("word2vec", phrases=False, phrase_min_count=2).key()


@pytest.mark.parametrize(
    "kwargs",
    [dict(kind="glove"), dict(kind="word2vec", dim=0), dict(kind="word2vec", sg=2),
     dict(kind="word2vec", phrase_threshold=0), dict(kind="fasttext", min_n=5, max_n=3),
     dict(kind="word2vec", workers=True)],
)
def test_settings_reject_bad_values(kwargs):
    with pytest.raises(UsageError):
        VectorSettings(**kwargs)


# ----------------------------------------------------------------------------------------
# phrases and training


def test_phrases_join_a_frequent_three_word_phrase():
    corpus = synthetic_corpus()
    phrasers = train_phrases(corpus, min_count=3, threshold=1.0)
    out = apply_phrases(phrasers, ["tok1", "independent", "economic", "value", "tok2"])
    assert out == ["tok1", "independent_economic_value", "tok2"]
    # words of the phrase on their own are left alone; no phrase model -> unchanged copy
    assert apply_phrases(phrasers, ["value", "tok3", "economic"]) == ["value", "tok3", "economic"]
    assert apply_phrases(phrasers, []) == []
    assert apply_phrases(None, ["independent", "economic"]) == ["independent", "economic"]


def test_trained_vectors_contain_the_phrase_and_transform_queries():
    vectors = train_vectors(synthetic_corpus(), VectorSettings("word2vec", **SMALL))
    assert "independent_economic_value" in vectors.kv.key_to_index
    assert vectors.kv.vector_size == 10
    assert vectors.transform(["independent", "economic", "value"]) == ["independent_economic_value"]
    no_phrases = train_vectors(synthetic_corpus(), VectorSettings("word2vec", phrases=False, **SMALL))
    assert no_phrases.phrasers is None
    assert "independent_economic_value" not in no_phrases.kv.key_to_index


@pytest.mark.parametrize("kind", ["word2vec", "fasttext"])
def test_training_is_deterministic_with_one_worker(kind):
    corpus = synthetic_corpus()
    settings = VectorSettings(kind, bucket=500, **SMALL)
    first = train_vectors(corpus, settings)
    second = train_vectors(corpus, settings)
    assert first.kv.index_to_key == second.kv.index_to_key
    assert np.array_equal(first.kv.vectors, second.kv.vectors)
    other_seed = train_vectors(corpus, VectorSettings(kind, bucket=500, seed=2, **SMALL))
    assert not np.array_equal(first.kv.vectors, other_seed.kv.vectors)


_TRAIN_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from tests.vectors.test_embeddings import SMALL, fingerprint, synthetic_corpus
    from statinterp.vectors.embeddings import VectorSettings, train_vectors
    for kind in ("word2vec", "fasttext"):
        vectors = train_vectors(synthetic_corpus(), VectorSettings(kind, bucket=500, **SMALL))
        print(kind, fingerprint(vectors.kv))
    """
)


@pytest.mark.slow
def test_training_is_deterministic_across_processes_and_hash_seeds():
    expected = {
        kind: fingerprint(train_vectors(synthetic_corpus(), VectorSettings(kind, bucket=500, **SMALL)).kv)
        for kind in ("word2vec", "fasttext")
    }
    for hash_seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        result = subprocess.run(
            [sys.executable, "-c", _TRAIN_SCRIPT, str(REPO), str(REPO / "tests")],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        )
        got = dict(line.split() for line in result.stdout.splitlines() if line.strip())
        assert got == expected, f"PYTHONHASHSEED={hash_seed}"


def test_fasttext_gives_vectors_to_unseen_words():
    vectors = train_vectors(synthetic_corpus(), VectorSettings("fasttext", bucket=500, **SMALL))
    assert isinstance(vectors.kv, FastTextKeyedVectors)
    assert "tok17x" not in vectors.kv.key_to_index
    assert mean_unit_vector(["tok17x"], vectors.kv) is not None


def test_fasttext_oov_vectors_are_bit_for_bit_gensims():
    from statinterp.vectors.embeddings import fasttext_oov_vectors

    kv = train_vectors(synthetic_corpus(), VectorSettings("fasttext", bucket=500, **SMALL)).kv
    words = ["tok17x", "aaaa", "abababab", "", "ééé", "statutorily-construed", "x"]  # repeated n-grams, none at all
    words = [w for w in words if w not in kv.key_to_index]
    got = fasttext_oov_vectors(kv, words)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.stack([kv.get_vector(w) for w in words]))
    assert not np.any(got[words.index("")])


def test_training_rejects_one_shot_iterators_and_empty_vocabularies():
    corpus = synthetic_corpus(30)
    with pytest.raises(UsageError, match="re-iterable"):
        train_vectors((s for s in corpus), VectorSettings("word2vec", **SMALL))
    with pytest.raises(UsageError, match="min_count"):
        train_vectors(corpus, VectorSettings("word2vec", **{**SMALL, "min_count": 10_000}))


# ----------------------------------------------------------------------------------------
# cosine


def test_mean_unit_vector_normalises_skips_oov_and_counts_repeats():
    kv = make_kv({"a": [3.0, 0.0], "b": [0.0, 0.5]})
    assert np.allclose(mean_unit_vector(["a", "b"], kv), [0.5, 0.5])
    assert np.allclose(mean_unit_vector(["a", "zzz", "b"], kv), [0.5, 0.5])
    assert np.allclose(mean_unit_vector(["a", "a", "b"], kv), [2 / 3, 1 / 3])
    assert mean_unit_vector(["zzz", "yyy"], kv) is None
    assert mean_unit_vector([], kv) is None


def test_mean_unit_vector_skips_zero_vectors():
    kv = make_kv({"a": [1.0, 0.0], "zero": [0.0, 0.0]})
    assert np.allclose(mean_unit_vector(["a", "zero"], kv), [1.0, 0.0])
    assert mean_unit_vector(["zero"], kv) is None


def test_cosine_scores_hand_computed_2d():
    kv = make_kv({"a": [3.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "neg": [-2.0, 0.0]})
    docs = [["a"], ["b"], ["a", "b"], ["c"], ["zzz"], [], ["a", "zzz", "b"], ["neg"], ["a", "neg"]]
    scores = cosine_scores(["a"], docs, kv)
    # ["a","b"]: mean of unit vectors = (.5,.5), cos with (1,0) = 1/sqrt(2) (raw mean would give .9487)
    r = 1 / math.sqrt(2)
    assert scores == pytest.approx([1.0, 0.0, r, r, 0.0, 0.0, r, -1.0, 0.0])
    assert scores.dtype == np.float64


def test_cosine_scores_hand_computed_3d():
    kv = make_kv({"a": [1.0, 2.0, 2.0], "d": [0.0, 3.0, 4.0], "e": [0.0, 0.0, 7.0]})
    # |a| = 3, |d| = 5, a.d = 14
    assert cosine_scores(["a"], [["d"]], kv) == pytest.approx([14 / 15])
    # query d,e: mean unit = (0, .3, .9) -> cos with a: (0*1 + .3*2 + .9*2) / (3 * sqrt(.9))
    expected = (0.6 + 1.8) / (3 * math.sqrt(0.09 + 0.81))
    assert cosine_scores(["d", "e", "oov"], [["a"], ["oov"]], kv) == pytest.approx([expected, 0.0])


def test_cosine_scores_with_unknown_query_are_zero():
    kv = make_kv({"a": [1.0, 0.0]})
    assert cosine_scores(["zzz"], [["a"], ["a", "a"]], kv).tolist() == [0.0, 0.0]
    assert cosine_scores(["a"], [], kv).shape == (0,)


# ----------------------------------------------------------------------------------------
# WMD


def test_wmd_hand_computed():
    kv = make_kv({"a": [0.0, 0.0], "b": [3.0, 4.0], "c": [6.0, 8.0]})
    assert wmd(["a"], ["b"], kv) == pytest.approx(5.0)
    assert wmd(["a", "b"], ["a"], kv) == pytest.approx(2.5)  # half the mass moves 5
    assert wmd(["a", "c"], ["b", "b"], kv) == pytest.approx(5.0)
    assert wmd(["a", "b"], ["b", "c"], kv) == pytest.approx(5.0)  # a->b, b->c
    assert wmd(["b", "a", "zzz"], ["a", "b"], kv) == pytest.approx(0.0)
    # normalised: a is the zero vector and is skipped, b and c coincide
    assert wmd(["b"], ["c"], kv, norm=True) == pytest.approx(0.0)


def test_wmd_without_known_tokens_is_infinite():
    kv = make_kv({"a": [1.0, 0.0]})
    assert wmd(["zzz"], ["a"], kv) == math.inf
    assert wmd(["a"], ["zzz"], kv) == math.inf
    assert wmd([], [], kv) == math.inf


@pytest.mark.parametrize("norm", [False, True])
def test_wmd_agrees_with_gensim_wmdistance(norm):
    kv = random_kv()
    rng = random.Random(11)
    words = kv.index_to_key + ["oov1", "oov2"]
    pairs = [
        (["w0", "w1", "w2"], ["w3", "w4"]),
        (["w0", "w0", "w5", "oov1"], ["w5", "w6", "w6", "w6", "oov2"]),
        (["w1"], ["w2", "w3", "w4", "w5"]),
        (["w7", "w8", "w9", "w10"], ["w11"]),
    ] + [
        ([rng.choice(words) for _ in range(rng.randint(2, 9))], [rng.choice(words) for _ in range(rng.randint(2, 15))])
        for _ in range(20)
    ]
    for doc, ref in pairs:
        ours = wmd(doc, ref, kv, norm=norm)
        theirs = kv.wmdistance(doc, ref, norm=norm)
        assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-9), (doc, ref)
        # WMD is symmetric
        assert wmd(ref, doc, kv, norm=norm) == pytest.approx(ours, rel=1e-6, abs=1e-9)
    # norm makes a difference on these vectors, so the parameter is really used
    assert wmd(["w0"], ["w1"], kv, norm=True) != pytest.approx(wmd(["w0"], ["w1"], kv, norm=False))


def test_wmd_scorer_matches_pairwise_wmd():
    kv = random_kv()
    ref = ["w0", "w1", "w1", "w2", "oov"]
    docs = [["w3", "w4"], ["w0", "w1", "w2"], ["oov"], [], ["w5", "w5", "w6", "w0"], ["w1"]]
    scorer = WMDScorer(ref, kv)
    got = scorer.distances(docs)
    expected = [wmd(doc, ref, kv) for doc in docs]
    assert got.tolist() == pytest.approx(expected)
    assert math.isinf(got[2]) and math.isinf(got[3])
    assert got[1] < got[0]  # the doc sharing the reference's words is closer
    assert np.all(np.isinf(WMDScorer(["oov"], kv).distances(docs)))
    assert WMDScorer(ref, kv).distances([]).shape == (0,)


def test_wmd_with_fasttext_uses_subword_vectors_for_unseen_words():
    vectors = train_vectors(synthetic_corpus(), VectorSettings("fasttext", bucket=500, **SMALL))
    distance = wmd(["tok3x"], ["tok4", "tok5"], vectors.kv)
    assert math.isfinite(distance) and distance > 0
    assert distance == pytest.approx(vectors.kv.wmdistance(["tok3x"], ["tok4", "tok5"], norm=False), rel=1e-5)


# ----------------------------------------------------------------------------------------
# loading pretrained vectors

VOCAB = {  # in file order
    "The": [7.0, 7.0, 7.0, 7.0],
    "Court": [1.0, -1.0, 0.5, 0.25],
    "the": [0.1, 0.2, 0.3, 0.4],
    "value": [-0.5, 0.5, -0.25, 2.0],
    "COURT": [9.0, 9.0, 9.0, 9.0],
}


def write_text(path: Path, header: bool, trailing_space: bool = False) -> Path:
    lines = [f"{len(VOCAB)} 4"] if header else []
    for word, vector in VOCAB.items():
        lines.append(word + " " + " ".join(repr(x) for x in vector) + (" " if trailing_space else ""))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def check_lowercased(kv: KeyedVectors) -> None:
    assert set(kv.key_to_index) == {"the", "court", "value"}
    assert np.allclose(kv["court"], VOCAB["Court"])  # first case variant, not COURT
    assert np.allclose(kv["the"], VOCAB["the"])  # the exact lower-case key wins over the earlier "The"
    assert np.allclose(kv["value"], VOCAB["value"])


def test_load_word2vec_binary(tmp_path):
    path = tmp_path / "vectors.bin"
    make_kv(VOCAB).save_word2vec_format(str(path), binary=True)
    vectors = load_vectors(path)
    assert isinstance(vectors, DomainVectors) and vectors.phrasers is None
    check_lowercased(vectors.kv)
    assert load_vectors(path, "word2vec-bin").kv.index_to_key == vectors.kv.index_to_key


def test_load_word2vec_text(tmp_path):
    path = tmp_path / "vectors.txt"
    make_kv(VOCAB).save_word2vec_format(str(path), binary=False)
    check_lowercased(load_vectors(path).kv)
    check_lowercased(load_vectors(path, "word2vec-text").kv)


def test_load_glove_text_without_header(tmp_path):
    path = write_text(tmp_path / "glove.6B.4d.txt", header=False)
    check_lowercased(load_vectors(path).kv)
    check_lowercased(load_vectors(path, "glove").kv)


def test_load_fasttext_vec(tmp_path):
    path = write_text(tmp_path / "wiki.vec", header=True, trailing_space=True)  # fastText writes "v " at line ends
    check_lowercased(load_vectors(path).kv)
    check_lowercased(load_vectors(path, "fasttext-vec").kv)


def test_load_keeps_case_on_request(tmp_path):
    path = write_text(tmp_path / "glove.txt", header=False)
    kv = load_vectors(path, lowercase=False).kv
    assert set(kv.key_to_index) == set(VOCAB)
    assert np.allclose(kv["COURT"], VOCAB["COURT"])


def test_load_gensim_native(tmp_path):
    kv = make_kv(VOCAB)
    kv.save(str(tmp_path / "vectors.kv"))
    check_lowercased(load_vectors(tmp_path / "vectors.kv").kv)
    model = Word2Vec([["a", "b", "c"]] * 5, vector_size=5, min_count=1, workers=1, epochs=1)
    model.save(str(tmp_path / "w2v.model"))
    loaded = load_vectors(tmp_path / "w2v.model", "gensim").kv
    assert np.array_equal(loaded["b"], model.wv["b"])


@pytest.mark.slow
def test_load_fasttext_bin(tmp_path):
    fasttext = pytest.importorskip("fasttext")
    rng = random.Random(5)
    # The .bin file is written by gensim (save_facebook_model) and read back by fastText itself,
    # not trained with the fasttext library: its training can throw "Encountered NaN" at random
    # on tiny corpora (seen in CI under load), which has nothing to do with loading.
    from gensim.models import FastText
    from gensim.models.fasttext import save_facebook_model

    words = ["court", "statute", "value", "economic", "Trade", "secret", "independent"]
    words += [f"w{i}x" for i in range(300)]
    sentences = [[rng.choice(words) for _ in range(12)] for _ in range(1500)]
    trained = FastText(sentences, vector_size=16, min_count=1, epochs=2, workers=1, seed=5, bucket=20000,
                       min_n=3, max_n=6)
    path = tmp_path / "model.bin"
    save_facebook_model(trained, str(path))
    model = fasttext.load_model(str(path))  # fastText's own reading of the file
    kv = load_vectors(path).kv
    assert isinstance(kv, FastTextKeyedVectors)
    assert np.allclose(kv["court"], model.get_word_vector("court"), atol=1e-5)
    # unseen words get the same subword vector as fastText itself computes
    assert "courts" not in kv.key_to_index
    assert np.allclose(kv["courts"], model.get_word_vector("courts"), atol=1e-5)
    # fastText vectors are left cased: "trade" comes from n-grams, "Trade" is a key
    assert "Trade" in kv.key_to_index
    assert load_vectors(path, "fasttext-bin").kv.index_to_key == kv.index_to_key

    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(InputError, match="fastText .bin"):
        load_vectors(truncated)


def assert_one_line_input_error(path: Path, match: str, **kwargs) -> InputError:
    with pytest.raises(InputError, match=match) as info:
        load_vectors(path, **kwargs)
    message = str(info.value)
    assert str(path) in message
    assert "\n" not in message
    assert info.value.file == str(path)
    return info.value


def test_load_missing_file_raises_input_error(tmp_path):
    error = assert_one_line_input_error(tmp_path / "nope.bin", "not found")
    assert "expected word2vec binary/text, GloVe text or fastText .vec/.bin" in str(error)
    assert_one_line_input_error(tmp_path, "not a regular file")


@pytest.mark.parametrize(
    "content, match",
    [
        (b"", "empty"),
        (b"hello world\nfoo\n", "neither"),
        (b"2 3\nthe 0.1 0.2 0.3\nvalue 0.1 x 0.3\n", "word2vec text"),  # not a number
        (b"3 3\nthe 0.1 0.2 0.3\nvalue 0.1 0.2 0.3\n", "word2vec text"),  # fewer lines than the header says
        (b"2 3\nthe 0.1 0.2 0.3\nvalue 0.1 0.2\n", "word2vec text"),  # short vector
        (b"the 0.1 0.2 0.3\nvalue 0.1 0.2\n", "GloVe"),  # ragged GloVe
        (b"the 0.1 nan 0.3\n", "NaN"),
        (b"\x80\x04garbage that is no pickle", "gensim"),
        (b"\xff\xfe\x00binary junk\n", "UTF-8"),
    ],
)
def test_load_malformed_file_raises_input_error(tmp_path, content, match):
    path = tmp_path / "bad.vec"
    path.write_bytes(content)
    assert_one_line_input_error(path, match)


def test_load_truncated_word2vec_binary_raises_input_error(tmp_path):
    path = tmp_path / "vectors.bin"
    make_kv(VOCAB).save_word2vec_format(str(path), binary=True)
    path.write_bytes(path.read_bytes()[:-7])
    assert_one_line_input_error(path, "word2vec binary")


def test_load_wrong_explicit_format_raises_input_error(tmp_path):
    path = tmp_path / "vectors.bin"
    make_kv(VOCAB).save_word2vec_format(str(path), binary=True)
    assert_one_line_input_error(path, "fastText .bin", format="fasttext-bin")
    assert_one_line_input_error(path, "gensim", format="gensim")
    with pytest.raises(UsageError):
        load_vectors(path, "bert")


def test_load_pickle_of_something_else_raises_input_error(tmp_path):
    import pickle

    path = tmp_path / "other.kv"
    path.write_bytes(pickle.dumps({"not": "vectors"}, protocol=4))
    assert_one_line_input_error(path, "gensim")


# ----------------------------------------------------------------------------------------
# cache


@pytest.fixture(scope="module")
def trained() -> DomainVectors:
    return train_vectors(synthetic_corpus(), VectorSettings("word2vec", **SMALL))


def test_cache_round_trip(tmp_path, trained):
    cache = VectorCache(tmp_path)
    settings = VectorSettings("word2vec", **SMALL)
    assert cache.get("corpus-1", settings) is None
    path = cache.put("corpus-1", settings, trained)
    assert path.exists()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary files left behind
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = cache.get("corpus-1", settings)
    assert loaded is not None
    assert loaded.kv.index_to_key == trained.kv.index_to_key
    assert np.array_equal(loaded.kv.vectors, trained.kv.vectors)
    query = ["tok1", "independent", "economic", "value"]
    want = ["tok1", "independent_economic_value"]
    assert DomainVectors(loaded.kv, loaded.phrasers).transform(query) == trained.transform(query) == want
    # other corpus / other settings are other entries
    assert cache.get("corpus-2", settings) is None
    assert cache.get("corpus-1", VectorSettings("word2vec", **{**SMALL, "dim": 11})) is None
    # overwriting is fine
    cache.put("corpus-1", settings, trained)
    assert cache.get("corpus-1", settings) is not None


def test_cache_round_trip_fasttext_without_phrases(tmp_path):
    settings = VectorSettings("fasttext", phrases=False, bucket=300, **SMALL)
    vectors = train_vectors(synthetic_corpus(60), settings)
    cache = VectorCache(tmp_path)
    cache.put("h", settings, vectors)
    loaded = cache.get("h", settings)
    assert loaded is not None and loaded.phrasers is None
    assert isinstance(loaded.kv, FastTextKeyedVectors)
    assert np.array_equal(loaded.kv["unseenword"], vectors.kv["unseenword"])


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty"])
def test_corrupt_cache_entry_is_detected_warned_and_discarded(tmp_path, trained, damage):
    cache = VectorCache(tmp_path)
    settings = VectorSettings("word2vec", **SMALL)
    path = cache.put("corpus", settings, trained)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 3]
    elif damage == "garbage":
        data = bytearray(b"this is not a cache entry at all" * 10)
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="discarding damaged vectors cache entry"):
        assert cache.get("corpus", settings) is None
    assert not path.exists()
    # after retraining, the caller can store it again
    cache.put("corpus", settings, trained)
    assert cache.get("corpus", settings) is not None
