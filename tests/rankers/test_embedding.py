"""Tests of the embedding methods: Cosine as a Similarity, the VectorProvider, --vectors."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from gensim.models.keyedvectors import KeyedVectors

from statinterp.app.cli import main
from statinterp.errors import InputError, UsageError
from statinterp.evaluation.ranking import rank
from statinterp.rankers.base import Interpolated, Recursive
from statinterp.rankers.embedding import Cosine, cosine_scores
from statinterp.rankers.grammar import build_method, list_methods
from statinterp.vectors import embeddings
from statinterp.vectors.embeddings import DomainVectors, VectorSettings, train_phrases, train_vectors
from statinterp.vectors.provider import (
    VectorProvider,
    domain_settings,
    fasttext_buckets,
    parse_vectors_option,
    required_pretrained,
    vector_kinds,
)
from statinterp.workflow import attach_vectors, evaluate_methods, open_corpus, prepare_corpus

SMALL = {
    "word2vec": VectorSettings("word2vec", dim=20, min_count=1, epochs=2),
    "fasttext": VectorSettings("fasttext", dim=20, min_count=1, epochs=2, bucket=2000),
}


# ----------------------------------------------------------------------------------------
# fixtures and helpers


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def prepared(cache_dir):
    return prepare_corpus(open_corpus(), cache_dir=cache_dir)


@pytest.fixture(scope="module")
def index(prepared):
    return prepared["vehicle"]


def random_kv(words, dim=8, seed=5, skip_every=0) -> KeyedVectors:
    """Random vectors for ``words`` (every ``skip_every``-th word left out, to test skipping)."""
    words = sorted(set(words))
    if skip_every:
        words = [w for i, w in enumerate(words) if i % skip_every]
    rng = np.random.default_rng(seed)
    kv = KeyedVectors(dim)
    kv.add_vectors(words, rng.normal(size=(len(words), dim)).astype(np.float32))
    return kv


def unit_tokens(index, units):
    words = index.vocab.words
    return [[words[i] for i in units.seqs.row(r)] for r in range(len(units.seqs))]


def with_provider(prepared, **pretrained) -> VectorProvider:
    return attach_vectors(prepared, cache_dir=False, pretrained=pretrained, settings=SMALL)


def fingerprint(kv: KeyedVectors) -> str:
    digest = hashlib.sha256()
    digest.update("\n".join(kv.index_to_key).encode())
    digest.update(np.ascontiguousarray(kv.vectors).tobytes())
    return digest.hexdigest()


# ----------------------------------------------------------------------------------------
# Cosine


def test_cosine_equals_cosine_scores(prepared, index):
    kv = random_kv(index.vocab.words, skip_every=3)
    with_provider(prepared, w2vec=DomainVectors(kv))
    sentences = index.levels["sentence"]
    expected = sentences.spread(cosine_scores(index.query.tokens, unit_tokens(index, sentences), kv))
    got = Cosine("w2vec").score(index)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert got.shape == (len(index),)
    assert np.all(np.abs(got) <= 1.0)


def test_a_text_without_vectors_scores_zero(prepared, index):
    kv = random_kv(["zzz-not-a-token"])  # no token of the corpus has a vector
    with_provider(prepared, GloVe=DomainVectors(kv))
    assert np.all(Cosine("GloVe").score(index) == 0.0)


def test_cosine_applies_the_phrase_model_to_query_and_units(prepared, index):
    sentences = index.levels["sentence"]
    docs = unit_tokens(index, sentences)
    phrasers = train_phrases(docs + [list(index.query.tokens)] * 5, min_count=2, threshold=0.1)
    joined = [DomainVectors(None, phrasers).transform(d) for d in docs]
    assert any("_" in t for d in joined for t in d), "the test needs at least one joined phrase"
    kv = random_kv([t for d in joined for t in d] + index.query.tokens)
    dv = DomainVectors(kv, phrasers)
    with_provider(prepared, w2vec=dv)
    expected = cosine_scores(dv.transform(index.query.tokens), joined, kv)
    np.testing.assert_allclose(Cosine("w2vec").score(index), sentences.spread(expected), atol=1e-12)


def test_interpolated_and_recursive_cosine(prepared, index):
    kv = random_kv(index.vocab.words)
    with_provider(prepared, w2vec=DomainVectors(kv))
    sim = Cosine("w2vec")
    own = sim.score(index)
    paragraphs = index.levels["paragraph"]
    para = paragraphs.spread(cosine_scores(index.query.tokens, unit_tokens(index, paragraphs), kv))
    got = Interpolated(sim, "paragraph", 0.3).score(index)
    np.testing.assert_allclose(got, 0.7 * own + 0.3 * para, atol=1e-12)
    assert build_method("w2vec-p").score(index).shape == (len(index),)
    rec = Recursive(sim, lam=0.6)
    scores = rec.score(index)
    assert scores.shape == (len(index),) and np.isfinite(scores).all()
    assert not np.allclose(scores, own)  # the neighbours count
    near = rec.neighbour_scores(index)
    manual = 0.4 * own
    for sign in (-1, 1):
        r = near[4 * sign]
        for d in (3, 2, 1):
            r = 0.4 * near[d * sign] + 0.6 * r
        manual = manual + 0.6 * r
    np.testing.assert_allclose(scores, manual, atol=1e-12)
    assert rank(build_method("w2vec-r"), index).method == "w2vec-r"


def test_unit_vectors_are_memoised_per_index_and_kind(prepared, index, monkeypatch):
    kv = random_kv(index.vocab.words)
    dv = DomainVectors(kv)
    with_provider(prepared, w2vec=dv)
    first = build_method("w2vec-c").score(index)
    calls = []
    original = DomainVectors.transform
    monkeypatch.setattr(DomainVectors, "transform", lambda self, tokens: calls.append(1) or original(self, tokens))
    second = build_method("w2vec-c").score(index)
    np.testing.assert_array_equal(first, second)
    assert calls == []  # neither the query nor any unit is joined again


def test_method_names_parse_and_are_listed():
    names = dict(list_methods())
    for name in ("w2vec*", "fastt*", "w2vec", "GloVe", "fastt"):
        assert name in names and names[name]
        for suffix in ("c", "o", "p", "r"):
            assert f"{name}-{suffix}" in names
    assert isinstance(build_method("w2vec*-r"), Recursive)
    assert build_method("w2vec*-r").name == "w2vec*-r"
    assert build_method("fastt*-p").similarity.kind == "fasttext"
    assert build_method("GloVe-c").name == "GloVe-c"
    assert vector_kinds(build_method("w2vec*-r")) == ["word2vec"]
    assert vector_kinds(build_method("TF-ISF-p")) == []
    with pytest.raises(UsageError, match="--vectors GloVe=PATH"):
        required_pretrained([build_method("GloVe-p")], {})
    assert required_pretrained([build_method("GloVe-p"), build_method("w2vec*")], {"GloVe": "x"}) == ["GloVe"]


def test_no_vectors_attached_is_a_usage_error(prepared, index):
    saved = index.vectors
    try:
        index.vectors = None
        with pytest.raises(UsageError, match="needs word vectors"):
            Cosine("word2vec").score(index)
    finally:
        index.vectors = saved


def test_pretrained_method_without_vectors(prepared, index):
    with_provider(prepared)
    with pytest.raises(UsageError, match=r"method GloVe needs pretrained vectors: pass --vectors GloVe=PATH"):
        build_method("GloVe").score(index)


# ----------------------------------------------------------------------------------------
# domain vectors


def test_preparing_does_not_train(cache_dir, monkeypatch):
    monkeypatch.setattr(embeddings, "train_vectors", _fail)
    prepared = prepare_corpus(open_corpus(), cache_dir=cache_dir)
    assert prepared.vectors is prepared["vehicle"].vectors
    evaluate_methods(prepared, ["TF-ISF-p", "Random"])
    assert prepared.vectors.origin == {}


def _fail(*args, **kwargs):
    raise AssertionError("train_vectors must not be called")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["word2vec", "fasttext"])
def test_domain_vectors_are_cached_and_deterministic(prepared, tmp_path, monkeypatch, kind):
    first = VectorProvider(prepared, cache_dir=tmp_path, settings=SMALL)
    trained = first.get(kind)
    assert first.origin[kind] == "trained"
    assert trained.kv.vector_size == 20
    assert first.get("w2vec*" if kind == "word2vec" else "fastt*") is trained
    assert list((tmp_path / "vectors").rglob("*.vectors"))

    # the same as train_vectors on the provider's sentences, phrases included
    direct = train_vectors(first.sentences(), SMALL[kind])
    assert fingerprint(direct.kv) == fingerprint(trained.kv)
    # a second training gives the same vectors
    again = VectorProvider(prepared, cache_dir=False, settings=SMALL).get(kind)
    assert fingerprint(again.kv) == fingerprint(trained.kv)

    monkeypatch.setattr(embeddings, "train_vectors", _fail)
    second = VectorProvider(prepared, cache_dir=tmp_path, settings=SMALL)
    cached = second.get(kind)
    assert second.origin[kind] == "cache"
    assert fingerprint(cached.kv) == fingerprint(trained.kv)
    sentence = ["the", "vehicle", "be", "in", "the", "park"]
    assert cached.transform(sentence) == trained.transform(sentence)


def test_domain_cosine_ranks(prepared, index):
    attach_vectors(prepared, cache_dir=False, settings=SMALL)
    for name in ("w2vec*", "w2vec*-p", "w2vec*-r", "fastt*", "fastt*-r"):
        scores = build_method(name).score(index)
        assert scores.shape == (len(index),) and np.isfinite(scores).all()
    results = evaluate_methods(prepared, ["w2vec*", "fastt*-r"])
    assert [r.method for r in results] == ["w2vec*", "fastt*-r"]
    assert prepared.vectors.origin == {"word2vec": "trained", "fasttext": "trained"}
    # the phrase model is learnt once and shared by both kinds
    assert prepared.vectors.get("word2vec").phrasers is prepared.vectors.get("fasttext").phrasers


def test_corpus_hash_ignores_order_and_sees_content(prepared):
    texts = [c.text for c in prepared["vehicle"].term.cases.values()]
    a = VectorProvider(texts, analyzer=prepared.analyzer, cache_dir=False)
    b = VectorProvider(list(reversed(texts)) + texts[:1], analyzer=prepared.analyzer, cache_dir=False)
    c = VectorProvider(texts[1:], analyzer=prepared.analyzer, cache_dir=False)
    assert a.corpus_hash == b.corpus_hash != c.corpus_hash
    assert a.corpus_hash == VectorProvider(prepared, cache_dir=False).corpus_hash


def test_settings_defaults_and_workers(prepared):
    provider = VectorProvider(prepared, cache_dir=False, workers=3)
    w2v = provider.settings["word2vec"]
    assert (w2v.dim, w2v.epochs, w2v.sg, w2v.workers, w2v.phrases) == (300, 5, 1, 3, True)
    chars = sum(len(c.text) for c in prepared["vehicle"].term.cases.values())
    assert provider.settings["fasttext"].bucket == fasttext_buckets(chars) == 20_000
    assert fasttext_buckets(10**9) == 500_000
    assert domain_settings("fasttext").bucket == 500_000
    with pytest.raises(UsageError):
        VectorProvider(prepared, settings={"glove": SMALL["word2vec"]})
    with pytest.raises(UsageError):
        VectorProvider(prepared, workers=0)
    with pytest.raises(UsageError, match="unknown word vectors"):
        provider.get("nope")


# ----------------------------------------------------------------------------------------
# --vectors


def write_vectors(path, words, header=True, dim=4, seed=1):
    rng = np.random.default_rng(seed)
    lines = [f"{len(words)} {dim}"] if header else []
    for word in words:
        lines.append(word + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=dim)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


WORDS = ["vehicle", "park", "the", "car", "bicycle", "drone", "ordinance", "motor", "a", "be", "in", "of"]


def test_parse_vectors_option(tmp_path):
    w2v = write_vectors(tmp_path / "w.txt", WORDS)
    glove = write_vectors(tmp_path / "g.txt", WORDS, header=False)
    vec = write_vectors(tmp_path / "crawl.vec", WORDS)
    assert parse_vectors_option([str(w2v)]) == {"w2vec": w2v}
    assert parse_vectors_option([str(glove)]) == {"GloVe": glove}
    assert parse_vectors_option([str(vec)]) == {"fastt": vec}
    assert parse_vectors_option([f"glove={w2v}"]) == {"GloVe": w2v}
    with pytest.raises(UsageError, match="twice"):
        parse_vectors_option([str(w2v), f"w2vec={w2v}"])
    with pytest.raises(UsageError, match="unknown vectors name"):
        parse_vectors_option([f"bert={w2v}"])
    with pytest.raises(InputError, match="not found"):
        parse_vectors_option([str(tmp_path / "missing.txt")])


def run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_ranks_with_pretrained_vectors(tmp_path, capsys, cache_dir):
    w2v = write_vectors(tmp_path / "w2v.txt", WORDS)
    glove = write_vectors(tmp_path / "glove.txt", WORDS, header=False, seed=2)
    code, out, err = run(capsys, "rank", "vehicle", "-m", "GloVe", "--vectors", f"GloVe={glove}",
                         "--cache-dir", str(cache_dir), "-q", "-n", "3")
    assert code == 0, err
    assert "1." in out
    code, out, err = run(capsys, "rank", "vehicle", "-m", "w2vec-r", "--vectors", str(w2v),
                         "--cache-dir", str(cache_dir), "-q", "-n", "3", "--format", "json")
    assert code == 0, err
    code, out, err = run(capsys, "evaluate", "-m", "w2vec,GloVe-p", "--vectors", str(w2v), "--vectors",
                         str(glove), "--cache-dir", str(cache_dir), "-q", "--macro-only")
    assert code == 0, err
    assert "GloVe-p" in out and "w2vec" in out


@pytest.mark.parametrize(
    "content",
    [None, "", "just some words\nand more words\n", "3 4\ncar 0.1 x 0.3 0.4\n", "2 4\ncar 0.1 0.2 0.3 0.4\n"],
    ids=["missing", "empty", "text", "bad-number", "truncated"],
)
def test_cli_bad_vectors_file(tmp_path, capsys, cache_dir, content):
    path = tmp_path / "vectors.txt"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    out_file = tmp_path / "ranking.json"
    code, out, err = run(capsys, "rank", "vehicle", "-m", "w2vec", "--vectors", f"w2vec={path}",
                         "--cache-dir", str(cache_dir), "-q", "--out", str(out_file))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("statinterp: error: ") and str(path) in err
    assert not out_file.exists() and out == ""


def test_cli_pretrained_method_needs_vectors(capsys, cache_dir):
    code, out, err = run(capsys, "rank", "vehicle", "-m", "GloVe-p", "--cache-dir", str(cache_dir), "-q")
    assert code == 2
    assert err.count("\n") == 1 and "--vectors GloVe=PATH" in err
    code, out, err = run(capsys, "evaluate", "-m", "fastt", "--cache-dir", str(cache_dir), "-q")
    assert code == 2 and "--vectors fastt=PATH" in err


def test_cli_methods_lists_embedding_methods(capsys):
    code, out, err = run(capsys, "methods")
    assert code == 0
    lines = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {"w2vec*", "w2vec*-r", "fastt*", "fastt*-p", "w2vec", "GloVe", "fastt", "GloVe-r"} <= lines


# ----------------------------------------------------------------------------------------
# the on-disk cache of unit directions (statinterp.cache.namespaces)


def _fresh(cache_dir, vectors_dir):
    """A new prepared corpus (empty per-index memos) whose vectors and directions live in ``vectors_dir``."""
    fresh = prepare_corpus(open_corpus(), cache_dir=cache_dir)
    attach_vectors(fresh, cache_dir=vectors_dir, settings=SMALL)
    return fresh


def test_unit_directions_are_cached_on_disk_and_give_the_same_scores(cache_dir, tmp_path, monkeypatch):
    from statinterp.vectors import embeddings as directions

    methods = ("w2vec*", "w2vec*-c", "w2vec*-r", "fastt*-o")
    cold = _fresh(cache_dir, tmp_path)
    expected = {m: build_method(m).score(cold["vehicle"]) for m in methods}
    files = sorted((tmp_path / "directions").rglob("*.d.bin"))
    assert len(files) == 2  # one per term and vector kind
    assert len(list((tmp_path / "directions").rglob("*.q.bin"))) == 2  # the term's query, per kind
    monkeypatch.setattr(directions, "join_phrases", _fail)  # a warm run must not compute them again
    warm = _fresh(cache_dir, tmp_path)
    monkeypatch.setattr(VectorProvider, "get", _fail)  # ... nor even load the vectors
    for m in methods:
        np.testing.assert_array_equal(build_method(m).score(warm["vehicle"]), expected[m])
    (result,) = evaluate_methods(_fresh(cache_dir, tmp_path), ["fastt*-o"])  # prefetching leaves cached vectors be
    assert result.method == "fastt*-o"


def test_a_damaged_directions_file_is_recomputed_with_a_warning(cache_dir, tmp_path):
    from statinterp.errors import StatinterpWarning

    expected = build_method("w2vec*-c").score(_fresh(cache_dir, tmp_path)["vehicle"])
    (path,) = (tmp_path / "directions").rglob("*.d.bin")
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(StatinterpWarning, match="damaged directions cache entry"):
        again = build_method("w2vec*-c").score(_fresh(cache_dir, tmp_path)["vehicle"])
    np.testing.assert_array_equal(again, expected)
    assert path.exists() and path.read_bytes() != bytes(data)  # rewritten intact
    # the same for a query's direction file
    (query_path,) = (tmp_path / "directions").rglob("*.q.bin")
    truncated = query_path.read_bytes()[:-3]
    query_path.write_bytes(truncated)
    with pytest.warns(StatinterpWarning, match="damaged directions cache entry"):
        again = build_method("w2vec*-c").score(_fresh(cache_dir, tmp_path)["vehicle"])
    np.testing.assert_array_equal(again, expected)
    assert query_path.exists() and query_path.read_bytes() != truncated  # rewritten intact


def test_directions_of_vectors_without_a_source_are_not_cached(prepared, index, tmp_path):
    attach_vectors(prepared, cache_dir=tmp_path, pretrained={"w2vec": DomainVectors(random_kv(index.vocab.words))})
    build_method("w2vec-c").score(index)
    assert not list((tmp_path / "directions").rglob("*.bin"))  # neither units nor queries


def test_a_changed_vectors_file_gets_new_directions(cache_dir, tmp_path):
    path = tmp_path / "vectors.txt"
    write_vectors(path, WORDS, seed=1)
    first = prepare_corpus(open_corpus(), cache_dir=cache_dir)
    attach_vectors(first, cache_dir=tmp_path / "c", pretrained={"w2vec": path})
    one = build_method("w2vec-c").score(first["vehicle"])
    write_vectors(path, WORDS, seed=2)
    second = prepare_corpus(open_corpus(), cache_dir=cache_dir)
    attach_vectors(second, cache_dir=tmp_path / "c", pretrained={"w2vec": path})
    two = build_method("w2vec-c").score(second["vehicle"])
    assert len(list((tmp_path / "c" / "directions").rglob("*.d.bin"))) == 2
    assert not np.allclose(one, two)
