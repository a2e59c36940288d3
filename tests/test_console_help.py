"""--help a newcomer reads without a manual: every option of every command explains itself,
one option name means one thing, seeds are named for what they seed, the COMPASS filter has one
default, commands say which extra they need, and `fetch --list` points past its releases."""

from __future__ import annotations

import importlib

import click
import pytest
from click.testing import CliRunner

from foilbench.cli.main import COMMANDS, cli


def all_commands():
    """(path, command) for every command and subcommand in COMMANDS."""
    def walk(cmd, path):
        yield path, cmd
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, f"{path} {name}")

    for name, (module, attr, _) in COMMANDS.items():
        yield from walk(getattr(importlib.import_module(module), attr), name)


def options():
    return [(path, p) for path, cmd in all_commands() for p in cmd.params
            if isinstance(p, click.Option)]


def test_the_walk_sees_every_command():
    paths = {path for path, _ in all_commands()}
    assert len(paths) > 40
    assert {"run", "audit blind", "review status", "compass build", "construct compass"} <= paths


def test_every_option_has_help():
    missing = [f"{path} {p.opts[0]}" for path, p in options() if not p.hidden and not p.help]
    assert missing == []


def test_json_prints_and_json_out_writes():
    """--json is a flag that prints JSON; a command that writes JSON to a file takes
    --json-out FILE (and still its old name --json FILE, said in its help)."""
    for path, p in options():
        if "--json" not in p.opts and "--json-out" not in p.opts:
            continue
        if p.is_flag:
            assert p.opts == ["--json"], path
            assert "print" in p.help.lower(), path
        else:
            assert p.opts[0] == "--json-out" and p.metavar == "FILE", path
            assert "--json FILE is the old name" in p.help, path


def test_the_old_json_name_still_writes(tmp_path):
    from foilbench.cli.analyze_cmd import analyze

    cmd = analyze.commands["units"]
    for name in ("--json-out", "--json"):
        ctx = cmd.make_context("units", ["RUN", name, str(tmp_path / "t.json")])
        assert ctx.params["json_path"] == str(tmp_path / "t.json")


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_the_bootstrap_seed_and_its_old_name(command):
    cmd = getattr(importlib.import_module(COMMANDS[command][0]), command)
    for name in ("--bootstrap-seed", "--seed"):
        ctx = cmd.make_context(command, ["--model", "m", "--benchmark", "b", name, "7"])
        assert ctx.params["seed"] == 7
    [opt] = [p for p in cmd.params if p.name == "seed"]
    assert opt.opts[0] == "--bootstrap-seed" and "old name" in opt.help


def test_every_other_seed_says_what_it_seeds():
    for path, p in options():
        if "--seed" in p.opts and path not in ("run", "sweep"):
            assert p.opts == ["--seed"] and "seed" in p.help.lower(), path
            assert "bootstrap" not in p.help.lower(), path


def test_one_compass_similarity_filter_with_one_default():
    found = {path: p for path, p in options() if "--similarity" in p.opts}
    assert set(found) == {"compass build", "construct compass"}
    build, construct = found["compass build"], found["construct compass"]
    assert build.default == construct.default == 0.8
    assert build.help == construct.help and "0 turns it off" in build.help


@pytest.mark.parametrize("args,extra", [(["serve", "--help"], "foilbench[review]"),
                                        (["review", "status", "--help"], "foilbench[review]"),
                                        (["review", "--help"], "foilbench[review]"),
                                        (["audit", "blind", "--help"], "foilbench[audit]")])
def test_help_names_the_extra(args, extra):
    res = CliRunner().invoke(cli, args, terminal_width=80)
    assert res.exit_code == 0, res.output
    assert extra in " ".join(res.output.split())


def test_review_help_covers_choice_benchmarks_and_concepts():
    text = " ".join(CliRunner().invoke(cli, ["review", "--help"]).output.split())
    assert "SugarCrepe's negative validation" in text and "review concepts DIR" in text


def test_fetch_list_points_to_loader_path_for_the_rest():
    res = CliRunner().invoke(cli, ["fetch", "--list"])
    assert res.exit_code == 0, res.output
    tail = " ".join(res.output.split("No fetcher", 1)[1].split())
    assert "--benchmark LOADER:PATH" in tail
    from foilbench.fetch import catalog

    fed = {(r.spec or "").partition(":")[0] for r in catalog.releases().values()}
    for loader in ("composet", "bivlc", "vsr"):
        assert loader in tail and loader not in fed
    assert "sugarcrepe," not in tail and "winoground" not in tail
    assert max(map(len, res.output.split("No fetcher", 1)[1].splitlines())) <= 80


@pytest.mark.parametrize("args,tty,want", [([], True, True), ([], False, False),
                                           (["--progress"], False, True),
                                           (["--no-progress"], True, False),
                                           (["--quiet"], True, False)])
def test_progress_like_the_construct_commands(monkeypatch, args, tty, want):
    from foilbench.cli.options import settings_from
    from foilbench.cli.run_cmd import run

    monkeypatch.setattr("sys.stderr.isatty", lambda: tty)
    ctx = run.make_context("run", list(args))
    assert settings_from(dict(ctx.params)).progress is want
