"""The results store: one DuckDB file (default ``./foilbench-runs/foilbench.duckdb``).

Tables are described in :mod:`foilbench.store.schema`. A run (one model on one benchmark) is
written in ONE transaction: either all its rows (run, items, outcomes, metrics) are committed or
none are, so a crash or an error midway never leaves a half-written run behind.

Opening (:mod:`foilbench.store.connect`) waits while another process holds the file, refuses a
file that is not a store or whose schema is newer, and migrates an older one when opened for
writing. Open it for as short a time as possible: several processes share one store
(:class:`foilbench.store.shared.SharedStore` opens it per call).
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from foilbench import __version__
from foilbench.errors import FoilbenchError
from foilbench.scoring.result import EvalResult
from foilbench.store.connect import Notify, StoreError, open_connection, prepare_schema
from foilbench.store.sweeps import write_sweep
from foilbench.table_records import table_records

DEFAULT_DB = Path("foilbench-runs") / "foilbench.duckdb"
# the provenance entries runs.environment keeps (foilbench.provenance.collect_provenance)
ENVIRONMENT_KEYS = ("python", "platform", "libraries", "device", "gpu")


class RunNotFoundError(FoilbenchError):
    """No stored run matches, or a prefix matches several."""


def new_batch_id() -> str:
    """Id for one command invocation that sorts by start time to the millisecond, e.g.
    ``20261130-021502.481-3f9a`` (the random tail keeps concurrent invocations apart)."""
    now = datetime.now(timezone.utc)
    return now.strftime("%Y%m%d-%H%M%S.") + f"{now.microsecond // 1000:03d}-{uuid.uuid4().hex[:4]}"


_PLAIN = frozenset((str, int, bool, type(None)))


def _clean(value: Any) -> Any:
    """JSON-safe: numpy to Python, NaN to null, arrays to lists. A flat record whose keys are
    ``str`` and whose values are exactly ``str``, ``int``, ``bool``, ``None`` or finite
    ``float`` (the usual stored item) is already clean: copied as it is, without the walk
    below (a run stores one per item)."""
    if type(value) is dict and all(
            type(k) is str and (type(v) in _PLAIN or (type(v) is float and math.isfinite(v)))
            for k, v in value.items()):
        return dict(value)
    return _clean_any(value)


def _clean_any(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [_clean(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def to_json(value: Any, *, sort_keys: bool = True) -> str:
    """JSON text of ``value`` (cleaned as above); ``sort_keys=False`` keeps dict order, e.g.
    the column order of table records."""
    return json.dumps(_clean(value), sort_keys=sort_keys, ensure_ascii=False)


def json_texts(values: Iterable[Any], *, sort_keys: bool = True) -> list[str]:
    """:func:`to_json` of each value, the same text, from one encoder made once for all of
    them (``json.dumps`` with options makes one per call; a run stores one text per item)."""
    encode = json.JSONEncoder(sort_keys=sort_keys, ensure_ascii=False).encode
    return [encode(_clean(v)) for v in values]


def _remove_new_store(path: Path) -> None:
    """Remove a store file this process was creating when creation failed (a full disk left
    it empty or without its tables; 'Could not read enough bytes' on the next open)."""
    for leftover in (path, path.with_name(path.name + ".wal")):
        try:
            leftover.unlink(missing_ok=True)
        except OSError:
            pass


def _raise_full_disk(err: BaseException, path: Path, created: bool) -> None:
    """A full or read-only disk met while opening or creating the store, in one sentence."""
    from foilbench.staged import disk_sentence

    sentence = disk_sentence(err, path, "the results store",
                             "no store was left there" if created else "the store is unchanged")
    if sentence is not None:
        raise StoreError(sentence) from None


class ResultsStore:
    """Read and write runs. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False,
                 wait_s: float | None = None, notify: Notify | None = None) -> None:
        """Open the store at ``path``; ``wait_s`` bounds the wait for a lock (default
        ``$FOILBENCH_STORE_WAIT``), ``notify`` receives the one "waiting" or "migrating"
        message (default: stderr)."""
        self.path = Path(path) if path is not None else DEFAULT_DB
        if read_only and not self.path.exists():
            raise RunNotFoundError(f"no results database at {self.path} (run `foilbench run` "
                                   "first, or pass --db PATH)")
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder; the results store is a file (e.g. "
                             f"{self.path / 'foilbench.duckdb'})")
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create the folder of the results store {self.path}: "
                                 f"{e.strerror or e}") from None
        created = not read_only and not self.path.exists()
        try:
            self.con = open_connection(self.path, read_only=read_only, wait_s=wait_s,
                                       notify=notify)
        except BaseException as e:
            if created:
                _remove_new_store(self.path)
            _raise_full_disk(e, self.path, created)
            raise
        try:
            self.schema_version = prepare_schema(self.con, self.path, read_only=read_only,
                                                 notify=notify)
        except BaseException as e:
            self.con.close()
            if created:  # a full disk while creating it: leave no store that cannot open
                _remove_new_store(self.path)
            _raise_full_disk(e, self.path, created)
            raise

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ----------------------------------------------------------------------------
    def write_run(self, result: EvalResult, metrics: pd.DataFrame, provenance: dict[str, Any],
                  *, batch_id: str | None = None, compass: dict[str, Any] | None = None) -> str:
        """Store one run atomically and return its id; ``compass`` (the run's COMPASS tables,
        JSON-able) goes into ``compass_tables`` in the same transaction."""
        run_id = uuid.uuid4().hex[:16]
        run_row = self._run_row(run_id, batch_id or new_batch_id(), result, provenance)
        items = self._item_frame(run_id, result)
        outcomes = self._outcome_frame(run_id, result)
        metric_rows = metrics.assign(run_id=run_id)
        self.con.execute("BEGIN TRANSACTION")
        try:
            self._insert_run(run_row)
            self._insert_frame("item_results", items)
            self._insert_frame("item_outcomes", outcomes)
            self._insert_metrics(metric_rows)
            if compass is not None:
                self.con.execute("INSERT INTO compass_tables VALUES (?, ?)",
                                 [run_id, to_json(compass, sort_keys=False)])
            self.con.execute("COMMIT")
        except BaseException:
            try:
                self.con.execute("ROLLBACK")
            except Exception:  # a failed COMMIT (a full disk) has ended the transaction
                pass
            raise
        return run_id

    @staticmethod
    def _run_row(run_id: str, batch_id: str, result: EvalResult,
                 prov: dict[str, Any]) -> dict[str, Any]:
        bench, model = result.benchmark, result.model
        created = datetime.fromisoformat(prov["created"]).astimezone(timezone.utc)
        return {
            "run_id": run_id, "batch_id": batch_id, "created": created.replace(tzinfo=None),
            "package_version": prov.get("package_version"),
            "git_revision": prov.get("git_revision"), "model_spec": model.spec,
            "model_fingerprint": model.fingerprint, "model_family": model.family,
            "score_kind": model.score_kind, "benchmark_name": bench.name,
            "benchmark_version": bench.manifest.version, "benchmark_kind": bench.kind,
            "benchmark_checksum": bench.manifest.checksum,
            "benchmark_root": str(Path(bench.root).resolve()),  # serve/report run elsewhere
            "partial": bool(bench.manifest.partial), "n_items": len(bench),
            "seed": prov.get("seed"), "n_boot": prov.get("n_boot"),
            "tie_policy": prov.get("tie_policy"), "ci_method": prov.get("ci_method"),
            "config": to_json(prov.get("config", {})), "config_hash": prov.get("config_hash"),
            "eval_stats": to_json(result.stats),
            "environment": to_json({k: prov.get(k) for k in ENVIRONMENT_KEYS}),
        }

    @staticmethod
    def _item_frame(run_id: str, result: EvalResult) -> pd.DataFrame:
        items = result.benchmark.items
        return pd.DataFrame({
            "run_id": run_id,
            "item_index": np.arange(len(items), dtype=np.int32),
            "item_id": items["item_id"].astype(str).to_numpy(),
            "scores": [np.asarray(s, dtype=np.float64).tolist() for s in result.scores],
            "item": json_texts(table_records(items)),
        })

    @staticmethod
    def _outcome_frame(run_id: str, result: EvalResult) -> pd.DataFrame:
        ids = result.benchmark.items["item_id"].astype(str).to_numpy()
        frames = [pd.DataFrame({"run_id": run_id, "item_id": ids, "metric": m,
                                "outcome": np.asarray(result.outcomes[m], dtype=np.float64),
                                "tie": np.asarray(result.ties[m], dtype=bool),
                                "chance": np.asarray(result.chance[m], dtype=np.float64)})
                  for m in result.metrics]
        return pd.concat(frames, ignore_index=True)

    def _insert_run(self, row: dict[str, Any]) -> None:
        cols = list(row)
        self.con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES "
                         f"({', '.join('?' for _ in cols)})", [row[c] for c in cols])

    def _insert_frame(self, table: str, frame: pd.DataFrame) -> None:
        name = f"_incoming_{table}"
        self.con.register(name, frame)
        try:
            cols = ", ".join(frame.columns)
            self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")
        finally:
            self.con.unregister(name)

    def _insert_metrics(self, frame: pd.DataFrame) -> None:
        cols = ["run_id", "metric", "group_by", "group_value", "value", "k", "n", "ci_low",
                "ci_high", "ci_method", "chance", "ties"]
        if "unit" in frame.columns:  # every runner-made table; a caller's own may lack it
            cols.append("unit")
        self._insert_frame("metrics", frame[cols])

    def write_sweep(self, sweep_id: str, cells: pd.DataFrame) -> None:
        """Insert one sweep's cells (see :mod:`foilbench.store.sweeps`)."""
        write_sweep(self.con, sweep_id, cells)

    def write_blind_reference(self, checksum: str, audit_key: str, *, benchmark_name: str,
                              n_items: int, reference: dict[str, Any],
                              audit: dict[str, Any] | None, note: str | None = None) -> None:
        """Store (or replace) the blind audit of one benchmark; see ``store/schema.py``."""
        created = datetime.now(timezone.utc).replace(tzinfo=None)
        self.con.execute(
            "INSERT OR REPLACE INTO blind_reference VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [checksum, audit_key, created, __version__, benchmark_name, n_items,
             to_json(reference), None if audit is None else to_json(audit), note])

    # --- reading ----------------------------------------------------------------------------
    def has_table(self, name: str) -> bool:
        """Whether ``name`` exists (a read-only store written by an older schema may lack it)."""
        row = self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                               [name]).fetchone()
        return row is not None and row[0] > 0

    def load_compass(self, run: str) -> dict[str, Any] | None:
        """The stored COMPASS tables of a run (records keep their column order), or None (not
        a COMPASS run, or stored before schema 2, or written without the runner)."""
        run_id = self.resolve_run_id(run)
        if not self.has_table("compass_tables"):
            return None
        hit = self.con.execute("SELECT tables FROM compass_tables WHERE run_id = ?",
                               [run_id]).fetchone()
        return json.loads(hit[0]) if hit else None

    def load_blind_reference(self, checksum: str, *, audit_key: str | None = None,
                             n_items: int | None = None) -> dict[str, Any] | None:
        """The newest stored blind audit of a benchmark checksum (narrowed by ``audit_key``
        and/or ``n_items`` when given) as ``{reference, audit, note, audit_key, n_items,
        benchmark_name, created, package_version}``, or None."""
        if not self.has_table("blind_reference"):
            return None
        sql = "SELECT * FROM blind_reference WHERE benchmark_checksum = ?"
        args: list[Any] = [checksum]
        if audit_key is not None:
            sql, args = sql + " AND audit_key = ?", [*args, audit_key]
        if n_items is not None:
            sql, args = sql + " AND n_items = ?", [*args, n_items]
        frame = self.con.execute(sql + " ORDER BY created DESC LIMIT 1", args).df()
        if frame.empty:
            return None
        row = frame.iloc[0].to_dict()
        for col in ("reference", "audit"):
            row[col] = json.loads(row[col]) if isinstance(row[col], str) else None
        row["note"] = row["note"] if isinstance(row["note"], str) else None
        return row

    def list_runs(self) -> pd.DataFrame:
        return self.con.execute(
            "SELECT run_id, batch_id, created, model_spec, benchmark_name, n_items, partial "
            "FROM runs ORDER BY created, run_id").df()

    def resolve_run_id(self, run: str) -> str:
        """Full id for a run id or unique prefix."""
        hits = [r[0] for r in self.con.execute(
            "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id",
            [run]).fetchall()]
        if not hits:
            raise RunNotFoundError(f"no stored run matches {run!r} in {self.path}")
        if len(hits) > 1:
            raise RunNotFoundError(f"run prefix {run!r} is ambiguous: {', '.join(hits[:10])}")
        return hits[0]

    def get_run(self, run: str) -> dict[str, Any]:
        """The run's provenance row (JSON columns parsed) by id or unique prefix."""
        run_id = self.resolve_run_id(run)
        frame = self.con.execute("SELECT * FROM runs WHERE run_id = ?", [run_id]).df()
        row = frame.iloc[0].to_dict()
        for col in ("config", "eval_stats", "environment"):
            row[col] = json.loads(row[col]) if isinstance(row.get(col), str) else {}
        return row

    def load_metrics(self, run: str) -> pd.DataFrame:
        """The run's metric rows; ``unit`` is None on rows stored before schema 3."""
        run_id = self.resolve_run_id(run)
        frame = self.con.execute(
            "SELECT * EXCLUDE (run_id) FROM metrics WHERE run_id = ? "
            "ORDER BY metric, group_by, group_value", [run_id]).df()
        if "unit" not in frame.columns:  # a schema-1/2 store opened read-only
            frame["unit"] = None
        return frame

    def load_item_results(self, run: str) -> pd.DataFrame:
        """One row per item in benchmark order: the item's columns (payload and metadata),
        ``scores``, and per metric ``<metric>`` (outcome), ``tie_<metric>``, ``chance_<metric>``."""
        run_id = self.resolve_run_id(run)
        rows = self.con.execute(
            "SELECT item_id, scores, item FROM item_results WHERE run_id = ? "
            "ORDER BY item_index", [run_id]).fetchall()
        # one parse of all records (a JSON array of them) instead of a call per item
        table = pd.DataFrame(json.loads("[" + ",".join(r[2] for r in rows) + "]"))
        table["item_id"] = [r[0] for r in rows]
        table["scores"] = [np.asarray(r[1], dtype=np.float64) for r in rows]
        long = self.con.execute(
            "SELECT item_id, metric, outcome, tie, chance FROM item_outcomes WHERE run_id = ?",
            [run_id]).df()
        for metric, part in long.groupby("metric", sort=False):
            part = part.set_index("item_id")
            table[metric] = table["item_id"].map(part["outcome"])
            table[f"tie_{metric}"] = table["item_id"].map(part["tie"]).astype(bool)
            table[f"chance_{metric}"] = table["item_id"].map(part["chance"])
        return table

    def find_run(self, model_fingerprint: str, benchmark_checksum: str,
                 config_hash: str) -> str | None:
        """The latest complete run with these keys, or None (for resumable sweeps)."""
        hit = self.con.execute(
            "SELECT run_id FROM runs WHERE model_fingerprint = ? AND benchmark_checksum = ? "
            "AND config_hash = ? ORDER BY created DESC LIMIT 1",
            [model_fingerprint, benchmark_checksum, config_hash]).fetchone()
        return hit[0] if hit else None
