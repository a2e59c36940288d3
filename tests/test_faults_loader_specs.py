"""A bad ``LOADER:PATH?options`` spec is refused before any model is built (issue 42).

``run`` and ``sweep`` load their models before their benchmarks; a loader spec with an
unknown option, a bad option value, a missing release folder or a missing ``?images=``
folder was found only after every model was built (some as a traceback). Now each is one
sentence, exit 2, and the model factory is never called.
"""

from __future__ import annotations

import pytest

from _faults_cli import foilbench, no_traceback
from foilbench.data.loader_specs import check_loader_spec
from foilbench.data.loaders.common import LoaderOptionError
from foilbench.errors import FoilbenchError

CASES = {  # spec (DIR: an existing folder, MISSING: none) -> what the sentence must say
    "composet:MISSING": "does not exist",
    "composet:DIR?tier=short": "unknown loader option(s) tier; known: tiers",
    "composet:DIR?tiers=huge": "unknown tier(s) huge; known: short, medium, long",
    "sugarcrepe:DIR?images=MISSING": "is not a folder",
    "sugarcrepe:DIR?subset=nope": "unknown subset 'nope'",
    "sugarcrepe:DIR?subset=all&types=a": "give ?types= or ?subset=, not both",
    "whatsup_pairs:DIR?pairs=diagonal": "unknown pairs='diagonal'",
    "vsr:DIR?variant=x": "unknown variant 'x'",
    "aro_coco_order:DIR?seed=abc": "?seed= must be an integer",
    "winoground:DIR?imgs=x": "unknown loader option(s) imgs; known: images",
}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture
def no_model_builds(monkeypatch):
    """Building any model fails the test: the refusal must come first."""
    import foilbench.runner.setup as setup

    built = []

    def sentinel(spec, *args, **kwargs):
        built.append(spec)
        raise AssertionError(f"a model was built before the benchmark spec was checked: {spec}")

    monkeypatch.setattr(setup, "resolve_model", sentinel)
    return built


def spec_of(template: str, tmp_path) -> str:
    (tmp_path / "release").mkdir(exist_ok=True)
    return (template.replace("MISSING", str(tmp_path / "missing"))
            .replace("DIR", str(tmp_path / "release")))


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("template", list(CASES))
def test_a_bad_loader_spec_is_one_sentence_before_any_model(tmp_path, capsys, no_model_builds,
                                                            command, template):
    spec = spec_of(template, tmp_path)
    args = [command, "--model", "tiny-random", "--benchmark", spec, "--out",
            str(tmp_path / "out")] + (["--no-report"] if command == "run" else [])
    code, out, err = foilbench(capsys, *args)
    no_traceback(err)
    assert code == 2, err
    assert no_model_builds == []
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and CASES[template] in lines[0]
    assert template.partition(":")[0] in lines[0]  # names the loader


def test_good_specs_and_other_specs_pass_the_check(tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "images").mkdir()
    for spec in (f"composet:{tmp_path / 'release'}?tiers=short,long",
                 f"sugarcrepe:{tmp_path / 'release'}?images={tmp_path / 'images'}&sample=5",
                 f"whatsup_pairs:{tmp_path / 'release'}?pairs=axis",
                 "tiny-builtin", str(tmp_path / "release"), "nosuchloader:/x"):
        check_loader_spec(spec)


def test_the_loader_itself_refuses_with_the_same_error_class(tmp_path):
    from foilbench.data.loaders import composet

    with pytest.raises(LoaderOptionError, match="unknown tier") as caught:
        composet.load(f"{tmp_path}?tiers=huge")
    assert isinstance(caught.value, FoilbenchError) and isinstance(caught.value, ValueError)
