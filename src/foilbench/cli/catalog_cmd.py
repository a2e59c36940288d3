"""``foilbench models`` and ``foilbench benchmarks``: what can be named on the command line.

Both read the registries (no hand-kept lists) and mark entries whose optional dependencies
(``Entry.requires``) are not installed, naming what to install.
"""

from __future__ import annotations

import importlib.util

import click
from rich.console import Console
from rich.table import Table

from foilbench.data.registry import benchmark_names, loaders, suites
from foilbench.display import safe_markup
from foilbench.models.registry import model_names, model_schemes
from foilbench.registry import Registry

DESCRIPTION_LIMIT = 200  # a plugin's description is the plugin author's text


def _missing(modules: tuple[str, ...]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def _table(title: str, registry: Registry, template: str = "{name}") -> Table:
    table = Table(title=title, title_justify="left", highlight=False)
    table.add_column("spec")
    table.add_column("available")
    table.add_column("description")
    for entry in registry.entries():
        missing = _missing(entry.requires)
        table.add_row(template.format(name=safe_markup(entry.name)),
                      f"[dim]needs {safe_markup(', '.join(missing))}[/dim]" if missing
                      else "yes",
                      safe_markup(entry.description, DESCRIPTION_LIMIT)
                      or f"[dim]{safe_markup(entry.target)}[/dim]")
    return table


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
def models() -> None:
    """List model names and spec schemes accepted by --model.

    \b
    A spec is a name (tiny-random, foilbench-plain, ...) or SCHEME:REST, e.g.
      openclip:ViT-B-32:/path/weights.pt   hf:/local/clip_dir   hf-vlm:/local/blip_dir
    """
    console = Console()
    console.print(_table("model names", model_names()))
    console.print(_table("model schemes (SCHEME:...)", model_schemes(), "{name}:..."))
    _print_skipped(console, model_names(), model_schemes())


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
def benchmarks() -> None:
    """List suites, registered benchmarks and loaders accepted by --benchmark.

    \b
    A spec is a suite or name below, a foilbench-format folder (manifest.json + items.parquet),
    or LOADER:PATH to convert a published release, e.g. sugarcrepe:/data/sugarcrepe.
    On the Hugging Face Hub (foilbench[hub]; docs/hub.md):
      hf://datasets/ORG/NAME@REV[/PATH]          a foilbench folder in a dataset repo
      LOADER:hf://datasets/ORG/NAME@REV[?opts]   a release in its own layout
    @FILE reads one spec a line (docs/config.md).
    """
    console = Console()
    console.print(_table("suites", suites()))
    console.print(_table("benchmarks", benchmark_names()))
    console.print(_table("loaders (LOADER:PATH)", loaders(), "{name}:PATH"))
    _print_skipped(console, benchmark_names(), loaders())


def _print_skipped(console: Console, *registries: Registry) -> None:
    """The plugins that were skipped (a name taken by a built-in, a module not installed, ...),
    so a user who installed one sees why it is not listed above."""
    skipped = [(reg.kind, s) for reg in registries for s in reg.skipped()]
    if not skipped:
        return
    table = Table(title="skipped plugins", title_justify="left", highlight=False)
    for col in ("plugin", "distribution", "reason"):
        table.add_column(col)
    for kind, s in skipped:
        table.add_row(f"{kind} {safe_markup(s.name)}", safe_markup(s.distribution),
                      safe_markup(s.reason, DESCRIPTION_LIMIT))
    console.print(table)
