"""The open_clip version is part of an open_clip model's fingerprint: an upgrade keys the
embedding cache anew (the embeddings are computed once more) and says so, naming both
versions; the same version again says nothing."""

from __future__ import annotations

import warnings

import pytest

open_clip = pytest.importorskip("open_clip")

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

from _models_tiny import write_openclip_config  # noqa: E402
from foilbench.models.fingerprint import version_change  # noqa: E402
from foilbench.models.openclip import adapter as openclip_adapter  # noqa: E402
from foilbench.models.registry import resolve_model  # noqa: E402


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    cfg = write_openclip_config(tmp_path, "fb-tiny-version")
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model = open_clip.create_model("fb-tiny-version")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(tmp_path / "w.safetensors"))
    return f"openclip:{cfg}:{tmp_path / 'w.safetensors'}"


def _build(spec, monkeypatch, version):
    monkeypatch.setattr(openclip_adapter, "package_version",
                        lambda name: version if name == "open_clip_torch" else None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adapter = resolve_model(spec, device="cpu")
    said = [str(w.message) for w in caught if "open_clip changed" in str(w.message)]
    return adapter.info.fingerprint, adapter.info.extras["open_clip"], said


def test_an_open_clip_upgrade_changes_the_fingerprint_once_and_says_so(spec, monkeypatch):
    first, recorded, said = _build(spec, monkeypatch, "3.3.0")
    assert recorded == "3.3.0" and said == []  # first sight: nothing to compare with
    again, _, said = _build(spec, monkeypatch, "3.3.0")
    assert again == first and said == []
    upgraded, _, said = _build(spec, monkeypatch, "3.4.0")
    assert upgraded != first
    assert len(said) == 1 and "from 3.3.0 to 3.4.0" in said[0] and "computed again" in said[0]
    _, _, said = _build(spec, monkeypatch, "3.4.0")
    assert said == []  # once


def test_the_real_installed_version_is_in_the_fingerprint_parts(spec):
    from importlib import metadata

    adapter = resolve_model(spec, device="cpu")
    assert adapter.info.extras["open_clip"] == metadata.version("open_clip_torch")


def test_version_record_survives_corruption(tmp_path):
    (tmp_path / "library_versions_seen.json").write_text("{not json")
    assert version_change("x", {"a": 1, "lib": "1"}, "lib", cache_dir=tmp_path) is None
    assert version_change("x", {"a": 1, "lib": "2"}, "lib", cache_dir=tmp_path) == ("1", "2")
    assert version_change("x", {"a": 2, "lib": "3"}, "lib", cache_dir=tmp_path) is None
