"""The analysis cache (statinterp.cache.namespaces) loses nothing and is never trusted blindly
(issue 5): its settings key, damaged entries detected and rebuilt, concurrent runs sharing one
cache folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statinterp.cache.namespaces import AnalysisCache
from statinterp.corpus.dataset import load_corpus
from statinterp.errors import StatinterpWarning
from statinterp.text import analysis
from statinterp.text.analysis import Analyzer, text_hash
from statinterp.workflow import example_data_path
from tests.support.bad_input import FUZZ
from tests.support.cli import capture_main
from tests.support.files import temp_files

# --------------------------------------------------------------------------------------------
# The analysis cache: key, damage, concurrency

TEXTS = [
    "No vehicle may be taken into the park. A bicycle is a vehicle.",
    "The ordinance (Park Ord. § 1) was adopted in 1961.\nIt says so.",
    "Vehicles, vehicles!  And a car's wheel; 3 trucks.",
]


def words_of(an: Analyzer, analysed) -> list:
    return [([an.vocab.words[i] for i in a.ids.tolist()], a.starts.tolist(), a.ends.tolist(),
             a.sentences.tolist()) for a in analysed]


@pytest.fixture(scope="module")
def reference():
    an = Analyzer(cache_dir=False)
    return words_of(an, an.analyse(TEXTS))


@pytest.fixture(scope="module")
def good_entry(tmp_path_factory):
    """The bytes of a valid cache entry of TEXTS[0], and the settings key."""
    folder = tmp_path_factory.mktemp("good-cache")
    an = Analyzer(cache_dir=folder)
    an.analyse(TEXTS[:1])
    return an.cache.path(text_hash(TEXTS[0])).read_bytes(), an.settings_key


def test_settings_key_covers_every_setting_that_changes_the_result(monkeypatch, tmp_path):
    def key(**kwargs):
        return Analyzer(cache_dir=tmp_path, **kwargs).settings_key

    keys = {"base": key()}
    assert key() == keys["base"]  # stable
    keys["legal_rules"] = key(legal_rules=False)
    real_version = analysis.package_version
    for package in ("spacy", "spacy-lookups-data"):
        with monkeypatch.context() as mp:
            mp.setattr(analysis, "package_version", lambda p, pk=package: "0.0.0-other" if p == pk else real_version(p))
            keys[package] = key()
    with monkeypatch.context() as mp:
        mp.setattr(analysis, "CACHE_FORMAT", analysis.CACHE_FORMAT + 1)
        keys["format"] = key()
    with monkeypatch.context() as mp:
        mp.setattr(analysis, "SEGMENTER_VERSION", analysis.SEGMENTER_VERSION + "-other")
        keys["segmenter"] = key()
    with monkeypatch.context() as mp:
        mp.setattr(analysis.unicodedata, "unidata_version", "0.0.0")
        keys["unicode"] = key()
    assert len(set(keys.values())) == len(keys), keys
    # settings that do not change the result do not split the cache
    assert key(n_process=3, batch_size=5) == keys["base"]
    cache = Analyzer(cache_dir=tmp_path).cache
    assert cache.settings_key == keys["base"]  # and the settings key is part of every entry's key:
    assert cache.path("ab" * 32) != Analyzer(cache_dir=tmp_path, legal_rules=False).cache.path("ab" * 32)


def _damage(raw: bytes, how: str, data) -> bytes:
    if how == "flip":
        out = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 3), label="flips")):
            out[data.draw(st.integers(0, len(out) - 1), label="at")] ^= data.draw(st.integers(1, 255), label="xor")
        return bytes(out)
    if how == "truncate":
        return raw[: data.draw(st.integers(0, len(raw) - 1), label="length")]
    if how == "append":
        return raw + data.draw(st.binary(min_size=1, max_size=64), label="tail")
    if how == "garbage":
        return data.draw(st.binary(max_size=400), label="garbage")
    assert how == "empty"
    return b""


@FUZZ
@given(how=st.sampled_from(["flip", "truncate", "append", "garbage", "empty"]), data=st.data())
def test_any_damaged_entry_is_detected_discarded_and_never_used(good_entry, how, data):
    raw, key = good_entry
    damaged = _damage(raw, how, data)
    if damaged == raw:
        return
    with tempfile.TemporaryDirectory() as tmp:
        cache = AnalysisCache(Path(tmp), key)
        digest = text_hash(TEXTS[0])
        path = cache.path(digest)
        path.parent.mkdir(parents=True)
        path.write_bytes(damaged)
        with pytest.warns(StatinterpWarning, match="discarding damaged analysis cache entry"):
            assert cache.get(digest) is None
        assert not path.exists()
        path.write_bytes(raw)  # the intact entry is read silently
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert cache.get(digest) is not None


@pytest.mark.parametrize("how", ["flip", "truncate", "garbage", "empty"])
@pytest.mark.slow
def test_damaged_entry_is_rebuilt_with_a_warning_and_results_match_no_cache(tmp_path, reference, how):
    Analyzer(cache_dir=tmp_path).analyse(TEXTS)
    an = Analyzer(cache_dir=tmp_path)
    path = an.cache.path(text_hash(TEXTS[1]))
    raw = path.read_bytes()
    path.write_bytes({"flip": raw[:100] + bytes([raw[100] ^ 1]) + raw[101:], "truncate": raw[: len(raw) // 3],
                      "garbage": os.urandom(len(raw)), "empty": b""}[how])
    with pytest.warns(StatinterpWarning, match="damaged"):
        assert words_of(an, an.analyse(TEXTS)) == reference
    assert path.read_bytes() == raw  # rebuilt: the same bytes as before the damage
    again = Analyzer(cache_dir=tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert words_of(again, again.analyse(TEXTS)) == reference


def test_intact_entry_of_another_text_is_not_used(tmp_path, reference):
    an = Analyzer(cache_dir=tmp_path)
    an.analyse(TEXTS)
    shutil.copyfile(an.cache.path(text_hash(TEXTS[0])), an.cache.path(text_hash(TEXTS[2])))
    second = Analyzer(cache_dir=tmp_path)
    with pytest.warns(StatinterpWarning, match="checksum"):
        assert words_of(second, second.analyse(TEXTS)) == reference


def test_unwritable_cache_gives_one_warning_and_correct_results(tmp_path, reference):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("x")
    an = Analyzer(cache_dir=blocker)
    with pytest.warns(StatinterpWarning, match="cannot write the cache") as record:
        assert words_of(an, an.analyse(TEXTS)) == reference
    assert len([w for w in record if issubclass(w.category, StatinterpWarning)]) == 1


@pytest.mark.slow
def test_cli_reports_a_damaged_entry_as_one_warning_line_and_gives_the_same_output(tmp_path):
    cache = tmp_path / "cache"
    argv = ["rank", "vehicle", "-q", "--format", "json", "--top", "0"]
    code, good, _ = capture_main(argv + ["--cache-dir", str(cache)])
    assert code == 0
    entries = sorted((cache / "analysis").rglob("*.bin"))
    assert entries
    entries[0].write_bytes(entries[0].read_bytes()[:-10])
    code, out, err = capture_main(argv + ["--cache-dir", str(cache)])
    assert code == 0 and out == good
    assert err.count("\n") == 1 and err.startswith("statinterp: warning: discarding damaged analysis cache entry")
    code, out, err = capture_main(argv + ["--cache-dir", str(cache)])
    assert (code, out, err) == (0, good, "")


#: Analyses the texts of a JSON file into a cache folder once a start file appears; prints the
#: result. A StatinterpWarning (a damaged entry seen) is an error.
CONCURRENT = textwrap.dedent("""
    import json, sys, time, warnings
    from pathlib import Path
    from statinterp.text.analysis import Analyzer
    from statinterp.errors import StatinterpWarning

    cache, texts_file, ready, go = sys.argv[1:5]
    warnings.simplefilter("error", StatinterpWarning)
    texts = json.loads(Path(texts_file).read_text())
    an = Analyzer(cache_dir=cache, batch_size=4)
    an.worker  # build the pipeline before the start
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.002)
    out = an.analyse(texts)
    json.dump([([an.vocab.words[i] for i in a.ids.tolist()], a.starts.tolist(), a.ends.tolist(),
                a.sentences.tolist()) for a in out], sys.stdout)
""")


@pytest.mark.slow
def test_concurrent_runs_sharing_a_fresh_cache_agree_and_leave_it_intact(tmp_path, monkeypatch):
    term = load_corpus(example_data_path()).term("vehicle")
    texts = [c.text for c in term.cases.values()][:3] + [s.text for s in term.sentences] + TEXTS
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    (tmp_path / "run.py").write_text(CONCURRENT)
    cache, go = tmp_path / "cache", tmp_path / "go"
    procs = []
    for i in range(2):
        argv = [sys.executable, str(tmp_path / "run.py"), str(cache), str(tmp_path / "texts.json"),
                str(tmp_path / f"ready{i}"), str(go)]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline
        time.sleep(0.01)
    go.touch()  # both start analysing the same texts into the same empty cache at once
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        assert "damaged" not in err, err
        results.append(json.loads(out))

    plain = Analyzer(cache_dir=False)
    expected = json.loads(json.dumps(words_of(plain, plain.analyse(texts))))
    assert results[0] == expected
    assert results[1] == expected

    # afterwards: every entry is whole and is read without spaCy and without a warning
    assert temp_files(cache) == []
    assert len(list((cache / "analysis").rglob("*.bin"))) == len(set(texts))

    def no_spacy(self, texts, batch_size=32):
        raise AssertionError("spaCy ran although every text is cached")

    monkeypatch.setattr(analysis._Worker, "run", no_spacy)
    warm = Analyzer(cache_dir=cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatinterpWarning)
        assert json.loads(json.dumps(words_of(warm, warm.analyse(texts)))) == expected


def test_cache_entries_are_plain_arrays_not_pickles(good_entry, tmp_path):
    from statinterp.cache.files import read_array_file
    from statinterp.cache.store import MAGIC

    raw, key = good_entry
    cache = AnalysisCache(tmp_path, key)
    path = cache.path(text_hash(TEXTS[0]))
    path.parent.mkdir(parents=True)
    path.write_bytes(raw)
    meta, array = read_array_file(path, MAGIC, cache.key(text_hash(TEXTS[0])))  # a store array entry
    assert {"starts", "ends", "local_ids", "words", "sentences"} <= set(meta["arrays"])
    assert all(array(name).dtype != object for name in meta["arrays"])
