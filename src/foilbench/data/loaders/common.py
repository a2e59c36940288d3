"""Plumbing every published-benchmark loader shares.

Why one place: each release is read differently, but the rules for bad input are the same for
all of them. A schema mismatch names the file and the field; a release whose counts differ from
the published ones is *warned about* (Python ``warnings`` plus ``manifest.extras["warnings"]``),
never silently accepted; a release with missing parts is refused unless the caller allowed a
partial dataset (``on_invalid="drop"``, the CLI's ``--allow-partial``), and then the manifest's
``partial`` flag is set so every output shows it.

Spec options: a loader path may carry ``?key=value&key2=value2`` after the folder, e.g.
``sugarcrepe:/data/sugarcrepe?images=/data/coco/val2017``. Each loader declares the options
it takes, and a check of their values, with :func:`takes_options`, so that ``run`` and
``sweep`` refuse a bad spec before any model loads (:mod:`foilbench.data.loader_specs`), with
the same sentence the loader itself would give.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pandas as pd

from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.errors import BenchmarkError
from foilbench.kinds import KINDS, ChoiceKind, ImageChoiceKind, PairKind
from foilbench.paths import env_path

# CompoSET Table 8 scores each benchmark by one protocol: Group for 2x2 benchmarks, T2I for
# benchmarks that only foil the image, I2T for those that only foil the text.
# table8_metric -> (foilbench kind, foilbench metric of that kind)
TABLE8_PROTOCOLS: dict[str, tuple[str, str]] = {
    "group": (PairKind.name, "group"),
    "t2i": (ImageChoiceKind.name, "r1"),
    "i2t": (ChoiceKind.name, "r1"),
}


class LoaderOptionError(BenchmarkError, ValueError):
    """A ``LOADER:PATH?options`` spec the loader cannot take: an unknown option or a bad value.
    (A ``ValueError`` too: what the loaders raised for it before.)"""


OptionCheck = Callable[[dict[str, str]], object]  # what it returns is ignored


def takes_options(*names: str, check: OptionCheck | None = None) -> Callable:
    """Declare on a loader function the ``?options`` it takes and ``check`` (raising
    :class:`LoaderOptionError`) of their values; read by :mod:`foilbench.data.loader_specs`
    before any model loads, and by the loader (:func:`loader_options`)."""
    def mark(load: Callable) -> Callable:
        load.spec_options = tuple(names)  # type: ignore[attr-defined]
        load.check_options = check  # type: ignore[attr-defined]
        return load
    return mark


def loader_options(path: str | Path, load: Callable) -> tuple[Path, dict[str, str]]:
    """:func:`split_spec` with the options ``load`` declares, and their values checked."""
    folder, options = split_spec(path, allowed=load.spec_options)  # type: ignore[attr-defined]
    check = getattr(load, "check_options", None)
    if check is not None:
        check(options)
    return folder, options


class LoaderWarning(UserWarning):
    """A release differs from what its loader documents (counts, files, fields)."""


@dataclass
class Findings:
    """Warnings collected while reading a release; copied into the manifest's extras."""

    loader: str
    messages: list[str] = field(default_factory=list)
    partial: bool = False

    def warn(self, message: str) -> None:
        self.messages.append(message)
        warnings.warn(f"{self.loader}: {message}", LoaderWarning, stacklevel=3)

    def missing_part(self, message: str, on_invalid: str) -> None:
        """A part of the release is absent: refuse, or record a partial dataset."""
        if on_invalid != "drop":
            raise BenchmarkError(f"{self.loader}: {message} (pass --allow-partial to load what "
                                 f"is there and mark the benchmark partial)")
        self.partial = True
        self.warn(f"partial dataset: {message}")


def present_parts(folder: Path, wanted: list[str], file_of: Mapping[str, str],
                  findings: Findings, on_invalid: str, note: str, hint: str = "") -> list[str]:
    """The wanted subsets whose annotation file (``file_of[subset]``) is in ``folder``, in
    the wanted order. None of them is an error that names the files and ``note`` (how to get
    them); some absent is a missing part (refused, or a partial dataset with
    ``--allow-partial``), its message ending in ``hint``. Why one function: releases split
    into per-subset files (ARO, What's Up) must treat a half-downloaded folder alike."""
    present = [s for s in wanted if (folder / file_of[s]).is_file()]
    if not present:
        raise BenchmarkError(f"{findings.loader}: none of "
                             f"{', '.join(file_of[s] for s in wanted)} in {folder}. {note}")
    if len(present) < len(wanted):
        absent = [file_of[s] for s in wanted if s not in present]
        findings.missing_part(f"{folder} lacks {', '.join(absent)}{hint}", on_invalid)
    return present


def split_spec(path: str | Path, allowed: Iterable[str] = ()) -> tuple[Path, dict[str, str]]:
    """``"DIR?images=X"`` -> ``(Path("DIR"), {"images": "X"})``; unknown keys raise."""
    text = str(path)
    base, sep, query = text.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if sep else {}
    allowed = tuple(allowed)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        hint = ", ".join(allowed) if allowed else "(this loader takes no options)"
        raise LoaderOptionError(f"{text}: unknown loader option(s) {', '.join(unknown)}; "
                                f"known: {hint}")
    if not base:
        raise LoaderOptionError(f"{text!r}: expected LOADER:PATH with a path to the release")
    return Path(base).expanduser(), options


def image_root(options: Mapping[str, str], env_var: str, default: Path) -> Path:
    """The image folder: ``?images=`` option, else the environment variable, else ``default``."""
    chosen = options.get("images")
    return Path(chosen).expanduser() if chosen else env_path(env_var) or Path(default).expanduser()


def require_dir(path: Path, loader: str, what: str) -> Path:
    if not path.is_dir():
        raise BenchmarkError(f"{loader}: {path} is not a folder (expected {what})")
    return path


def read_json(path: Path) -> Any:
    """Parse a JSON file; a missing or malformed file is a BenchmarkError naming it."""
    if not path.is_file():
        raise BenchmarkError(f"{path}: file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise BenchmarkError(f"{path}: not valid JSON ({e})") from None


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise BenchmarkError(f"{path}: file not found")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise BenchmarkError(f"{path}: line {n} is not valid JSON ({e})") from None
    return rows


def read_table(path: Path) -> pd.DataFrame:
    """Read Parquet or CSV/TSV by suffix; errors name the file."""
    if not path.is_file():
        raise BenchmarkError(f"{path}: file not found")
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")
    except Exception as e:  # pyarrow/pandas raise several types for corrupt files
        raise BenchmarkError(f"{path}: cannot read table ({e})") from None


def require_fields(record: Any, fields: Iterable[str], where: str) -> None:
    """A JSON record must be an object holding ``fields``; else name the file and field."""
    if not isinstance(record, Mapping):
        raise BenchmarkError(f"{where}: expected an object with fields {', '.join(fields)}, "
                             f"got {type(record).__name__}")
    missing = [f for f in fields if f not in record]
    if missing:
        raise BenchmarkError(f"{where}: missing field(s) {', '.join(missing)} "
                             f"(have: {', '.join(map(str, record))})")


def require_columns(table: pd.DataFrame, columns: Iterable[str], path: Path) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise BenchmarkError(f"{path}: missing column(s) {', '.join(missing)} "
                             f"(have: {', '.join(map(str, table.columns))})")


def check_counts(findings: Findings, what: str, observed: Mapping[str, int],
                 expected: Mapping[str, int]) -> None:
    """Warn for every value whose count differs from the published one (and the total)."""
    for key in sorted(set(observed) | set(expected)):
        got, want = observed.get(key, 0), expected.get(key)
        if want is None:
            findings.warn(f"{what} {key!r}: {got} items, not in the published release")
        elif got != want:
            findings.warn(f"{what} {key!r}: {got} items, the published release has {want}")
    total, want_total = sum(observed.values()), sum(expected.values())
    if total != want_total:
        findings.warn(f"{total} items in all, the published release has {want_total}")


def manifest_for(name: str, table8_metric: str, **fields: Any) -> Manifest:
    """A manifest whose kind and primary metric follow CompoSET Table 8's protocol."""
    kind, metric = TABLE8_PROTOCOLS[table8_metric]
    extras = dict(fields.pop("extras", {}))
    extras["table8_metric"] = table8_metric
    return Manifest(name=name, kind=kind, primary_metric=metric, extras=extras, **fields)


def missing_files_summary(items: pd.DataFrame, kind: str, root: Path, show: int = 10) -> str:
    """How many distinct image files are missing under ``root``, and the first ``show``."""
    spec = KINDS[kind]
    refs = [p for c in spec.image_columns for p in items[c]]
    refs += [p for c in spec.image_list_columns for ps in items[c] for p in ps]
    distinct = list(dict.fromkeys(r for r in refs if isinstance(r, str)))
    missing = [r for r in distinct if not (root / r).is_file()]
    listing = "\n".join(f"  - {r}" for r in missing[:show])
    more = f"\n  ... and {len(missing) - show} more" if len(missing) > show else ""
    return (f"{len(missing)} of {len(distinct)} distinct image files are missing under {root}:"
            f"\n{listing}{more}")


def finish(manifest: Manifest, items: pd.DataFrame, root: Path, findings: Findings, *,
           on_invalid: str, check_images: bool, image_hint: str = "",
           sources: dict[str, Any] | None = None) -> Benchmark:
    """Record findings in the manifest and validate through the format layer. ``sources``:
    the derived images' origins (:mod:`foilbench.data.loaders.sources`), for inspection."""
    manifest.extras["warnings"] = list(findings.messages)
    if findings.partial:
        manifest.partial = True
    try:
        bench = make_benchmark(manifest, items, root, on_invalid=on_invalid,
                               check_images=check_images)
    except BenchmarkError as e:
        if "missing_image" in str(e):
            raise BenchmarkError(f"{e}\n{missing_files_summary(items, manifest.kind, root)}"
                                 + (f"\n{image_hint}" if image_hint else "")) from None
        raise
    if findings.partial:
        bench.manifest.partial = True
    bench.image_sources = sources or None
    # runs are keyed by this checksum (resumable sweeps); images count only when checked
    bench.manifest.checksum = bench.compute_checksum(include_images=check_images)
    return bench


def embedded_image_bytes(value: Any) -> bytes | None:
    """The bytes of an image cell as Hugging Face Parquet stores it (``{bytes, path}``)."""
    if isinstance(value, Mapping):
        value = value.get("bytes")
    return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else None


def materialise_embedded(table: pd.DataFrame, columns: Iterable[str], out_dir: Path,
                         stem: str, write: bool, sources: dict[str, Any] | None = None
                         ) -> dict[str, list[str]]:
    """Image paths (relative to ``out_dir``) for HF-style embedded image columns.

    Names are deterministic (``<column>/<stem>_<row>.<ext>``) so text-only inspection
    (``write=False``) gives the same paths an evaluation run writes. Files that already exist
    are not rewritten, so a second load is cheap. ``sources`` (when given) receives each
    path's :class:`~foilbench.data.loaders.sources.EmbeddedImage`, which inspection checks.
    """
    from foilbench.data.loaders.sources import EmbeddedImage

    shards = table["_shard"].tolist() if "_shard" in table.columns else ["table"] * len(table)
    paths: dict[str, list[str]] = {}
    for col in columns:
        rels = []
        for row, value in enumerate(table[col]):
            data = embedded_image_bytes(value)
            ext = ".png" if data is None or data[:4] == b"\x89PNG" else ".jpg"
            rel = f"{col}/{stem}_{row:05d}{ext}"
            rels.append(rel)
            if sources is not None:
                sources[rel] = EmbeddedImage(f"{shards[row]}, column {col!r}, row {row}", data)
            target = out_dir / rel
            if write and data is not None and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        paths[col] = rels
    return paths
