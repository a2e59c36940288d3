"""Provenance names the libraries that shape the numbers and the device, without importing
the heavy packages to find out (:mod:`foilbench.versions`)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from types import SimpleNamespace

from foilbench.provenance import collect_provenance
from foilbench.versions import LIBRARIES, compute_device, library_versions, package_version


def test_provenance_records_each_library_version_from_its_metadata():
    prov = collect_provenance(seed=1, n_boot=10, ci_method="wilson", revision="-")
    assert set(prov["libraries"]) == set(LIBRARIES)
    for name, version in prov["libraries"].items():
        try:
            expected = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert version == expected, name
    assert prov["libraries"]["numpy"] and prov["libraries"]["duckdb"]  # core dependencies
    # not part of what was asked for: two machines with other versions share a config hash
    assert "libraries" not in prov["config"] and "device" not in prov["config"]


def test_reading_the_versions_imports_none_of_the_heavy_packages():
    code = ("import sys, json; from foilbench.provenance import collect_provenance; "
            "p = collect_provenance(seed=1, n_boot=10, ci_method='wilson', revision='-'); "
            "print(json.dumps([sorted(m for m in ('torch', 'open_clip', 'transformers', "
            "'duckdb', 'PIL') if m in sys.modules), p['device']]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    imported, device = json.loads(out.strip().splitlines()[-1])
    assert imported == [] and device == "none"


def test_a_missing_distribution_is_none():
    assert package_version("surely-not-installed-anywhere") is None
    assert all(isinstance(v, (str, type(None))) for v in library_versions().values())


def _fake_torch(cuda: bool, name: str = "Fake GPU 80GB", count: int = 2):
    seen = []

    def get_device_name(index):
        seen.append(index)
        return f"{name} #{index}"

    cuda_ns = SimpleNamespace(is_available=lambda: cuda, get_device_name=get_device_name,
                              device_count=lambda: count)
    return SimpleNamespace(cuda=cuda_ns, backends=SimpleNamespace(mps=None)), seen


def test_device_and_gpu_name_on_cuda(monkeypatch):
    torch, seen = _fake_torch(cuda=True)
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert compute_device("auto") == {"device": "cuda", "gpu": "Fake GPU 80GB #0"}
    assert compute_device("cuda:1") == {"device": "cuda:1", "gpu": "Fake GPU 80GB #1"}
    assert seen == [0, 1]
    prov = collect_provenance(seed=1, n_boot=10, ci_method="wilson", revision="-",
                              device="cuda")
    assert prov["device"] == "cuda" and prov["gpu"] == "Fake GPU 80GB #0"


def test_device_on_a_cpu_only_machine_and_for_an_api_model(monkeypatch):
    torch, _ = _fake_torch(cuda=False)
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert compute_device(None) == {"device": "cpu", "gpu": None}
    assert compute_device("none") == {"device": "none", "gpu": None}
    monkeypatch.delitem(sys.modules, "torch")
    assert compute_device("auto") == {"device": "none", "gpu": None}
