"""Issue 13, the embedding cache: a shard whose tensor bytes were overwritten (header intact)
used to feed wrong scores silently (Group 0% -> 100% in the report that filed the issue). Each
shard now carries the sha256 of its contents; a mismatch, a truncated or empty shard, or one
without a checksum is reported, deleted and recomputed."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

from _core_helpers import ColourEncoder
from foilbench.data.tiny import tiny_benchmark
from foilbench.scoring.engine import evaluate
from foilbench.store.cache import CacheWarning, EmbeddingCache


@pytest.fixture
def bench(tmp_path):
    return tiny_benchmark(root=tmp_path / "tiny")


def _overwrite_values(path, value: float = 1.0) -> None:
    """Overwrite the "values" tensor's bytes in place; the header stays valid."""
    data = bytearray(path.read_bytes())
    header_len = struct.unpack("<Q", data[:8])[0]
    start, end = json.loads(data[8:8 + header_len])["values"]["data_offsets"]
    base = 8 + header_len
    data[base + start:base + end] = np.full((end - start) // 4, value, "<f4").tobytes()
    path.write_bytes(bytes(data))


def _run(bench, cache):
    encoder = ColourEncoder()
    result = evaluate(encoder, bench, cache=cache, batch_size=4, progress=False)
    return result, encoder


def test_overwritten_shard_bytes_are_detected_discarded_and_recomputed(tmp_path, bench):
    told: list[str] = []
    cache = EmbeddingCache(tmp_path / "cache", notify=told.append)
    clean, _ = _run(bench, cache)
    shards = sorted(cache.folder("colour-v1").glob("emb-*.safetensors"))
    for shard in shards:
        _overwrite_values(shard)
    again, encoder = _run(bench, EmbeddingCache(tmp_path / "cache", notify=told.append))
    assert encoder.images_seen == 12 and encoder.texts_seen == 12  # everything recomputed
    for metric in clean.metrics:
        np.testing.assert_array_equal(again.outcomes[metric], clean.outcomes[metric])
    assert len(told) == 2  # one message per lookup (images, texts), each counting its shards
    assert sum(int(m.split()[0]) for m in told) == len(shards)
    assert all("corrupt (its contents do not match its checksum)" in m for m in told)
    assert not set(shards) & set(cache.folder("colour-v1").glob("emb-*.safetensors"))
    told.clear()
    _, encoder = _run(bench, EmbeddingCache(tmp_path / "cache", notify=told.append))
    assert encoder.images_seen == 0 and told == []  # the recomputed shards verify


@pytest.mark.parametrize("damage", ["truncated", "empty"])
def test_truncated_or_empty_shards_warn(tmp_path, bench, damage):
    cache = EmbeddingCache(tmp_path / "cache")
    _run(bench, cache)
    shard = sorted(cache.folder("colour-v1").glob("emb-*.safetensors"))[0]
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"")
    with pytest.warns(CacheWarning, match=rf"{shard.name} is unreadable"):
        _, encoder = _run(bench, EmbeddingCache(tmp_path / "cache"))
    assert encoder.images_seen + encoder.texts_seen > 0 and not shard.exists()


def test_a_shard_without_a_checksum_is_not_trusted(tmp_path):
    cache = EmbeddingCache(tmp_path, notify=(told := []).append)
    cache.put_many("m", ["ab" * 32], np.ones((1, 2), dtype=np.float32))
    [shard] = cache.folder("m").glob("emb-*.safetensors")
    keys = np.frombuffer(bytes.fromhex("ab" * 32), dtype=np.uint8).reshape(1, 32)
    save_file({"keys": keys, "values": np.zeros((1, 2), np.float32)}, str(shard))  # old style
    assert EmbeddingCache(tmp_path, notify=told.append).get_many("m", ["ab" * 32]) == {}
    assert told == [f"embedding cache shard {shard} is without a checksum (written by an older "
                    "foilbench); discarded, the entries will be recomputed"]
