"""Issue 13, weight files a user hands us: a corrupt or truncated ``.safetensors`` and a torch
pickle that ``weights_only`` refuses end in our message naming the file (no traceback, and
not torch's advice to load with ``weights_only=False``)."""

from __future__ import annotations

import shutil

import open_clip
import pytest
import torch

from _models_tiny import save_tiny_hf_dual, write_openclip_config
from _reliability import fb
from foilbench.errors import ModelError
from foilbench.models.embedded import EmbeddedDualEncoder, model_name, weights_dir
from foilbench.models.registry import resolve_model

ADVICE = "weights_only=False"


class _NotATensor:
    pass


def _truncate(path, to=None) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if to is None else to)


@pytest.fixture(scope="module")
def openclip_files(tmp_path_factory):
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("oc")
    cfg = write_openclip_config(folder, "fb-rel-tiny")
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model, _, _ = open_clip.create_model_and_transforms("fb-rel-tiny")
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(folder / "cut.safetensors"))
    _truncate(folder / "cut.safetensors")
    (folder / "junk.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}" * 4)
    torch.save({"state_dict": dict(state), "extra": _NotATensor()}, folder / "evil.pt")
    return cfg, folder


@pytest.mark.parametrize("name", ["cut.safetensors", "junk.safetensors"])
def test_open_clip_with_a_corrupt_safetensors_file(openclip_files, name):
    cfg, folder = openclip_files
    with pytest.raises(ModelError, match=rf"{name}: not a valid safetensors file \(truncated "
                                         r"or corrupt"):
        resolve_model(f"openclip:{cfg}:{folder / name}", device="cpu")


def test_open_clip_pickle_refusal_is_our_message(openclip_files, tmp_path, capsys):
    cfg, folder = openclip_files
    with pytest.raises(ModelError) as err:
        resolve_model(f"openclip:{cfg}:{folder / 'evil.pt'}", device="cpu")
    text = str(err.value)
    assert "evil.pt" in text and "holds Python objects besides tensors" in text
    assert ADVICE not in text and "trust the source" not in text
    code, _, stderr = fb(["run", "--model", f"openclip:{cfg}:{folder / 'evil.pt'}",
                          "--benchmark", "tiny-builtin", "--out", tmp_path / "out"], capsys)
    assert code == 2 and "evil.pt" in stderr and ADVICE not in stderr


def test_embedded_model_with_a_truncated_weights_file(tmp_path):
    name = model_name("plain")
    for suffix in (".safetensors", ".json"):
        shutil.copy(weights_dir() / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    _truncate(tmp_path / f"{name}.safetensors")
    with pytest.raises(ModelError, match=rf"{name}.safetensors: not a valid safetensors file"):
        EmbeddedDualEncoder(tmp_path / f"{name}.safetensors", device="cpu")
    _truncate(tmp_path / f"{name}.safetensors", to=b"")
    with pytest.raises(ModelError, match="not a valid safetensors file"):
        EmbeddedDualEncoder(tmp_path / f"{name}.safetensors", device="cpu")
    (tmp_path / f"{name}.json").write_text("{ not json")
    with pytest.raises(ModelError, match=rf"{name}.json: not valid JSON"):
        EmbeddedDualEncoder(tmp_path / f"{name}.safetensors", device="cpu")


def test_hugging_face_folder_with_bad_weights(tmp_path):
    folder = save_tiny_hf_dual(tmp_path / "m", "clip", tmp_path / "tok")
    _truncate(folder / "model.safetensors")
    with pytest.raises(ModelError, match="not a valid safetensors file"):
        resolve_model(f"hf:{folder}", device="cpu")
    (folder / "model.safetensors").unlink()
    torch.save({"x": torch.zeros(2), "evil": _NotATensor()}, folder / "pytorch_model.bin")
    with pytest.raises(ModelError) as err:
        resolve_model(f"hf:{folder}", device="cpu")
    assert "holds Python objects besides tensors" in str(err.value)
    assert ADVICE not in str(err.value)
