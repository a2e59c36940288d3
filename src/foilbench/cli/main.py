"""The ``foilbench`` command. Subcommands load lazily so ``--help`` stays fast."""

from __future__ import annotations

import errno
import importlib
import importlib.util
import sys
import warnings

import click

from foilbench import __version__
from foilbench.display import safe_message
from foilbench.errors import FoilbenchError

# name -> ("module", "attribute", one-line help). Each module holds one click command/group.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("foilbench.cli.run_cmd", "run", "Evaluate models on benchmarks (default: embedded)."),
    "models": ("foilbench.cli.catalog_cmd", "models", "List model names and spec schemes."),
    "benchmarks": ("foilbench.cli.catalog_cmd", "benchmarks", "List benchmarks and loaders."),
    "inspect": ("foilbench.cli.inspect_cmd", "inspect", "Counts and validation of a benchmark."),
    "show": ("foilbench.cli.show_cmd", "show", "Print the metrics of a stored run."),
    "build": ("foilbench.cli.build_cmd", "build", "Build benchmarks (the procedural suite)."),
    "train": ("foilbench.cli.train_cmd", "train", "Train the embedded default models."),
    "finetune": ("foilbench.cli.finetune_cmd", "finetune",
                 "Auto-Comp hard-negative fine-tuning of a real dual encoder (App. A.9)."),
    "sweep": ("foilbench.cli.sweep_cmd", "sweep", "Models x benchmarks matrix, resumable."),
    "audit": ("foilbench.cli.audit_cmd", "audit", "Audit a benchmark (blind, controls, ...)."),
    "analyze": ("foilbench.cli.analyze_cmd", "analyze", "Analyses of stored runs."),
    "compass": ("foilbench.cli.compass_cmd", "compass", "COMPASS scene-graph captions."),
    "construct": ("foilbench.cli.construct_cmd", "construct",
                  "Build a benchmark with a paper's pipeline (any backend)."),
    "report": ("foilbench.cli.report_cmd", "report", "Write the HTML report of runs."),
    "serve": ("foilbench.cli.serve_cmd", "serve", "Browse the results database locally."),
    "review": ("foilbench.cli.review_cmd", "review", "Human QC of a pair benchmark, then export."),
    "export": ("foilbench.cli.export_cmd", "export", "Per-item results of a run as Parquet/CSV."),
    "fetch": ("foilbench.cli.fetch_cmd", "fetch", "Download a published benchmark release."),
    "store": ("foilbench.cli.store_cmd", "store",
              "Export/import a results store (Parquet) across DuckDB versions."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if self._available(name))

    @staticmethod
    def _available(name: str) -> bool:
        module = COMMANDS[name][0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS or not self._available(name):
            return None
        module, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="foilbench")
def cli() -> None:
    """foilbench: do vision-language models bind attributes, relations, counts and states
    to the right objects? Evaluate, build and audit controlled benchmarks.

    \b
    Start here:
      foilbench run                         embedded models on the embedded suite
      foilbench run --model openclip:ViT-B-32:/path/w.pt --benchmark ./my_bench
      foilbench inspect sugarcrepe:/data/sugarcrepe --json
    """


def main(fast_exit: bool = False) -> None:
    """The console entry point. ``fast_exit`` (``python -m foilbench``): once the command has
    finished and its output is flushed, end the process without the interpreter's teardown
    (:func:`exit_now`)."""
    if fast_exit:  # the process ends with the command: run/sweep may freeze start-up objects
        from foilbench.runner.startup_gc import own_process

        own_process()
    try:
        _main()
    except SystemExit as e:
        if fast_exit:
            exit_now(e.code if isinstance(e.code, int) else (0 if e.code is None else 1),
                     None if isinstance(e.code, int) or e.code is None else e.code)
        raise
    if fast_exit:
        exit_now(0)


def entry() -> None:
    """The ``foilbench`` console script: :func:`main` with ``fast_exit``."""
    main(fast_exit=True)


def exit_now(code: int, message: object = None) -> None:
    """End the process at once when nothing can be left undone: after torch and friends are
    imported, the interpreter's teardown (freeing every module) takes seconds of a short run
    for nothing. Output is flushed and logging shut down first; the normal exit is kept while
    a library that cleans up at exit is loaded (ray, dask.distributed), child processes or
    non-daemon threads are alive."""
    import threading

    if message is not None:
        print(message, file=sys.stderr)
    holds = any(m in sys.modules for m in ("ray", "distributed"))
    threads = [t for t in threading.enumerate()
               if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    children = "multiprocessing" in sys.modules and bool(
        sys.modules["multiprocessing"].active_children())
    if holds or threads or children:
        sys.exit(code)
    import logging
    import os

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


UNWRITABLE = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def _plain_plugin_warnings(show):
    """``warnings.showwarning`` that prints foilbench's own warnings (a skipped plugin, a
    cache that cannot be written) as one ``warning:`` line, not Python's file:line form;
    every other warning as before."""
    def showwarning(message, category, filename, lineno, file=None, line=None):
        if category.__module__.startswith("foilbench."):
            click.echo(f"warning: {safe_message(message)}", err=True)
            return
        show(message, category, filename, lineno, file, line)

    return showwarning


def _main() -> None:
    # Idle OpenMP threads sleep instead of spinning (libgomp reads this once, when torch
    # loads, which no command has done yet): next to a busy process on a small machine,
    # spinning threads made scoring several times slower (foilbench.runner.threads).
    import os

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # Python hides DeprecationWarnings outside __main__; a user who sets an old variable
    # (foilbench.paths) should read that it is going away.
    warnings.filterwarnings("default", category=DeprecationWarning, module=r"foilbench\.")
    try:
        with warnings.catch_warnings():  # restored when the command ends
            warnings.showwarning = _plain_plugin_warnings(warnings.showwarning)
            cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except FoilbenchError as e:
        click.echo(f"error: {safe_message(e)}", err=True)
        sys.exit(2)
    except OSError as e:  # a full or read-only disk met outside the runner's own checks
        if e.errno not in UNWRITABLE:
            raise
        click.echo(f"error: cannot write {e.filename or 'a file'}: {e.strerror}. Free space, "
                   "or choose a writable folder (--out DIR), and run the same command again "
                   "(finished work is kept and resumed)", err=True)
        sys.exit(2)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # an extra's module missing wherever it was imported: one line
        from foilbench.extras import as_missing_extra

        missing = as_missing_extra(e)
        if missing is None:
            raise
        click.echo(f"error: {missing}", err=True)
        sys.exit(2)
