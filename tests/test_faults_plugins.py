"""Broken and colliding plugins are skipped one at a time (issue 42, item 4).

One third-party entry point named like a built-in (``tiny-random``) once broke every command,
``foilbench models`` included (``ValueError: model 'tiny-random' is already registered``). Now
each plugin is checked alone: a colliding one (built-ins win), a second of one name, a
malformed target or a missing module is skipped with one warning naming its distribution and
the reason, and ``foilbench models`` lists it; a target that is not a factory fails in one
sentence when it is used, and not before.
"""

from __future__ import annotations

import importlib.metadata
import json
from types import SimpleNamespace

import pytest

from _faults_cli import foilbench, no_traceback
from foilbench.data.registry import benchmark_names, loaders
from foilbench.models.registry import model_names, model_schemes
from foilbench.registry import PluginError, PluginWarning, Registry

EVIL_DIST = "evil-plugin\x1b]0;PWNED\x07"


def ep(name, value, dist):
    return SimpleNamespace(name=name, value=value, dist=SimpleNamespace(name=dist))


PLUGINS = [
    ep("tiny-random", "foilbench.models.tiny:build_tiny_random", EVIL_DIST),
    ep("ghost", "no_such_module_for_foilbench_tests:build", "ghost-dist"),
    ep("not-a-factory", "foilbench.errors:__doc__", "docstring-dist"),
    ep("no-colon", "foilbench.models.tiny", "malformed-dist"),
    ep("twice", "foilbench.models.tiny:build_tiny_random", "first-dist"),
    ep("twice", "foilbench.models.tiny:build_tiny_random", "second-dist"),
]


def clear_caches():
    for registry in (model_names, model_schemes, benchmark_names, loaders):
        registry.cache_clear()


@pytest.fixture
def plugins(monkeypatch, tmp_path):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "300")
    real = importlib.metadata.entry_points

    def fake_entry_points(**kwargs):
        if kwargs.get("group") == "foilbench.models":
            return list(PLUGINS)
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    clear_caches()
    yield
    clear_caches()


def test_each_broken_plugin_is_skipped_with_its_reason(plugins):
    with pytest.warns(PluginWarning) as caught:
        names = model_names().names()
    assert {"tiny-random", "not-a-factory", "twice"} <= set(names)
    assert "ghost" not in names and "no-colon" not in names
    assert model_names().entry("tiny-random").plugin is None  # the built-in won
    assert model_names().entry("twice").plugin == "first-dist"
    skipped = {(s.name, s.distribution): s.reason for s in model_names().skipped()}
    assert skipped == {
        ("tiny-random", EVIL_DIST): "its name is a built-in model's (built-ins win)",
        ("ghost", "ghost-dist"):
            "its module 'no_such_module_for_foilbench_tests' is not installed",
        ("no-colon", "malformed-dist"):
            "its target 'foilbench.models.tiny' is not 'module:object'",
        ("twice", "second-dist"): "first-dist registered 'twice' first",
    }
    messages = [str(w.message) for w in caught]
    assert len(messages) == 4 and all("skipped" in m for m in messages)
    assert all("\x1b" not in m for m in messages)  # the distribution name is escaped


def test_a_target_that_is_not_a_factory_fails_when_used_in_one_sentence(plugins):
    with pytest.warns(PluginWarning):
        with pytest.raises(PluginError, match="is a str, not a factory"):
            model_names().get("not-a-factory")


def test_every_command_still_works_and_models_lists_the_skipped(plugins, capsys, tmp_path):
    code, out, err = foilbench(capsys, "models")
    no_traceback(err)
    assert code == 0
    assert "skipped plugins" in out and "ghost-dist" in out and "built-ins win" in out
    assert "\x1b" not in out + err and "\\x1b]0;PWNED" in out
    assert err.count("warning: model plugin") == 4
    code, out, err = foilbench(capsys, "benchmarks")
    assert code == 0, err
    code, out, err = foilbench(capsys, "run", "--model", "tiny-random", "--benchmark",
                               "tiny-builtin", "--out", str(tmp_path / "out"), "--no-report",
                               "--no-cache", "--quiet")
    no_traceback(err)
    assert code == 0, err
    code, out, err = foilbench(capsys, "show", "--db", str(tmp_path / "out/foilbench.duckdb"),
                               "--json")
    assert json.loads(out)[0]["model_spec"] == "tiny-random"
    code, out, err = foilbench(capsys, "run", "--model", "not-a-factory", "--benchmark",
                               "tiny-builtin", "--out", str(tmp_path / "out2"), "--no-report",
                               "--no-cache", "--quiet")
    no_traceback(err)
    assert code == 2 and "docstring-dist" in err and "not a factory" in err


def test_a_built_in_registered_twice_still_raises():
    reg = Registry("thing")
    reg.register("a", "m:a")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a", "m:b")
