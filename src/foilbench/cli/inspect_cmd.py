"""``foilbench inspect``: counts by kind and metadata, and every validation problem.

Works without images: the table is read as text, and missing or unreadable images are reported
as problems instead of stopping the inspection. Images a loader derives rather than reads from
a file (bytes embedded in Parquet shards, ARO's box crops) are not written by inspection; they
are checked where loading will take them from (the embedded bytes decode; the crop's source
image exists, decodes and contains the box: :mod:`foilbench.data.loaders.sources`), so a
complete release inspects clean.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from foilbench.data.format import (
    MANIFEST_FILE,
    Benchmark,
    checked_checksum,
    read_benchmark_folder,
)
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.data.registry import benchmark_names, resolve_benchmarks, suites
from foilbench.data.suspicious import suspicious
from foilbench.data.validate import Problem, format_problems, validate
from foilbench.display import safe_markup
from foilbench.stats.breakdown import group_label

MAX_VALUES = 50  # free extra columns with more distinct values are not tabulated


def load_for_inspection(spec: str) -> list[tuple[Benchmark, list]]:
    """[(benchmark, text-level problems already found)] for a spec."""
    path = Path(spec)
    if spec not in suites() and spec not in benchmark_names() and (path / MANIFEST_FILE).exists():
        return [(read_benchmark_folder(path), [])]
    benches = resolve_benchmarks(spec, on_invalid="drop", check_images=False)
    return [(b, list(b.dropped.problems) if b.dropped else []) for b in benches]


def content_problems(bench: Benchmark, *, check_images: bool) -> list[Problem]:
    """What loads but should not be trusted: a manifest checksum that is not true of the
    files (checked with the images), a non-finite ``unit_chance``, items whose candidates
    are identical (:func:`foilbench.data.suspicious.suspicious`)."""
    found = list(suspicious(bench, check_images=check_images))
    own_manifest = (bench.root / MANIFEST_FILE).exists() and not bench.dropped
    note = (checked_checksum(bench) if check_images and own_manifest
            else bench.checksum_note)
    if note:
        found.insert(0, Problem(None, "checksum", "checksum_mismatch", note))
    return found


def count_by(bench: Benchmark) -> dict[str, dict[str, int]]:
    """{"kind": {kind: n}, column: {value: count}} over metadata and small free extras."""
    by: dict[str, dict[str, int]] = {"kind": {bench.kind: len(bench)}}
    payload = set(bench.spec.required)
    for col in bench.items.columns:
        if col in payload:
            continue
        labels = bench.items[col].map(_label)
        if col not in METADATA_COLUMNS and labels.nunique() > MAX_VALUES:
            continue
        counts = labels.value_counts()
        by[col] = {str(v): int(counts[v]) for v in sorted(counts.index)}
    return by


def _label(value: Any) -> str:
    if isinstance(value, (list, tuple)) or hasattr(value, "__array__"):
        return json.dumps(list(value), default=str)
    return group_label(value)


def inspect_report(spec: str, *, check_images: bool = True,
                   decode: bool = True) -> list[tuple[dict, list]]:
    """[(report, problems)] per benchmark the spec names; report is the ``--json`` object.
    ``decode=False`` (``--fast``) reads image headers only; the report says so."""
    out = []
    images = ("skipped" if not check_images else "decoded" if decode else "headers only")
    for bench, problems in load_for_inspection(spec):
        problems = problems + validate(bench, check_images=check_images,
                                       check_readable=check_images and decode)
        problems += content_problems(bench, check_images=check_images)
        report = {"benchmark": bench.name, "n_items": len(bench), "by": count_by(bench),
                  "images_checked": images, "problems": [p.to_dict() for p in problems]}
        out.append((report, problems))
    return out


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("benchmark")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"benchmark", "n_items", "by": {COLUMN: {VALUE: count}}, "problems"} '
                   "(a list of such objects when the spec names a suite).")
@click.option("--skip-images", is_flag=True, help="Do not look at image files at all.")
@click.option("--fast", is_flag=True,
              help="Read image headers only (position, existence, size); pixel data is not "
                   "decoded, so corrupt image data goes unnoticed.")
def inspect(benchmark: str, as_json: bool, skip_images: bool, fast: bool) -> None:
    """Counts by kind and metadata column, and the validation result, of BENCHMARK.

    BENCHMARK is a registered name, a foilbench-format folder or LOADER:PATH. Images need not
    be present: missing ones are listed as problems. Every image is decoded (a valid header
    over corrupt pixel data is a problem) unless --fast. Exits 1 when there are problems.
    """
    found = inspect_report(benchmark, check_images=not skip_images, decode=not fast)
    reports = [rep for rep, _ in found]
    problems = [probs for _, probs in found]
    if as_json:
        click.echo(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))
    else:
        console = Console()
        for rep, probs in zip(reports, problems, strict=True):
            table = Table(title=f"{safe_markup(rep['benchmark'])}: {rep['n_items']} items",
                          title_justify="left", highlight=False)
            for col in ("column", "value", "items"):
                table.add_column(col, justify="right" if col == "items" else "left")
            for col, counts in rep["by"].items():
                for value, n in counts.items():
                    table.add_row(safe_markup(col), safe_markup(value), str(n))
            console.print(table)
            console.print(format_problems(probs) if probs else "valid: no problems found",
                          markup=False, highlight=False)
            if rep["images_checked"] == "headers only":
                console.print("--fast: image headers only; pixel data was not decoded, so "
                              "corrupt image data would go unnoticed", markup=False)
    if any(problems):
        sys.exit(1)
