"""Issue 13, ``foilbench serve``: a missing --db is refused at start, a network --host prints a
warning, and a crafted database cannot make it hand out files: only images the run's stored
items list, inside the run's resolved root, and never from a root such as ``/``."""

from __future__ import annotations

import json
from urllib.error import HTTPError

import duckdb
import pytest

from _core_helpers import solid
from _reliability import choice_folder, fb, serving
from foilbench import runner
from foilbench.report.server import make_server
from foilbench.store.db import RunNotFoundError


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def db(env):
    outcome = runner.run(["tiny-random"], [str(choice_folder(env / "bench", 6))], env / "out",
                         report=False, n_boot=100, progress=False, use_cache=False)
    return outcome.db_path


def test_a_missing_db_is_refused_at_start(env, capsys):
    with pytest.raises(RunNotFoundError, match="no results database"):
        make_server(env / "nope.duckdb", "127.0.0.1", 0)
    code, _, err = fb(["serve", "--db", env / "nope.duckdb", "--port", "0"], capsys)
    assert code == 2 and "no results database at" in err and "serving" not in err


class _Stopped:
    server_address = ("0.0.0.0", 1)

    def serve_forever(self):
        raise KeyboardInterrupt

    def server_close(self):
        pass


def test_a_network_host_prints_a_warning(db, capsys, monkeypatch):
    import foilbench.report.server as server_mod

    monkeypatch.setattr(server_mod, "make_server", lambda *a, **k: _Stopped())  # binds nothing
    code, _, err = fb(["serve", "--db", db, "--host", "0.0.0.0"], capsys)
    assert code == 0 and "--host 0.0.0.0 makes this app reachable from the network" in err
    code, _, err = fb(["serve", "--db", db, "--host", "127.0.0.1"], capsys)
    assert code == 0 and "reachable from the network" not in err


def _craft(db, root: str, extra_image: str) -> None:
    """Point every run at ``root`` and list ``extra_image`` as the first item's image."""
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET benchmark_root = ?", [root])
    index, item = con.execute("SELECT item_index, item FROM item_results ORDER BY item_index "
                              "LIMIT 1").fetchone()
    row = json.loads(item)
    row["image"] = extra_image
    con.execute("UPDATE item_results SET item = ? WHERE item_index = ?", [json.dumps(row), index])
    con.close()


def _status(get, path: str) -> int:
    try:
        return get(path).status
    except HTTPError as e:
        return e.code


def test_a_crafted_root_of_slash_serves_nothing(db, env):
    secret = env / "private" / solid(env / "private" / "secret.png", "red")
    rel = str(secret.resolve()).lstrip("/")
    _craft(db, "/", rel)  # the crafted items even list the file
    with serving(db) as (get, run_id):
        assert _status(get, f"/image?run={run_id}&path={rel}") == 404
        assert _status(get, f"/image?run={run_id}&path=red.png") == 404
        page = get(f"/items?run={run_id}").read().decode()
        assert "image not found" in page and "data:image/png" not in page


def test_only_listed_images_inside_the_root_are_served(db, env):
    bench = env / "bench"
    solid(bench / "unlisted.png", "green")
    with serving(db) as (get, run_id):
        assert _status(get, f"/image?run={run_id}&path=red.png") == 200
        assert get(f"/image?run={run_id}&path=red.png").read()[:4] == b"\x89PNG"
        assert _status(get, f"/image?run={run_id}&path=unlisted.png") == 404
        assert _status(get, f"/image?run={run_id}&path=../bench/red.png") == 404
        assert _status(get, f"/image?run={run_id}&path=items.parquet") == 404
    outside = env / "outside"
    solid(outside / "x.png", "blue")
    _craft(db, str(bench), "../outside/x.png")  # listed, but outside the root
    with serving(db) as (get, run_id):
        assert _status(get, f"/image?run={run_id}&path=../outside/x.png") == 404
