"""The embedding cache: reuse across runs, resumption after a kill, atomic shards."""

from __future__ import annotations

import numpy as np
import pytest

from _core_helpers import ColourEncoder, ColourPairwise
from foilbench.data.tiny import tiny_benchmark
from foilbench.scoring.engine import evaluate
from foilbench.store.cache import EmbeddingCache, default_cache_root


def _hash(k: int) -> str:
    return f"{k:064x}"


@pytest.fixture
def bench(tmp_path):
    return tiny_benchmark(root=tmp_path / "tiny")  # 12 unique images, 12 unique texts


def test_put_get_round_trip_and_fingerprints_are_separate(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put_many("model/a:v1", [_hash(1), _hash(2)], np.array([[1, 2], [3, 4]]))
    got = cache.get_many("model/a:v1", [_hash(2), _hash(3)])
    assert list(got) == [_hash(2)] and got[_hash(2)].tolist() == [3.0, 4.0]
    assert cache.get_many("model/a:v2", [_hash(1)]) == {}
    # a fresh instance (a new process) sees the same shards; no temp files are left
    assert EmbeddingCache(tmp_path).get_many("model/a:v1", [_hash(1)])[_hash(1)].tolist() == [1, 2]
    assert not list(tmp_path.rglob("*.tmp"))
    assert (cache.folder("model/a:v1") / "fingerprint.txt").read_text().strip() == "model/a:v1"


def test_pair_scores_round_trip(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put_pair_scores("pw", [(_hash(1), _hash(2)), (_hash(1), _hash(3))], np.array([0.5, -1]))
    got = cache.get_pair_scores("pw", [(_hash(1), _hash(3)), (_hash(2), _hash(1))])
    assert got == {(_hash(1), _hash(3)): -1.0}


def test_bad_input_is_refused(tmp_path):
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(ValueError, match="2 hashes but array of shape"):
        cache.put_many("m", [_hash(1), _hash(2)], np.zeros((3, 4)))
    with pytest.raises(ValueError, match="sha256 hex"):
        cache.get_many("m", ["not-a-hash"])


def test_default_root_honours_env(tmp_path, monkeypatch):
    monkeypatch.delenv("FOILBENCH_CACHE", raising=False)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path))
    assert default_cache_root() == tmp_path / "embeddings"
    assert EmbeddingCache().root == tmp_path / "embeddings"


def test_a_torn_shard_is_ignored_and_recomputed(tmp_path, bench):
    cache = EmbeddingCache(tmp_path / "cache")
    evaluate(ColourEncoder(), bench, cache=cache, batch_size=4, progress=False)
    shard = sorted(cache.folder("colour-v1").glob("emb-*.safetensors"))[0]
    shard.write_bytes(shard.read_bytes()[:20])  # simulate a corrupt file (not made by us)
    model = ColourEncoder()
    result = evaluate(model, bench, cache=EmbeddingCache(tmp_path / "cache"), batch_size=4,
                      progress=False)
    assert 0 < model.images_seen + model.texts_seen <= 4  # only the torn shard's rows
    assert result.stats["images_encoded"] + result.stats["texts_encoded"] <= 4


def test_second_run_does_zero_forward_passes(tmp_path, bench):
    first_model, second_model = ColourEncoder(), ColourEncoder()
    first = evaluate(first_model, bench, cache=EmbeddingCache(tmp_path), batch_size=5,
                     progress=False)
    assert first.stats["images_encoded"] == first.stats["images_unique"] == 12
    assert first.stats["texts_encoded"] == 12 and first.stats["image_cache_hits"] == 0
    second = evaluate(second_model, bench, cache=EmbeddingCache(tmp_path), batch_size=5,
                      progress=False)
    assert second_model.image_calls == second_model.text_calls == 0
    assert second.stats["images_encoded"] == second.stats["texts_encoded"] == 0
    assert second.stats["image_cache_hits"] == second.stats["text_cache_hits"] == 12
    for m in first.outcomes:
        np.testing.assert_array_equal(first.outcomes[m], second.outcomes[m])
    np.testing.assert_allclose(np.stack(first.scores), np.stack(second.scores))


def test_killed_run_resumes_and_encodes_only_the_rest(tmp_path, bench):
    cache_dir = tmp_path / "cache"
    killed = ColourEncoder(fail_after_image_batches=2)  # dies on the third image batch
    with pytest.raises(KeyboardInterrupt):
        evaluate(killed, bench, cache=EmbeddingCache(cache_dir), batch_size=4, progress=False)
    assert killed.images_seen == 8
    assert not list(cache_dir.rglob("*.tmp"))
    resumed_model = ColourEncoder()
    resumed = evaluate(resumed_model, bench, cache=EmbeddingCache(cache_dir), batch_size=4,
                       progress=False)
    assert resumed_model.images_seen == 4 and resumed.stats["images_encoded"] == 4
    assert resumed.stats["image_cache_hits"] == 8
    assert resumed.stats["texts_encoded"] == 12  # texts were never reached before the kill
    reference = evaluate(ColourEncoder(), bench, progress=False)  # no cache at all
    np.testing.assert_allclose(np.stack(resumed.scores), np.stack(reference.scores))


def test_dual_stats_count_unique_inputs_and_time(bench):
    result = evaluate(ColourEncoder(), bench, batch_size=64, progress=False)
    stats = result.stats
    # 18 image paths hold 12 distinct files (same shape and colour drawn twice)
    assert len(bench.unique_images()) == 18 and stats["images_unique"] == 12
    assert stats["slots_scored"] == 4 * len(bench)
    assert 0 <= stats["forward_seconds"] <= stats["total_seconds"]
    assert 0 <= stats["forward_share"] <= 1


def test_pairwise_path_scores_unique_pairs_once_and_caches(tmp_path, bench):
    model = ColourPairwise()
    first = evaluate(model, bench, cache=EmbeddingCache(tmp_path), batch_size=3, progress=False)
    n_unique = first.stats["pairs_unique"]
    assert model.pairs_seen == n_unique == first.stats["pairs_scored"] <= 4 * len(bench)
    dual = evaluate(ColourEncoder(), bench, progress=False)
    np.testing.assert_allclose(np.stack(first.scores), np.stack(dual.scores), atol=1e-6)
    again = ColourPairwise()
    second = evaluate(again, bench, cache=EmbeddingCache(tmp_path), batch_size=3, progress=False)
    assert again.pairs_seen == 0 and second.stats["pair_cache_hits"] == n_unique
