"""The cache package (statinterp/cache/): every cache and model read refuses what is not a
regular file and what is larger than it may be, vector cache files follow the umask, old
pickles of moved classes are discarded (caches) or rejected with one line (models)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import signal
import stat
import warnings
from pathlib import Path

import numpy as np
import pytest

from statinterp.cache.files import NotRegularFile, TooLarge, read_array_file, read_regular, write_array_file
from statinterp.cache.namespaces import AnalysisCache, CacheWarning, DirectionCache, VectorCache
from statinterp.errors import InputError, StatinterpWarning
from statinterp.text.analysis import Analyzer, text_hash
from tests.support.cli import capture_main
from tests.support.files import umask

TEXTS = ["The cart is a vehicle. It moves.", "No vehicles in the park."]


@contextlib.contextmanager
def deadline(seconds: int = 30):
    """Fail (instead of hanging for good) if the block takes longer than ``seconds``."""

    def expired(signum, frame):
        raise AssertionError(f"still reading after {seconds} s: the read blocked or never ended")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def make_special(path: Path, kind: str) -> None:
    """Replace ``path`` by a symlink to /dev/zero, a FIFO, or a folder."""
    if path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        assert kind == "null"
        path.symlink_to("/dev/null")


SPECIAL = ["zero", "fifo", "null"]


# ----------------------------------------------------------------------------- files.py


@pytest.mark.parametrize("kind", SPECIAL)
def test_read_regular_refuses_special_files_without_reading_them(tmp_path, kind):
    path = tmp_path / "entry"
    make_special(path, kind)
    with deadline(), pytest.raises(NotRegularFile):
        read_regular(path, 1 << 20)


def test_read_regular_refuses_a_file_over_its_limit(tmp_path):
    path = tmp_path / "entry"
    path.write_bytes(b"x" * 101)
    assert read_regular(path, 101) == b"x" * 101
    with pytest.raises(TooLarge):
        read_regular(path, 100)


# ----------------------------------------------------------------------------- analysis cache


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """(cache folder, the analyses made without a cache)."""
    cache = tmp_path_factory.mktemp("analysis")
    Analyzer(cache_dir=cache, n_process=1).analyse(TEXTS)
    reference = Analyzer(cache_dir=False, n_process=1)
    return cache, [(a.ids.tolist(), a.sentences.tolist()) for a in reference.analyse(TEXTS)], reference


@pytest.mark.parametrize("kind", [*SPECIAL, "oversized"])
def test_an_analysis_entry_that_is_no_regular_file_or_too_large_is_discarded_and_rebuilt(analysed, tmp_path, kind):
    import shutil

    source, _, reference = analysed
    cache = tmp_path / "cache"
    shutil.copytree(source, cache)
    an = Analyzer(cache_dir=cache, n_process=1)
    path = an.cache.path(text_hash(TEXTS[0]))
    good = path.read_bytes()
    if kind == "oversized":  # a valid entry followed by far more bytes than a text this short can need
        path.write_bytes(good + bytes(200_000))
    else:
        make_special(path, kind)
    with deadline(), pytest.warns(StatinterpWarning, match="discarding damaged analysis cache entry") as caught:
        results = an.analyse(TEXTS)
    reason = str(caught[0].message)
    assert ("more than" in reason) if kind == "oversized" else ("not a regular file" in reason)
    words = [[an.vocab.words[i] for i in a.ids] for a in results]
    expected = [[reference.vocab.words[i] for i in a.ids] for a in reference.analyse(TEXTS)]
    assert words == expected
    assert path.is_file() and not path.is_symlink() and path.read_bytes() == good  # rebuilt
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Analyzer(cache_dir=cache, n_process=1).analyse(TEXTS)  # and read silently again


def test_analysis_cache_get_takes_a_size_limit(tmp_path):
    cache = AnalysisCache(tmp_path, "k")
    digest = text_hash("x")
    cache.put(digest, {"a": np.arange(1000, dtype=np.int32)})
    assert cache.get(digest)["a"].tolist() == list(range(1000))
    with pytest.warns(StatinterpWarning, match="more than the 100"):
        assert cache.get(digest, max_bytes=100) is None
    assert not cache.path(digest).exists()


# ----------------------------------------------------------------------------- array files (prepared, directions)


def test_an_array_file_longer_than_its_header_says_is_refused(tmp_path):
    path = tmp_path / "a.bin"
    write_array_file(path, b"magic\n", "key", {"x": 1}, {"v": np.arange(5.0)})
    meta, array = read_array_file(path, b"magic\n", "key")
    assert meta["x"] == 1 and array("v").tolist() == [0, 1, 2, 3, 4]
    with open(path, "ab") as fh:
        fh.write(bytes(8))
    with pytest.raises(ValueError, match="where the header says"):
        read_array_file(path, b"magic\n", "key")


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_directions_file_that_is_no_regular_file_is_discarded(tmp_path, kind):
    cache = DirectionCache(tmp_path)
    cache.put("k", {"level:sentence": np.ones((3, 2))})
    assert cache.get("k", {"level:sentence": 3})["level:sentence"].shape == (3, 2)
    make_special(cache.path("k"), kind)
    with deadline(), pytest.warns(StatinterpWarning, match="damaged directions cache entry"):
        assert cache.get("k", {"level:sentence": 3}) is None
    assert not os.path.lexists(cache.path("k"))


@pytest.mark.parametrize("kind", [*SPECIAL, "appended"])
def test_a_prepared_corpus_file_that_is_no_regular_file_or_too_long_is_discarded_and_rebuilt(tmp_path, kind):
    from statinterp.workflow import open_corpus, prepare_corpus

    corpus = open_corpus()
    expected = prepare_corpus(corpus, cache_dir=tmp_path)["vehicle"]
    (path,) = (tmp_path / "prepared").rglob("*.bin")
    good = path.read_bytes()
    if kind == "appended":
        path.write_bytes(good + bytes(64))
    else:
        make_special(path, kind)
    with deadline(), pytest.warns(StatinterpWarning, match="discarding damaged prepared cache entry"):
        again = prepare_corpus(open_corpus(), cache_dir=tmp_path)["vehicle"]
    for lvl, units in expected.levels.items():
        words = [again.vocab.words[i] for i in again.levels[lvl].seqs.ids]
        assert [expected.vocab.words[i] for i in units.seqs.ids] == words
    assert path.is_file() and not path.is_symlink() and path.read_bytes() == good  # rebuilt


# ----------------------------------------------------------------------------- vector cache


class _Settings:
    def key(self) -> str:
        return "test-settings"


@pytest.fixture(scope="module")
def small_vectors():
    from gensim.models.keyedvectors import KeyedVectors

    from statinterp.vectors.embeddings import DomainVectors

    kv = KeyedVectors(3)
    kv.add_vectors(["cart", "vehicle", "park"], np.arange(9, dtype=np.float32).reshape(3, 3))
    return DomainVectors(kv)


@pytest.mark.slow
def test_vector_cache_files_follow_the_umask(tmp_path, small_vectors):
    path = VectorCache(tmp_path).put("corpus", _Settings(), small_vectors)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask()  # not mkstemp's 0600
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


@pytest.mark.slow
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_vector_cache_entry_that_is_no_regular_file_is_discarded(tmp_path, small_vectors, kind):
    cache = VectorCache(tmp_path)
    path = cache.put("corpus", _Settings(), small_vectors)
    make_special(path, kind)
    with deadline(), pytest.warns(CacheWarning, match="discarding damaged vectors cache entry"):
        assert cache.get("corpus", _Settings()) is None
    assert not os.path.lexists(path)


def _entry_with_pickle(cache: VectorCache, payload: bytes) -> Path:
    """A vector cache entry with a valid magic line and checksum around ``payload``."""
    path = cache.path_for("corpus", _Settings())
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(payload).hexdigest().encode("ascii")
    path.write_bytes(cache.MAGIC + payload + b"\nSHA256:" + digest)
    return path


def _pickle_of_missing_module(module: str, name: str) -> bytes:
    """A pickle (protocol 2) of an instance of ``module.name``, a class that does not exist."""
    return (b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n)\x81}b.")


def test_a_vector_cache_entry_of_a_moved_class_is_discarded_with_one_warning(tmp_path):
    cache = VectorCache(tmp_path)
    path = _entry_with_pickle(cache, _pickle_of_missing_module("statinterp.embeddings", "DomainVectors"))
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(_pickle_of_missing_module("statinterp.embeddings", "DomainVectors"))
    with pytest.warns(CacheWarning, match="another version of statinterp") as caught:
        assert cache.get("corpus", _Settings()) is None
    assert len(caught) == 1 and "\n" not in str(caught[0].message)
    assert not path.exists()


def test_a_damaged_vector_cache_warns_in_one_statinterp_line_on_the_command_line(tmp_path):
    cache_dir = tmp_path / "cache"
    argv = ["rank", "vehicle", "-q", "-m", "w2vec*", "--top", "3", "--format", "json", "--cache-dir", str(cache_dir)]
    code, first, err = capture_main(argv)
    assert code == 0, err
    (entry,) = (cache_dir / "vectors").rglob("*.vectors")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o666 & ~umask()
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    for directions in (cache_dir / "directions").rglob("*.bin"):
        directions.unlink()  # so that the vectors are needed again
    code, again, err = capture_main(argv)
    assert code == 0, err
    assert again == first  # retrained: the same vectors (one worker, fixed seed), the same ranking
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("statinterp: warning: discarding damaged vectors cache entry")


# ----------------------------------------------------------------------------- models


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_model_that_is_no_regular_file_stops_with_one_line(tmp_path, kind):
    path = tmp_path / "x.model"
    make_special(path, kind)
    with deadline():
        code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("statinterp: error: ") and "not a model file" in err


def test_model_dev_zero_stops_with_one_line():
    with deadline():
        code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", "/dev/zero"])
    assert code == 2 and err.count("\n") == 1 and "/dev/zero" in err and "character device" in err


def _model_file(path: Path, payload: bytes, **header) -> Path:
    from statinterp.learned.model import FORMAT_VERSION, MAGIC

    head = {"format": FORMAT_VERSION, "versions": {}, **header}
    path.write_bytes(MAGIC + b"\n" + json.dumps(head).encode() + b"\n" + payload)
    return path


def test_a_model_longer_than_its_header_says_is_refused(tmp_path):
    from statinterp.learned.model import read_header

    path = _model_file(tmp_path / "m.model", b"12345", payload_bytes=5)
    assert read_header(path)[1] == b"12345"
    _model_file(path, b"123456789", payload_bytes=5)
    with pytest.raises(InputError, match="retrain"):
        read_header(path)
    _model_file(path, b"123", payload_bytes=5)
    with pytest.raises(InputError, match="3 bytes where 5"):
        read_header(path)


def test_a_model_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from statinterp.learned import model

    path = _model_file(tmp_path / "m.model", b"x" * 1000)
    monkeypatch.setattr(model, "MAX_MODEL_BYTES", 500)
    with pytest.raises(InputError, match="too large"):
        model.read_header(path)


def test_a_pickled_model_is_refused_unread_with_one_line_saying_how_to_convert(tmp_path):
    """A format-1 file (a pickle, here of a class that has moved) is not unpickled at all: the line
    says how to convert it; only `model upgrade` reads it, and there the moved class is one line."""
    payload = _pickle_of_missing_module("statinterp.scorers.lexical", "TFISF")
    path = _model_file(tmp_path / "old.model", payload, format=1)
    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--model", str(path)])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "format 1" in err and f"statinterp model upgrade {path} NEW_FILE" in err
    code, out, err = capture_main(["model", "upgrade", str(path), str(tmp_path / "new.model")])
    assert code == 2 and err.count("\n") == 1 and "statinterp.scorers" in err


def test_a_model_written_now_records_its_payload_size_and_loads(tmp_path):
    from statinterp.learned.features import FeatureSettings
    from statinterp.learned.model import fit_ranker, load_model, read_header, save_model
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(), cache_dir=False)
    ranker = fit_ranker(list(prepared), FeatureSettings(vectors="off"), "linear")
    path = save_model(ranker, tmp_path / "m.model")
    header, payload = read_header(path)
    assert header["payload_bytes"] == len(payload) > 0
    assert np.array_equal(load_model(path).score(prepared["vehicle"]), ranker.score(prepared["vehicle"]))


# ----------------------------------------------------------------------------- the provider reports through logging


def test_vector_training_is_reported_through_logging_not_printed(tmp_path, caplog, capfd):
    import logging

    from statinterp.vectors.provider import VectorProvider, domain_settings
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(), cache_dir=tmp_path)
    settings = {"word2vec": domain_settings("word2vec", dim=8, epochs=1, min_count=1, phrases=False)}
    provider = VectorProvider(prepared, cache_dir=False, settings=settings, show_progress=True)
    capfd.readouterr()
    with caplog.at_level(logging.INFO, logger="statinterp"):
        provider.get("word2vec")
    messages = [r.getMessage() for r in caplog.records if r.name == "statinterp.vectors.provider"]
    assert any(m.startswith("training word2vec vectors (8 dimensions") for m in messages)
    assert any(m.startswith("trained word2vec vectors in") for m in messages)
    assert "training word2vec" not in capfd.readouterr().err  # the library itself prints nothing of it


def test_the_command_line_shows_what_vector_training_reports(tmp_path):
    import logging

    code, _, err = capture_main(["rank", "vehicle", "-m", "w2vec*", "--cache-dir", str(tmp_path)])
    assert code == 0
    assert any(line.startswith("statinterp: training word2vec vectors") for line in err.splitlines())
    assert not logging.getLogger("statinterp").handlers  # the command line removed its handler
