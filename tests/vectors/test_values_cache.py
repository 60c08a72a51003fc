"""Values computed under word vectors and kept on disk beside the unit directions
(statinterp.cache.namespaces): the WMD novelty distances (``v-*.bin``, served by
UnitDirections.unit_values) and the similar words of the query expansion -e (``w-*.bin``, served
by UnitDirections.words). A warm run gives byte-identical scores and figures without loading the
vectors, and every input they depend on gives a new cache entry."""

from __future__ import annotations

import numpy as np
import pytest

from statinterp.cache.namespaces import DirectionCache, unit_values_key, words_key
from statinterp.errors import StatinterpWarning
from statinterp.evaluation.ranking import rank
from statinterp.rankers import base, novelty
from statinterp.rankers.grammar import build_method
from statinterp.rankers.novelty import WMDNovelty
from statinterp.text.analysis import TokenSeqs
from statinterp.vectors.embeddings import DomainVectors, VectorSettings
from statinterp.vectors.provider import VectorProvider
from statinterp.workflow import attach_vectors, evaluate_methods, open_corpus, prepare_corpus

SMALL = {
    "word2vec": VectorSettings("word2vec", dim=20, min_count=1, epochs=2),
    "fasttext": VectorSettings("fasttext", dim=20, min_count=1, epochs=2, bucket=2000),
}
WORDS = ["vehicle", "park", "the", "car", "bicycle", "drone", "ordinance", "motor", "a", "be", "in", "of"]


@pytest.fixture(scope="module")
def analysis_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("analysis")


def fresh(analysis_cache, vectors_dir, **pretrained):
    """A new prepared corpus (no memo of an earlier one) whose vectors and cached distances live
    in ``vectors_dir``."""
    prepared = prepare_corpus(open_corpus(), cache_dir=analysis_cache)
    attach_vectors(prepared, cache_dir=vectors_dir, settings=SMALL, pretrained=pretrained or None)
    return prepared


def value_files(folder, prefix="v"):
    return sorted((folder / "directions").rglob(f"*.{prefix}.bin"))


def write_vectors(path, seed):
    rng = np.random.default_rng(seed)
    lines = [f"{len(WORDS)} 4"] + [w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=4)) for w in WORDS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _fail(*args, **kwargs):
    raise AssertionError("a warm run must not get here")


def test_a_warm_run_reads_identical_distances_without_the_vectors(analysis_cache, tmp_path, monkeypatch):
    cold = fresh(analysis_cache, tmp_path)
    scores = build_method("WMD").score(cold["vehicle"])
    cold_order = rank(build_method("WMD"), cold["vehicle"]).order
    (cold_result,) = evaluate_methods(cold, ["WMD"])
    files = value_files(tmp_path)
    assert len(files) == len(list(cold))  # one file per term (one vector kind, one setting)
    assert np.count_nonzero(scores) > 0

    monkeypatch.setattr(WMDNovelty, "distances", _fail)  # not computed again ...
    monkeypatch.setattr(VectorProvider, "get", _fail)  # ... and the vectors are not even loaded
    warm = fresh(analysis_cache, tmp_path)
    again = build_method("WMD").score(warm["vehicle"])
    assert again.tobytes() == scores.tobytes()
    np.testing.assert_array_equal(rank(build_method("WMD"), warm["vehicle"]).order, cold_order)
    (warm_result,) = evaluate_methods(fresh(analysis_cache, tmp_path), ["WMD"])
    assert warm_result.per_term == cold_result.per_term and warm_result.per_term
    assert warm_result.macro == cold_result.macro
    assert value_files(tmp_path) == files  # nothing new written


def test_the_wmd_gate_reads_the_same_cache(analysis_cache, tmp_path, monkeypatch):
    cold = build_method("Tp+WMD>=0.5").score(fresh(analysis_cache, tmp_path)["vehicle"])
    monkeypatch.setattr(WMDNovelty, "distances", _fail)
    warm = build_method("Tp+WMD>=0.5").score(fresh(analysis_cache, tmp_path)["vehicle"])
    assert warm.tobytes() == cold.tobytes()


def test_a_changed_vectors_file_gives_new_distances(analysis_cache, tmp_path):
    path = write_vectors(tmp_path / "vectors.txt", seed=1)
    method = WMDNovelty(vectors="w2vec")
    one = method.score(fresh(analysis_cache, tmp_path / "c", w2vec=path)["vehicle"])
    write_vectors(path, seed=2)
    two = method.score(fresh(analysis_cache, tmp_path / "c", w2vec=path)["vehicle"])
    assert len(value_files(tmp_path / "c")) == 2
    assert not np.array_equal(one, two)
    # the second file's distances are those of a run without any cache
    uncached = prepare_corpus(open_corpus(), cache_dir=analysis_cache)
    attach_vectors(uncached, cache_dir=False, pretrained={"w2vec": path})
    assert method.score(uncached["vehicle"]).tobytes() == two.tobytes()


def test_parameters_provision_code_and_libraries_are_in_the_key(analysis_cache, tmp_path, monkeypatch):
    ix = fresh(analysis_cache, tmp_path)["vehicle"]
    raw = WMDNovelty().score(ix)
    assert len(value_files(tmp_path)) == 1
    normed = WMDNovelty(norm=True).score(ix)
    assert len(value_files(tmp_path)) == 2 and not np.array_equal(raw, normed)

    def new_entry(**patch) -> np.ndarray:
        before = set(value_files(tmp_path))
        with monkeypatch.context() as m:
            for name, value in patch.items():
                owner, attr = name.split(".")
                m.setattr({"novelty": novelty, "WMDNovelty": WMDNovelty}[owner], attr, value)
            scores = WMDNovelty().score(fresh(analysis_cache, tmp_path)["vehicle"])
        assert len(set(value_files(tmp_path)) - before) == 1, patch
        return scores

    new_entry(**{"novelty.libraries_key": lambda libraries: '{"POT": "0.0"}'})  # another POT version
    new_entry(**{"WMDNovelty.code_modules": ("statinterp.rankers.embedding",)})  # other code
    shorter = ix.provision.__class__.from_tokens(ix.provision.tokens[:3], ix.vocab)
    before = set(value_files(tmp_path))
    with monkeypatch.context() as m:
        m.setattr(ix, "provision", shorter)
        other = WMDNovelty().score(ix)
    assert len(set(value_files(tmp_path)) - before) == 1 and not np.array_equal(other, raw)


def test_a_damaged_distances_file_is_recomputed_with_a_warning(analysis_cache, tmp_path):
    expected = WMDNovelty().score(fresh(analysis_cache, tmp_path)["vehicle"])
    (path,) = value_files(tmp_path)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(StatinterpWarning, match="damaged"):
        again = WMDNovelty().score(fresh(analysis_cache, tmp_path)["vehicle"])
    assert again.tobytes() == expected.tobytes()
    assert path.read_bytes() != bytes(data)  # rewritten intact


def test_distances_of_vectors_without_a_source_are_not_cached(analysis_cache, tmp_path):
    from gensim.models.keyedvectors import KeyedVectors

    prepared = prepare_corpus(open_corpus(), cache_dir=analysis_cache)
    ix = prepared["vehicle"]
    kv = KeyedVectors(4)
    words = sorted(set(ix.vocab.words))
    kv.add_vectors(words, np.random.default_rng(3).normal(size=(len(words), 4)).astype(np.float32))
    attach_vectors(prepared, cache_dir=tmp_path, pretrained={"w2vec": DomainVectors(kv)})
    assert np.isfinite(WMDNovelty(vectors="w2vec").score(ix)).all()
    assert not value_files(tmp_path)


def test_values_file_round_trip_and_shape_check(tmp_path):
    cache = DirectionCache(tmp_path)
    units = TokenSeqs(np.array([1, 2, 2, 3], dtype=np.int32), np.array([0, 2, 2, 4], dtype=np.int64))
    key = unit_values_key("code", "file x 1 2", ["a", "b", "c", "d"], {"units": units}, "WMD")
    assert key != unit_values_key("code", "file x 1 2", ["a", "b", "c", "e"], {"units": units}, "WMD")
    assert key != unit_values_key("code", "file x 1 3", ["a", "b", "c", "d"], {"units": units}, "WMD")
    assert key != unit_values_key("code", "file x 1 2", ["a", "b", "c", "d"], {"units": units}, "WMD2")
    values = np.array([0.25, np.inf, 1 / 3])
    assert cache.get_values(key, 3) is None
    cache.put_values(key, values)
    assert cache.get_values(key, 3).tobytes() == values.tobytes()
    with pytest.warns(StatinterpWarning, match="damaged"):
        assert cache.get_values(key, 4) is None  # written for other units: discarded
    assert not cache.values_path(key).exists()


# ----------------------------------------------------------------------------------------
# the similar words of the query expansion -e


def test_similar_words_are_read_back_identically_without_the_vectors(analysis_cache, tmp_path, monkeypatch):
    methods = ("TF-ISF-e", "w2vec*-e", "Tp-Tg")
    cold = fresh(analysis_cache, tmp_path)
    expected = {m: build_method(m).score(cold["vehicle"]) for m in methods}
    words = base.similar_words(cold["vehicle"], 500)
    (cold_result,) = evaluate_methods(cold, ["TF-ISF-e"])
    assert len(value_files(tmp_path, "w")) == len(list(cold))  # one list per term (n_similar 500, word2vec)
    assert len(words) > 10

    monkeypatch.setattr(VectorProvider, "get", _fail)  # neither loaded nor asked for similar words
    warm = fresh(analysis_cache, tmp_path)
    assert base.similar_words(warm["vehicle"], 500) == words
    for m in methods:
        assert build_method(m).score(warm["vehicle"]).tobytes() == expected[m].tobytes(), m
    (warm_result,) = evaluate_methods(fresh(analysis_cache, tmp_path), ["TF-ISF-e"])
    assert warm_result.per_term == cold_result.per_term and warm_result.macro == cold_result.macro


def test_similar_words_depend_on_n_query_and_vectors(analysis_cache, tmp_path, monkeypatch):
    ix = fresh(analysis_cache, tmp_path)["vehicle"]
    many = base.similar_words(ix, 20)
    few = base.similar_words(fresh(analysis_cache, tmp_path)["vehicle"], 5)
    assert few == many[:5] and len(value_files(tmp_path, "w")) == 2
    with monkeypatch.context() as m:
        m.setattr(ix.query, "tokens", ["park"])
        other = base.similar_words(ix, 20)
    assert other != many and len(value_files(tmp_path, "w")) == 3
    path = write_vectors(tmp_path / "vectors.txt", seed=1)
    one = base.similar_words(fresh(analysis_cache, tmp_path, w2vec=path)["vehicle"], 5, vectors="w2vec")
    write_vectors(path, seed=2)
    two = base.similar_words(fresh(analysis_cache, tmp_path, w2vec=path)["vehicle"], 5, vectors="w2vec")
    assert one != two and len(value_files(tmp_path, "w")) == 5


def test_word_list_file_round_trip(tmp_path):
    cache = DirectionCache(tmp_path)
    key = words_key("code", "file x 1 2", "most similar")
    assert key != words_key("code", "file x 1 2", "most similar 2") != words_key("code", "file y", "most similar")
    cache.put_words(key, ["motor_vehicle", "é", "car"])
    assert cache.get_words(key) == ["motor_vehicle", "é", "car"]
    path = cache.words_path(key)
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.warns(StatinterpWarning, match="damaged"):
        assert cache.get_words(key) is None
