"""A missing optional dependency is one line naming the extra to install, exit 2, never a
traceback: at model resolution (checked before import) and wherever else an extra's module is
imported lazily (the CLI's shared handler, foilbench.extras)."""

from __future__ import annotations

import sys

import pytest

from _reliability import fb
from foilbench.extras import (
    EXTRA_OF_MODULE,
    PACKAGE_OF_MODULE,
    MissingExtraError,
    as_missing_extra,
    require,
)


@pytest.mark.parametrize(("spec", "blocked", "extra"), [
    ("openclip:ViT-B-32:/w.pt", "open_clip", "openclip"),
    ("openclip:ViT-B-32:/w.pt", "torchvision", "openclip"),
    ("hf:/local/clip", "transformers", "hf"),
    ("hf-vlm:/local/blip", "transformers", "hf"),
])
def test_a_model_whose_extra_is_missing(spec, blocked, extra, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, blocked, None)  # import raises ModuleNotFoundError
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    code, out, err = fb(["run", "--model", spec, "--benchmark", "tiny-builtin", "--out",
                         tmp_path / "out", "--quiet"], capsys)
    assert code == 2
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert line.startswith("error: model ") and f"pip install 'foilbench[{extra}]'" in line


def test_any_lazy_import_of_an_extra_is_one_line(tmp_path, monkeypatch, capsys):
    """Wherever the import happens (here: inside the run, after the models loaded)."""
    from foilbench.runner import runs

    def needs_diffusers(*args, **kwargs):
        import diffusers  # noqa: F401

    monkeypatch.setitem(sys.modules, "diffusers", None)
    monkeypatch.setattr(runs, "build_summary", needs_diffusers)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    code, out, err = fb(["run", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--out",
                         tmp_path / "out", "--quiet", "--n-boot", "100", "--no-report"], capsys)
    assert code == 2
    assert "error: diffusers is needed here, which is not installed: pip install " \
           "'foilbench[construct]'" in err


def test_every_extra_module_maps_to_a_declared_extra():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from pathlib import Path

    declared = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extras = declared["project"]["optional-dependencies"]
    assert set(EXTRA_OF_MODULE.values()) <= set(extras)
    # and that extra lists the module's package itself (not only through another package)
    import re

    def listed(extra):
        return {re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0].lower().replace("_", "-")
                for req in extras[extra]}

    for module, extra in EXTRA_OF_MODULE.items():
        package = PACKAGE_OF_MODULE.get(module, module).lower().replace("_", "-")
        assert package in listed(extra), f"{module} ({package}) is not in [{extra}]"


def test_a_missing_module_of_foilbench_itself_is_not_disguised():
    assert as_missing_extra(ModuleNotFoundError("No module named 'foilbench.x'",
                                                name="foilbench.x")) is None
    wrapped = RuntimeError("backend failed")
    wrapped.__cause__ = ModuleNotFoundError("No module named 'lpips'", name="lpips")
    assert as_missing_extra(wrapped).extra == "audit"


def test_require_names_what_needs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "starlette", None)
    with pytest.raises(MissingExtraError, match=r"the review app needs starlette, which is not "
                                                r"installed: pip install 'foilbench\[review\]'"):
        require("starlette", what="the review app")
