"""hf: and hf-vlm: specs carry a hub revision (ORG/NAME@REV or ?revision=) to from_pretrained.

Offline: from_pretrained is replaced by a recorder that loads a tiny local model instead of
the hub id, so the test sees exactly what the adapter asked for."""

from __future__ import annotations

import pytest
import transformers

from _models_tiny import save_tiny_hf_dual
from foilbench.errors import ModelError
from foilbench.models.hf.loading import split_revision
from foilbench.models.registry import resolve_model


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("clip-rev")
    return save_tiny_hf_dual(root / "model", "clip", root / "tok")


@pytest.fixture
def recorded(clip_dir, monkeypatch):
    """Every from_pretrained call as (class name, source, revision); loads clip_dir."""
    calls = []
    for cls in (transformers.AutoModel, transformers.AutoTokenizer,
                transformers.AutoImageProcessor):
        original = cls.from_pretrained

        def fake(source, *args, _cls=cls, _orig=original, **kwargs):
            calls.append((_cls.__name__, source, kwargs.pop("revision", None)))
            return _orig(str(clip_dir), *args, **kwargs)

        monkeypatch.setattr(cls, "from_pretrained", fake)
    return calls


@pytest.mark.parametrize("spec", ["hf:acme/tiny-clip@v1.2", "hf:acme/tiny-clip?revision=v1.2"])
def test_revision_reaches_every_from_pretrained(spec, recorded):
    model = resolve_model(spec, device="cpu")
    assert sorted(recorded) == sorted([("AutoModel", "acme/tiny-clip", "v1.2"),
                                       ("AutoTokenizer", "acme/tiny-clip", "v1.2"),
                                       ("AutoImageProcessor", "acme/tiny-clip", "v1.2")])
    assert model.info.extras["requested_revision"] == "v1.2"
    assert model.info.extras["hub_id"] == "acme/tiny-clip"


def test_revision_changes_the_fingerprint(recorded):
    a = resolve_model("hf:acme/tiny-clip@v1", device="cpu").info.fingerprint
    b = resolve_model("hf:acme/tiny-clip@v2", device="cpu").info.fingerprint
    plain = resolve_model("hf:acme/tiny-clip", device="cpu")
    assert len({a, b, plain.info.fingerprint}) == 3
    assert recorded[-1][2] is None  # no revision asked: none passed


def test_split_revision_rules(tmp_path):
    assert split_revision("org/name@main", {}) == ("org/name", "main")
    assert split_revision("org/name", {}) == ("org/name", None)
    with pytest.raises(ModelError, match="two revisions"):
        split_revision("org/name@a", {"revision": "b"})
    with pytest.raises(ModelError, match="no revision after"):
        split_revision("org/name@", {})
    with pytest.raises(ModelError, match="local folder"):
        split_revision(str(tmp_path), {"revision": "main"})


def test_hf_vlm_passes_the_revision_to_its_loader(monkeypatch):
    from foilbench.models.hf import vlm as hf_vlm

    seen = {}

    def fake_load(source, target, dtype, revision=None):
        seen.update(source=source, revision=revision)
        raise ModelError("stop after loading")

    monkeypatch.setattr(hf_vlm, "_load", fake_load)
    with pytest.raises(ModelError, match="stop after loading"):
        resolve_model("hf-vlm:acme/tiny-vlm@abc123?score=vqascore", device="cpu")
    assert seen == {"source": "acme/tiny-vlm", "revision": "abc123"}
