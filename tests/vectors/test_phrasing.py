"""Vectorised phrase joining (statinterp.vectors.embeddings) against gensim's own, token for token."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models.phrases import Phrases
from hypothesis import given, settings
from hypothesis import strategies as st

from statinterp.vectors.embeddings import (
    _greedy_joins,
    apply_phrases,
    join_phrases,
    mean_directions,
    mean_directions_of_ids,
    train_phrases,
)


def _ragged(docs, words):
    index = {w: i for i, w in enumerate(words)}
    ids = np.asarray([index[t] for doc in docs for t in doc], dtype=np.int64)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    return ids, offsets


def _unragged(ids, offsets, words):
    return [[words[t] for t in ids[lo:hi]] for lo, hi in zip(offsets[:-1], offsets[1:], strict=False)]


def _corpus(seed: int, n_docs: int = 300):
    rng = np.random.default_rng(seed)
    # many filler words (so that the collocations below score high) plus edge cases: the
    # empty token, a token containing the delimiter, chains like "a b a b a"
    vocab = [f"w{i}" for i in range(400)] + ["", "x_y", "x", "y", "the"]
    docs = []
    for _ in range(n_docs):
        doc = [str(t) for t in rng.choice(vocab, size=int(rng.integers(0, 12)))]
        for phrase, p in ((["new", "york", "city"], 0.5), (["a", "b", "a", "b", "a"], 0.3), (["x", "y"], 0.2)):
            if rng.random() < p:
                at = int(rng.integers(0, len(doc) + 1))
                doc[at:at] = phrase
        docs.append(doc)
    return docs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_join_phrases_equals_gensim_unit_by_unit(seed):
    docs = _corpus(seed)
    phrasers = train_phrases(docs, min_count=2, threshold=5.0)
    assert len(phrasers[0].phrasegrams) > 0 and len(phrasers[1].phrasegrams) > 0  # the test means something
    words = sorted({t for d in docs for t in d})
    ids, offsets = _ragged(docs, words)
    out_ids, out_offsets, out_words = join_phrases(phrasers, ids, offsets, words)
    assert out_words[: len(words)] == words
    expected = [apply_phrases(phrasers, d) for d in docs]
    assert _unragged(out_ids, out_offsets, out_words) == expected
    assert any(len(e) < len(d) for e, d in zip(expected, docs, strict=False))  # some phrases were joined
    joined = {t for e in expected for t in e if "_" in t}
    assert {"new_york_city", "a_b"} <= joined, joined  # two-word and three-word phrases


def test_join_phrases_never_crosses_a_unit_boundary():
    docs = [["new", "york"]] * 20 + [["new"], ["york"], ["new", "york"]]
    phrasers = train_phrases(docs, min_count=1, threshold=0.1)
    words = ["new", "york"]
    ids, offsets = _ragged(docs[-3:], words)
    out_ids, out_offsets, out_words = join_phrases(phrasers, ids, offsets, words)
    assert _unragged(out_ids, out_offsets, out_words) == [["new"], ["york"], ["new_york"]]


def test_join_phrases_without_phrasers_returns_the_input():
    ids, offsets = _ragged([["a", "b"], []], ["a", "b"])
    out_ids, out_offsets, out_words = join_phrases(None, ids, offsets, ["a", "b"])
    assert out_ids.tolist() == [0, 1] and out_offsets.tolist() == [0, 2, 2] and out_words == ["a", "b"]


def test_join_phrases_with_connector_words_falls_back_to_gensim():
    docs = [["bank", "of", "america"]] * 30 + [["bank", "of", "england"]] * 2
    phraser = Phrases(docs, min_count=1, threshold=0.1, connector_words=frozenset({"of"})).freeze()
    words = ["bank", "of", "america", "england"]
    ids, offsets = _ragged(docs[-3:], words)
    out = join_phrases((phraser,), ids, offsets, words)
    assert _unragged(*out) == [phraser[d] for d in docs[-3:]]
    assert _unragged(*out)[0] == ["bank_of_america"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=30))
def test_greedy_joins_matches_a_left_to_right_scan(flags):
    candidate = np.asarray(flags, dtype=bool)
    expected = []
    joined_previous = False
    for flag in flags:
        join = flag and not joined_previous
        expected.append(join)
        joined_previous = join
    assert _greedy_joins(candidate).tolist() == expected


@pytest.mark.parametrize("block", [1, 2, 16384])
def test_mean_directions_of_ids_equals_the_token_list_version(block, monkeypatch):
    from gensim.models.keyedvectors import KeyedVectors

    from statinterp.vectors import embeddings as embedding

    monkeypatch.setattr(embedding, "LOOKUP_BLOCK", block)  # vectors looked up a few words at a time

    rng = np.random.default_rng(3)
    kv = KeyedVectors(4)
    kv.add_vectors(["a", "b", "c", "zero"], np.vstack([rng.normal(size=(3, 4)), np.zeros((1, 4))]))
    docs = [["a", "b", "a"], [], ["oov"], ["zero", "c"], ["c", "oov", "b"]]
    words = ["a", "b", "c", "zero", "oov"]
    ids, offsets = _ragged(docs, words)
    by_ids = mean_directions_of_ids(ids, offsets, words, kv)
    reference = np.zeros((len(docs), 4))
    for i, doc in enumerate(docs):
        mean = embedding.mean_unit_vector(doc, kv)
        if mean is not None:
            reference[i] = mean / np.linalg.norm(mean)
    np.testing.assert_allclose(by_ids, reference, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(mean_directions(docs, kv), reference, rtol=1e-12, atol=1e-15)
    assert np.allclose(by_ids[1], 0) and np.allclose(by_ids[2], 0)
    expected = kv["a"] / np.linalg.norm(kv["a"]) * 2 + kv["b"] / np.linalg.norm(kv["b"])
    assert np.allclose(by_ids[0], expected / np.linalg.norm(expected))


def test_join_phrases_in_sentences_equals_gensim_and_trains_the_same_phrases():
    from statinterp.vectors.embeddings import join_phrases_in_sentences

    docs = _corpus(4)
    phrasers = train_phrases(docs, min_count=2, threshold=5.0)  # a list: the trigram pass uses join_phrases
    assert join_phrases_in_sentences(phrasers, docs) == [apply_phrases(phrasers, d) for d in docs]
    assert join_phrases_in_sentences(None, docs) == docs

    class Stream:  # re-iterable but not a list: the trigram pass applies gensim's bigram model itself
        def __iter__(self):
            return iter(docs)

    streamed = train_phrases(Stream(), min_count=2, threshold=5.0)
    for ours, gensims in zip(phrasers, streamed, strict=False):
        assert ours.phrasegrams == gensims.phrasegrams
    assert any(len(p.split("_")) == 3 for p in phrasers[1].phrasegrams)  # the trigram pass found something
