"""The one cache store (statinterp.cache.store): one key scheme, one damaged-entry rule for every
namespace, one eviction rule, and `statinterp cache info` / `statinterp cache clear`."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

from statinterp.cache import store as store_module
from statinterp.cache.namespaces import AnalysisCache, DirectionCache, PreparedCache, StoredAnswers
from statinterp.cache.store import NAMESPACES, STORE_FORMAT, CacheStore, CacheWarning
from tests.support.cli import capture_main


def test_one_key_scheme_canonical_and_covering_every_part():
    key = CacheStore.key
    assert key("prepared", {"a": 1, "b": [2, "x"]}) == key("prepared", {"b": [2, "x"], "a": 1})  # canonical JSON
    variants = {key("prepared", {"a": 1}), key("directions", {"a": 1}), key("prepared", {"a": 2}),
                key("prepared", {"a": 1}, "more"), key("prepared", {"a": "1"})}
    assert len(variants) == 5
    assert len(key("answers", "x")) == 64 and int(key("answers", "x"), 16) >= 0


def test_the_store_format_is_part_of_every_key(monkeypatch):
    before = CacheStore.key("analysis", "k", "digest")
    monkeypatch.setattr(store_module, "STORE_FORMAT", STORE_FORMAT + 1)
    assert CacheStore.key("analysis", "k", "digest") != before


def test_one_layout_namespace_two_hex_digits_key(tmp_path):
    store = CacheStore(tmp_path)
    key = store.key("prepared", "x")
    assert store.path("prepared", key) == tmp_path / "prepared" / key[:2] / f"{key}.bin"
    with pytest.raises(ValueError, match="unknown cache namespace"):
        store.path("elsewhere", key)


def _entries(tmp_path):
    """namespace -> (write an entry, read it back (None on a miss), its path), for each array
    namespace (StoredAnswers follows $STATINTERP_CACHE, which the caller sets to ``tmp_path``)."""
    analysis = AnalysisCache(tmp_path, "settings")
    prepared = PreparedCache(tmp_path, "settings", "content")
    directions = DirectionCache(tmp_path)
    answers = StoredAnswers("test-lookup", "v1")
    return {
        "analysis": (lambda: analysis.put("d" * 64, {"a": np.arange(5)}),
                     lambda: analysis.get("d" * 64), analysis.path("d" * 64)),
        "prepared": (lambda: prepared.save({"x": 1}, {"a": np.arange(5.0)}),
                     lambda: prepared.load(lambda meta, array: array("a")), prepared.path),
        "directions": (lambda: directions.put("k", {"s": np.ones((2, 3))}),
                       lambda: directions.get("k", {"s": 2}), directions.path("k")),
        "answers": (lambda: (answers.put("q", "a"), answers.save()),
                    lambda: (answers.forget(), answers.get("q"))[1], answers.path),
    }


@pytest.mark.parametrize("namespace", ["analysis", "prepared", "directions", "answers"])
@pytest.mark.parametrize("damage", ["flip", "truncate", "append"])
def test_one_damaged_entry_rule_in_every_namespace(tmp_path, monkeypatch, namespace, damage):
    monkeypatch.setenv("STATINTERP_CACHE", str(tmp_path))
    write, read, path = _entries(tmp_path)[namespace]
    write()
    good = path.read_bytes()
    assert read() is not None
    raw = bytearray(good)
    if damage == "flip":
        raw[len(raw) - 3] ^= 0x40
    elif damage == "truncate":
        del raw[-5:]
    else:
        raw += b"\0" * 8
    path.write_bytes(bytes(raw))
    with pytest.warns(CacheWarning, match=f"discarding damaged {namespace} cache entry .*it will be rebuilt") as caught:
        assert read() is None
    assert len(caught) == 1
    assert not path.exists()
    write()  # rebuilt: the same bytes, read silently
    assert path.read_bytes() == good
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read() is not None


def test_a_namespace_keeps_its_most_recently_used_entries(tmp_path, monkeypatch):
    monkeypatch.setitem(store_module.KEEP, ("directions", ".q.bin"), 2)
    cache = DirectionCache(tmp_path)
    for i, key in enumerate(["a", "b"]):
        cache.put_query(key, np.ones(3))
        os.utime(cache.query_path(key), (1000 + i, 1000 + i))
    assert cache.get_query("a") is not None  # used now: the most recent
    cache.put_query("c", np.ones(3))  # evicts the least recently used beyond 2
    kept = {k for k in "abc" if cache.query_path(k).exists()}
    assert kept == {"a", "c"}
    cache.put("units", {"s": np.ones((2, 2))})  # another kind is counted apart
    assert cache.path("units").exists() and cache.query_path("a").exists()


def test_info_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("STATINTERP_CACHE", str(tmp_path))
    for write, _, _ in _entries(tmp_path).values():
        write()
    store = CacheStore(tmp_path)
    info = {i.name: i for i in store.info()}
    assert set(info) == set(NAMESPACES)
    assert {n: info[n].entries for n in ("analysis", "prepared", "directions", "answers", "vectors")} == {
        "analysis": 1, "prepared": 1, "directions": 1, "answers": 1, "vectors": 0}
    assert info["prepared"].bytes == sum(p.stat().st_size for p in (tmp_path / "prepared").rglob("*.bin"))
    removed = store.clear("prepared")
    assert (removed.entries, removed.bytes) == (1, info["prepared"].bytes)
    assert not (tmp_path / "prepared").exists() and (tmp_path / "analysis").exists()
    with pytest.raises(ValueError):
        store.clear("nothing")
    assert store.clear().entries == 3
    assert sum(i.entries for i in store.info()) == 0


def test_cache_commands(tmp_path, monkeypatch):
    monkeypatch.setenv("STATINTERP_CACHE", str(tmp_path))
    for write, _, _ in _entries(tmp_path).values():
        write()
    code, out, err = capture_main(["cache", "info", "--format", "json", "--cache-dir", str(tmp_path)])
    assert code == 0, err
    info = json.loads(out)
    assert info["folder"] == str(tmp_path) and info["entries"] == 4
    assert info["namespaces"]["directions"]["entries"] == 1 and info["namespaces"]["directions"]["bytes"] > 0
    code, out, _ = capture_main(["cache", "info"])  # the folder from $STATINTERP_CACHE
    assert code == 0 and str(tmp_path) in out and "analysis" in out
    code, out, _ = capture_main(["cache", "clear", "directions"])
    assert code == 0 and out.startswith("removed 1 entries")
    assert not (tmp_path / "directions").exists() and (tmp_path / "analysis").exists()
    code, _, err = capture_main(["cache", "clear", "elsewhere"])
    assert code == 2 and "elsewhere" in err
    code, out, _ = capture_main(["cache", "clear"])
    assert code == 0 and out.startswith("removed 3 entries")
