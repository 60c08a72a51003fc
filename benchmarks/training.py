"""Word-embedding training throughput: statinterp's ``train_vectors`` against gensim run directly.

Both train on the same token sentences with the same hyper-parameters (skip-gram, 300
dimensions, window 5, min_count 5, seed 1; fastText with the same buckets and n-gram lengths).
Phrase joining is off on both sides (it is a statinterp feature that gensim's plain training
does not do, not an overhead). Throughput is raw words x epochs / wall seconds of
``build_vocab`` + ``train`` (what ``train_vectors`` does).
"""

from __future__ import annotations

import time


def read_corpus(path: str) -> list[list[str]]:
    with open(path, encoding="utf-8") as fh:
        return [line.split() for line in fh if line.strip()]


def run_training(corpus_path: str, kind: str, impl: str, workers: int, epochs: int, bucket: int) -> dict:
    sentences = read_corpus(corpus_path)
    words = sum(len(s) for s in sentences)
    common = dict(vector_size=300, window=5, min_count=5, sg=1, epochs=epochs, seed=1, workers=workers)
    if impl == "statinterp":
        from statinterp.vectors.embeddings import VectorSettings, train_vectors

        extra = dict(bucket=bucket, min_n=3, max_n=6) if kind == "fasttext" else {}
        settings = VectorSettings(kind, dim=300, epochs=epochs, window=5, min_count=5, sg=1, phrases=False,
                                  seed=1, workers=workers, **extra)
        start = time.perf_counter()
        vectors = train_vectors(sentences, settings)
        wall = time.perf_counter() - start
        vocab = len(vectors.kv.index_to_key)
    else:
        from gensim.models import FastText, Word2Vec

        start = time.perf_counter()
        if kind == "word2vec":
            model = Word2Vec(**common)
        else:
            model = FastText(**common, bucket=bucket, min_n=3, max_n=6)
        model.build_vocab(sentences)
        model.train(sentences, total_examples=model.corpus_count, epochs=model.epochs)
        wall = time.perf_counter() - start
        vocab = len(model.wv.index_to_key)
    return {"kind": kind, "impl": impl, "workers": workers, "epochs": epochs, "words": words,
            "sentences": len(sentences), "wall": wall, "words_per_second": words * epochs / wall, "vocab": vocab}
