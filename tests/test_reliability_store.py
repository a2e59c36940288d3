"""Issue 13, the results store: schema versions (newer refused, older migrated explicitly), a
file that is not a store, the lock a second process holds (bounded wait with a message), and
benchmark_root stored absolute so report and serve work from another directory."""

from __future__ import annotations

import subprocess
import sys
import threading

import duckdb
import pytest

from _reliability import choice_folder, fb
from foilbench import runner
from foilbench.report import write_report
from foilbench.store.connect import StoreError
from foilbench.store.db import ResultsStore
from foilbench.store.schema import SCHEMA_VERSION

HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.readline()
con.close()
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def stored(env):
    """A store holding one finished run of tiny-random on a small choice folder."""
    outcome = runner.run(["tiny-random"], [str(choice_folder(env / "bench", 6))], env / "out",
                         report=False, n_boot=100, progress=False, use_cache=False)
    return outcome


def _version(db) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        con.close()


def test_a_newer_store_is_refused_for_reading_and_writing(stored, env, capsys):
    db = stored.db_path
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    before = db.read_bytes()
    for read_only in (True, False):
        with pytest.raises(StoreError, match=f"schema version 99, newer than the schema "
                                             f"{SCHEMA_VERSION}"):
            ResultsStore(db, read_only=read_only)
    code, _, err = fb(["run", "--model", "tiny-random", "--benchmark", str(env / "bench"),
                       "--out", str(env / "out"), "--n-boot", "100", "--no-report", "--quiet",
                       "--no-cache"], capsys)
    assert code == 2 and "schema version 99" in err and "nothing was written" in err
    code, _, err = fb(["show", "--db", str(db)], capsys)
    assert code == 2 and "schema version 99" in err
    assert _version(db) == "99" and db.read_bytes() == before  # not relabelled, not written


def test_an_older_store_is_read_as_is_and_migrated_explicitly_when_written(stored, env):
    db = stored.db_path
    con = duckdb.connect(str(db))  # what a schema-1 store looked like
    for table in ("compass_tables", "blind_reference", "sweep_cells"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("ALTER TABLE runs DROP COLUMN eval_stats")
    con.execute("ALTER TABLE runs DROP COLUMN environment")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    with ResultsStore(db, read_only=True) as store:  # reading changes nothing
        assert store.schema_version == 1 and len(store.list_runs()) == 1
        assert store.load_blind_reference("sha256:x") is None
    assert _version(db) == "1"
    told: list[str] = []
    with ResultsStore(db, notify=told.append) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.has_table("compass_tables") and store.has_table("blind_reference")
        assert store.has_table("sweep_cells")
        assert store.get_run(stored.run_ids[0])["eval_stats"] == {}
        assert store.get_run(stored.run_ids[0])["environment"] == {}
    assert told == [f"results store {db}: migrating schema 1 -> 2 (adds tables compass_tables "
                    "and blind_reference; columns runs.config_hash, runs.eval_stats, "
                    "item_results.item_index)",
                    f"results store {db}: migrating schema 2 -> 3 (adds column metrics.unit "
                    "(the unit of n of each row; older rows keep none))",
                    f"results store {db}: migrating schema 3 -> 4 (adds column "
                    "runs.environment (library versions and device of each run; older rows "
                    "keep none))"]
    assert _version(db) == str(SCHEMA_VERSION)
    with ResultsStore(db, notify=told.append):
        pass
    assert len(told) == 3  # migrated once


def test_a_file_that_is_not_a_store_is_a_clear_error(env, capsys):
    out = env / "out"
    out.mkdir()
    (out / "foilbench.duckdb").write_text("hello, not a database\n")
    code, _, err = fb(["run", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--out",
                       str(out), "--n-boot", "100", "--no-report", "--quiet"], capsys)
    assert code == 2 and "foilbench.duckdb is not a DuckDB database" in err
    for cmd in (["show"], ["report", "--out", str(env / "r.html")]):
        code, _, err = fb([*cmd, "--db", str(out / "foilbench.duckdb")], capsys)
        assert code == 2 and "is not a DuckDB database" in err
    other = env / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE sales (x INTEGER)")
    con.close()
    for read_only in (True, False):
        with pytest.raises(StoreError, match="not a foilbench results store .*sales"):
            ResultsStore(other, read_only=read_only)


def _hold(db):
    """A second process holding ``db`` open for writing until told to let go."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    return holder


def _release(holder) -> None:
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.wait() == 0


@pytest.mark.parametrize("read_only", [True, False], ids=["reader", "writer"])
def test_a_locked_store_is_waited_for_with_a_message_then_given_up_on(stored, env, read_only):
    db = stored.db_path
    holder = _hold(db)
    try:
        with pytest.raises(StoreError, match=rf"still in use by process {holder.pid} after "
                                             r"waiting 0 s"):
            ResultsStore(db, read_only=read_only, wait_s=0)
        told: list[str] = []
        waited = threading.Event()
        result: dict = {}

        def reader() -> None:
            def notify(msg: str) -> None:
                told.append(msg)
                waited.set()
            with ResultsStore(db, read_only=read_only, wait_s=600, notify=notify) as store:
                result["runs"] = len(store.list_runs())

        thread = threading.Thread(target=reader)
        thread.start()
        assert waited.wait(600)  # the reader said it is waiting ...
        assert told == [f"the results store {db} is in use by process {holder.pid}; waiting "
                        "for it (at most 600 s)"]
    finally:
        _release(holder)
    thread.join()
    assert result == {"runs": 1}  # ... and read once the holder let go


def test_benchmark_root_is_stored_absolute_and_resolved(env, monkeypatch):
    choice_folder(env / "work" / "bench", 6)
    (env / "link").symlink_to(env / "work", target_is_directory=True)
    monkeypatch.chdir(env / "link")
    outcome = runner.run(["tiny-random"], ["./bench"], "out", report=False, n_boot=100,
                         progress=False, use_cache=False)
    with ResultsStore(env / "link" / "out" / "foilbench.duckdb", read_only=True) as store:
        root = store.get_run(outcome.run_ids[0])["benchmark_root"]
    assert root == str((env / "work" / "bench").resolve())
    monkeypatch.chdir(env)  # report from another directory still finds the images
    html = write_report(env / "work" / "out" / "foilbench.duckdb", [], env / "r.html").read_text()
    assert "<img" in html and "image not found" not in html
