"""The on-disk prepared-image cache: round trip, bad and stale entries recomputed (never
used), atomic writes, size limit with least-recently-used eviction."""

from __future__ import annotations

import os

import numpy as np
import pytest
from safetensors.numpy import save_file

from foilbench.store.cache import CacheWarning
from foilbench.store.prepared_cache import PreparedImageCache

H1, H2, H3 = "11" * 32, "22" * 32, "33" * 32


def _pixels(value: int, side: int = 4) -> np.ndarray:
    return np.full((side, side, 3), value, dtype=np.uint8)


def test_round_trip_is_exact_and_keyed_by_fingerprint(tmp_path):
    cache = PreparedImageCache(tmp_path)
    arr = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    cache.put("fp-a", H1, arr)
    assert np.array_equal(cache.get("fp-a", H1, (4, 4, 3)), arr)
    assert cache.get("fp-b", H1) is None  # another transform: a miss
    assert cache.get("fp-a", H2) is None
    assert not list(tmp_path.rglob("*.tmp"))  # no temporary file left behind


@pytest.mark.parametrize("damage", ["flip", "truncate", "no_checksum", "wrong_shape"])
def test_bad_entries_are_reported_deleted_and_never_used(tmp_path, damage):
    cache = PreparedImageCache(tmp_path)
    cache.put("fp", H1, _pixels(9))
    path = cache.path("fp", H1)
    if damage == "flip":
        raw = bytearray(path.read_bytes())
        raw[-1] ^= 0xFF
        path.write_bytes(bytes(raw))
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:20])
    elif damage == "no_checksum":
        save_file({"pixels": _pixels(9)}, str(path))
    with pytest.warns(CacheWarning, match="prepared-image cache entry") as seen:
        expect = (5, 5, 3) if damage == "wrong_shape" else (4, 4, 3)
        assert cache.get("fp", H1, expect) is None
    assert str(path) in str(seen[0].message)
    assert not path.exists()


def test_rejects_keys_and_arrays_that_are_not_what_it_stores(tmp_path):
    cache = PreparedImageCache(tmp_path)
    with pytest.raises(ValueError, match="sha256 hex"):
        cache.put("fp", "../etc", _pixels(1))
    with pytest.raises(ValueError, match="uint8"):
        cache.put("fp", H1, np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="max_bytes"):
        PreparedImageCache(tmp_path, max_bytes=0)


def test_size_limit_evicts_least_recently_used(tmp_path):
    probe = PreparedImageCache(tmp_path / "probe")
    probe.put("fp", H1, _pixels(1))
    one = probe.size_bytes()
    cache = PreparedImageCache(tmp_path / "c", max_bytes=int(one * 2.5))
    cache.put("fp", H1, _pixels(1))
    cache.put("fp", H2, _pixels(2))
    os.utime(cache.path("fp", H1), (1000, 1000))  # H1 old ...
    os.utime(cache.path("fp", H2), (2000, 2000))
    assert cache.get("fp", H1) is not None  # ... until read: now the most recent
    cache.put("fp", H3, _pixels(3))  # 3 entries > 2.5: evict down to 90% of the limit
    assert cache.get("fp", H2) is None
    assert cache.get("fp", H1) is not None and cache.get("fp", H3) is not None
    assert cache.size_bytes() <= cache.max_bytes


def test_unwritable_cache_is_reported_once_and_skipped(tmp_path, monkeypatch):
    import errno

    from foilbench.store import prepared_cache

    calls = []

    def full_disk(*args, **kwargs):
        calls.append(1)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(prepared_cache, "write_bytes", full_disk)
    notes = []
    cache = PreparedImageCache(tmp_path / "full", notify=notes.append)
    cache.put("fp", H1, _pixels(1))
    cache.put("fp", H2, _pixels(2))
    assert len(calls) == 1  # the second put does not try again
    assert len(notes) == 1 and "not writable" in notes[0] and "full" in notes[0]
    assert cache.get("fp", H1) is None
    assert not list((tmp_path / "full").rglob("*.tmp"))


def test_an_entry_folder_removed_during_a_run_is_made_again(tmp_path):
    import shutil

    same_folder = H1[:2] + "ab" * 31  # the folder the first put made and remembered
    cache = PreparedImageCache(tmp_path / "c")
    cache.put("fp", H1, _pixels(1))
    shutil.rmtree(tmp_path / "c")  # a user clears the cache while a sweep writes to it
    cache.put("fp", same_folder, _pixels(2))
    assert np.array_equal(cache.get("fp", same_folder), _pixels(2))
    assert cache.get("fp", H1) is None
    assert (cache.path("fp", H1).parent.parent / "fingerprint.txt").read_text() == "fp\n"
    assert not list((tmp_path / "c").rglob("*.tmp"))
