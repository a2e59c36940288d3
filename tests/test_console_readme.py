"""The README (and the docs pages it sends readers to) only shows what works: every
`foilbench ...` command in a bash block names a command that exists and options it takes
(and its --help runs), the Python blocks run as written, the score table's columns are each
benchmark's primary metric, and the construction funnel belongs to the command above it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from foilbench.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
SERIAL_MARK = re.compile(r"(?<![\"'])\bpytest\.mark\.serial\b(?![\"'])")
PAGES = ["README.md", "docs/intervals.md", "docs/construction.md", "docs/performance.md"]
FENCE = re.compile(r"```(bash|python)\n(.*?)```", re.S)


def blocks(page: str, lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall((ROOT / page).read_text()) if kind == lang]


def foilbench_commands(page: str) -> list[list[str]]:
    """Every `foilbench ...` invocation in the page's bash blocks, as argv lists."""
    out = []
    for body in blocks(page, "bash"):
        for line in body.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|\||;|\|", line):
                words = shlex.split(part, comments=True)
                while words and re.match(r"^[A-Z_]+=", words[0]):
                    words = words[1:]  # VAR=value foilbench ...
                if words[:1] == ["foilbench"]:
                    out.append(words[1:])
    return out


def resolve(argv: list[str]) -> tuple[list[str], click.Command]:
    """The command path and click command ``argv`` names (``review DIR`` means review serve)."""
    ctx = click.Context(cli)
    path, cmd = [], cli
    for word in argv:
        if not isinstance(cmd, click.Group) or word.startswith("-"):
            break
        sub = cmd.get_command(ctx, word)
        if sub is None:
            if path == ["review"]:
                sub, word = cmd.get_command(ctx, "serve"), "serve"
            else:
                break
        path.append(word)
        cmd = sub
    return path, cmd


@pytest.mark.parametrize("page", PAGES)
def test_every_command_and_option_exists(page):
    commands = foilbench_commands(page)
    if page in ("README.md", "docs/construction.md"):
        assert len(commands) > 10
    for argv in commands:
        path, cmd = resolve(argv)
        assert path, f"{page}: `foilbench {' '.join(argv)}` names no command"
        assert not isinstance(cmd, click.Group) or argv == path, (page, argv)
        names = {o for p in cmd.params if isinstance(p, click.Option)
                 for o in p.opts + p.secondary_opts} | {"-h", "--help"}
        for word in argv:
            if word.startswith("-"):
                assert word.split("=")[0] in names, f"{page}: {' '.join(argv)}: {word}"
        res = CliRunner().invoke(cli, [*path, "--help"])
        assert res.exit_code == 0, (page, path, res.output)


def test_the_setup_commands_are_the_two_documented_ones():
    setup = blocks("README.md", "bash")[:2]
    assert setup[0].strip().endswith("pip install torch==2.13.0 -e . && foilbench run")
    assert "pip install -q torch==2.14.1 torchvision==0.29.1 -e '.[dev]' && mypy && pytest" \
        in setup[1]


def test_every_serial_test_file_is_named_in_the_test_command():
    """The second pytest of the test command runs only the files it names, and the first
    deselects every ``serial`` test: a serial test in an unnamed file would run nowhere."""
    command = blocks("README.md", "bash")[1]
    named = set(command.split("pytest -m serial", 1)[1].split())
    marked = {f"tests/{p.name}" for p in sorted((ROOT / "tests").glob("test_*.py"))
              if SERIAL_MARK.search(p.read_text(encoding="utf-8"))}
    assert marked and marked == named, (marked, named)
    assert (ROOT / ".ci" / "run").read_text().count(command.split("&& mypy", 1)[1].strip()) == 1


def test_the_python_blocks_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    code = blocks("README.md", "python")
    assert len(code) >= 4
    namespace: dict = {}
    for body in code:
        exec(compile(body.replace("/tmp/fb", str(tmp_path / "fb")), "README.md", "exec"),
             namespace)
    assert (tmp_path / "my-runs" / "foilbench.duckdb").is_file()
    assert namespace["sweep"].reused == 1


def test_the_score_table_shows_each_benchmarks_primary_metric(tmp_path):
    from foilbench.construct.suite import build_suite, load_suite
    from foilbench.runner.readme import COLUMNS, scores_path
    from test_construct_suite import TINY

    build_suite(tmp_path, seed=0, size=48, config=TINY, progress=False)
    primary = {b.name: b.manifest.primary_metric for b in load_suite(tmp_path)}
    card = next(iter(json.loads(scores_path().read_text()).values()))
    for part, metric, _ in COLUMNS:
        bench = part.split("/")[0]
        shown = card[part][metric].get("metric", metric) if metric == "confusion" else metric
        assert shown == primary[bench], (part, metric)


def test_the_construction_funnel_belongs_to_the_command_above_it():
    text = (ROOT / "docs/construction.md").read_text()
    command = next(c for c in foilbench_commands("docs/construction.md")
                   if c[:2] == ["construct", "composet"] and "--text" in c)
    per_scene = int(command[command.index("--foils-per-scene") + 1])
    funnel = text.split("<!-- survival:begin -->", 1)[1].split("<!-- survival:end -->", 1)[0]
    scenes, proposals = re.search(r"foil enumeration \(step 4\) \| scene \| (\d+) \| \d+ -> "
                                  r"(\d+) \|", funnel).groups()
    assert int(proposals) == int(scenes) * per_scene
    assert f"{scenes} scenes, {per_scene} proposals each" in text
