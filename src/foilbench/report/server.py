"""``foilbench serve``: a local, read-only web app over the results database.

Routes (GET only; any other method is 405): ``/`` leaderboard, one table per benchmark
(models ranked within it, each number against that benchmark's chance; filter by benchmark,
edit type, tier; sortable), ``/model?fp=`` drill-down, ``/items?run=`` item browser,
``/image?run=&path=`` images, ``/api/leaderboard.json``. A Starlette app served by uvicorn,
like the review app: it binds to 127.0.0.1 unless told otherwise, and a trusted-host check
refuses a request addressed to any other name (400), so a web page that rebinds its own DNS
name to 127.0.0.1 cannot read the results from a browser tab. Every request opens the
database read-only (and briefly, so runs writing to it meanwhile only make it wait).

The database is input, not authority: a crafted one could name ``/`` as a run's benchmark root.
So ``/image`` serves a file only when (1) the run's stored items list exactly that path in an
image column of their kind, (2) it resolves, symlinks included, inside the run's resolved
root (:func:`foilbench.data.images.resolved_inside`, the rule ``run`` validates by), (3) that
root is not a file-system root, the home folder or above it
(:func:`foilbench.data.images.servable_root`), and (4) its type is an image type.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

import pandas as pd
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from foilbench.data.images import resolved_inside, servable_root
from foilbench.kinds import kind_of
from foilbench.report.app_server import HEADERS, AppServer
from foilbench.report.html import Raw, esc, fmt_pct, page, table
from foilbench.report.model_page import model_page
from foilbench.store.db import ResultsStore
from foilbench.store.repeats import stored_repeats
from foilbench.web_guards import SecurityHeaders, image_response, trusted_hosts

PAGE_SIZE = 40


def run_images(db_path: Path, run: str) -> tuple[Path | None, frozenset[str]]:
    """(servable resolved root or None, every image path the run's stored items list)."""
    with ResultsStore(db_path, read_only=True) as store:
        info = store.get_run(run)
        items = store.load_item_results(info["run_id"])
    kind = kind_of(info["benchmark_kind"])
    refs = {p for c in kind.image_columns if c in items.columns for p in items[c]}
    refs |= {p for c in kind.image_list_columns if c in items.columns
             for ps in items[c] if isinstance(ps, list) for p in ps}
    return servable_root(info["benchmark_root"]), frozenset(r for r in refs if isinstance(r, str))


def leaderboard_frame(db_path: Path, benchmark: str = "", group_by: str = "",
                      group_value: str = "") -> pd.DataFrame:
    """One row per (run, metric): overall metrics, or those of one metadata value."""
    with ResultsStore(db_path, read_only=True) as store:
        cols = set(store.con.execute("SELECT * FROM metrics LIMIT 0").df().columns)
        unit = "m.unit" if "unit" in cols else "NULL AS unit"  # a schema-1/2 store: none
        sql = ("SELECT r.run_id, r.model_spec, r.model_fingerprint, r.benchmark_name, "
               "r.benchmark_kind, r.config, r.created, m.metric, m.group_by, m.group_value, m.value, m.ci_low, m.ci_high, "
               f"m.chance, m.ties, m.n, {unit} FROM metrics m JOIN runs r USING (run_id) "
               "WHERE m.group_by = ? AND (? = '' OR m.group_value = ?) "
               "AND (? = '' OR r.benchmark_name = ?) ORDER BY m.value DESC")
        frame = store.con.execute(sql, [group_by, group_value, group_value, benchmark,
                                        benchmark]).df()
        kept, _ = stored_repeats(store.con)  # one row per (model, benchmark, settings)
        frame = frame[frame["run_id"].isin(kept)].reset_index(drop=True)
        overall = store.con.execute(
            "SELECT run_id, metric FROM metrics WHERE group_by = ''").df()
    return frame.assign(primary=[
        m == _primary(c, k, overall[overall["run_id"] == r]) for r, m, c, k in zip(
            frame["run_id"], frame["metric"], frame["config"], frame["benchmark_kind"],
            strict=True)]).drop(columns=["config", "benchmark_kind"])


def _primary(config, kind: str, metrics: pd.DataFrame) -> str:
    """The run's primary metric (:func:`foilbench.report.headline.primary_metric`)."""
    import json

    from foilbench.report.build import RunData
    from foilbench.report.headline import primary_metric

    info = {"config": json.loads(config) if isinstance(config, str) else {},
            "benchmark_kind": kind}
    return primary_metric(RunData(info, metrics, pd.DataFrame()))


def _choices(db_path: Path) -> dict[str, list[str]]:
    with ResultsStore(db_path, read_only=True) as store:
        con = store.con
        benches = [r[0] for r in con.execute(
            "SELECT DISTINCT benchmark_name FROM runs ORDER BY 1").fetchall()]
        vals = {g: [r[0] for r in con.execute(
            "SELECT DISTINCT group_value FROM metrics WHERE group_by = ? ORDER BY 1",
            [g]).fetchall()] for g in ("edit_type", "tier")}
    return {"benchmark": benches, **vals}


def _select(name: str, options: list[str], current: str) -> str:
    opts = ['<option value="">(all)</option>'] + [
        f'<option value="{esc(o)}"{" selected" if o == current else ""}>{esc(o)}</option>'
        for o in options]
    return f'<label>{esc(name)} <select name="{esc(name)}">{"".join(opts)}</select></label> '


def leaderboard_page(db_path: Path, q: dict[str, str]) -> str:
    """One table per benchmark, models ranked within it, each number beside its own chance.

    Benchmarks are never ranked against each other: their chance levels differ (50% for a
    two-way choice, 16.7% for Winoground's Group), so a raw percent from one says nothing
    next to another's. The ``above chance`` column is the distance to the benchmark's own
    chance, in points, with the interval's distance in brackets."""
    bench, edit, tier = q.get("benchmark", ""), q.get("edit_type", ""), q.get("tier", "")
    group_by, value = ("edit_type", edit) if edit else (("tier", tier) if tier else ("", ""))
    df = leaderboard_frame(db_path, bench, group_by, value)
    ch = _choices(db_path)
    form = ('<form method="get">' + _select("benchmark", ch["benchmark"], bench)
            + _select("edit_type", ch["edit_type"], edit) + _select("tier", ch["tier"], tier)
            + '<button type="submit">filter</button></form>')
    parts = []
    versus = {} if group_by else _comparisons(db_path, df)
    for k, (name, runs) in enumerate(df.groupby("benchmark_name", sort=True)):
        runs = runs.assign(_later=~runs["primary"]).sort_values(
            ["_later", "metric", "value"], ascending=[True, True, False], kind="stable")
        rows = [[Raw(f'<a href="/model?fp={quote(r.model_fingerprint)}">'
                     f'{esc(r.model_spec)}</a>'),
                 r.metric + (" *" if r.primary else ""), r.group_value or "",
                 Raw(f'<span data-v="{r.value:.6f}">{fmt_pct(r.value)}</span>'),
                 f"[{fmt_pct(r.ci_low)}, {fmt_pct(r.ci_high)}]", fmt_pct(r.chance),
                 _above(r.value, r.ci_low, r.ci_high, r.chance), int(r.ties), int(r.n),
                 _unit(r.unit), Raw(f'<a href="/items?run={quote(r.run_id)}">items</a>')]
                for r in runs.itertuples()]
        parts.append(f"<section><h2>{esc(name)}</h2>" + table(
            ["model", "metric", "subset", "%", "95% CI", "chance %", "above chance (pts)",
             "ties", "n", "unit of n", ""], rows, table_id=f"leaderboard-{k}",
            numeric=[False, False, False, True, False, True, True, True, True, False, False])
            + versus.get(name, "") + "</section>")
    note = ('<p class="note">Each benchmark is its own table: models are ranked within a '
            "benchmark, never across benchmarks, and each number is read against that "
            "benchmark's chance level. * marks the benchmark's primary metric (listed "
            "first).</p>")
    body = form + note + f'<div id="leaderboard">{"".join(parts) or "<p>no runs</p>"}</div>'
    return page("foilbench results", f"{db_path} · leaderboard", body)


def _comparisons(db_path: Path, df: pd.DataFrame) -> dict[str, str]:
    """benchmark name -> its model-vs-model table (paired, :mod:`foilbench.report.comparisons`)
    over the runs the leaderboard shows; none for a benchmark with one model."""
    if df.empty or df.groupby("benchmark_name")["run_id"].nunique().max() < 2:
        return {}
    ids = tuple(dict.fromkeys(df.sort_values(["created", "run_id"])["run_id"]))  # report's A, B
    stamp = tuple(p.stat().st_mtime_ns if p.exists() else 0  # the WAL holds recent writes
                  for p in (db_path, db_path.with_name(db_path.name + ".wal")))
    return dict(_comparison_tables(str(db_path), stamp, ids))


@lru_cache(maxsize=8)
def _comparison_tables(db_path: str, stamp: tuple[int, ...], ids: tuple[str, ...]
                       ) -> tuple[tuple[str, str], ...]:
    """Cached per (database, its modification time, runs): the bootstrap is not redone on
    every request while the store is unchanged."""
    from foilbench.report import comparisons as cmp
    from foilbench.report.build import RunData

    with ResultsStore(db_path, read_only=True) as store:  # only what the pairing reads
        runs = [RunData(store.get_run(r), store.load_metrics(r), store.load_item_results(r))
                for r in ids]
    deltas = cmp.comparisons(runs)
    if deltas.empty:
        return ()
    return tuple((str(name), "<h3>Model vs model (paired, primary metric)</h3>"
                  + table(cmp.HEADERS[1:], [r[1:] for r in cmp.rows(part)],
                          numeric=[False, False, True, False, True, False, True, False])
                  + f'<p class="note">{esc(cmp.NOTE)}</p>')
                 for name, part in deltas.groupby("benchmark", sort=False))


def _unit(unit) -> str:
    """A row's unit of n (:mod:`foilbench.stats.units`); rows stored before units: none."""
    return unit if isinstance(unit, str) and unit else "not recorded"


def _above(value: float, low: float, high: float, chance: float) -> str:
    """``+12.5 [+3.0, +21.0]``: points above chance, the interval's too (– without chance)."""
    if chance is None or chance != chance:
        return "–"

    def pts(x: float) -> str:
        return "–" if x is None or x != x else f"{100 * (x - chance):+.1f}"

    return f"{pts(value)} [{pts(low)}, {pts(high)}]"


def items_page(db_path: Path, run: str, q: dict[str, str]) -> str:
    from foilbench.report.examples import card_for, choice_card

    with ResultsStore(db_path, read_only=True) as store:
        info = store.get_run(run)
        items = store.load_item_results(run)
    if q.get("edit_type"):
        items = items[items.get("edit_type", pd.Series(dtype=str)) == q["edit_type"]]
    outcome = "group" if "group" in items.columns else "r1"
    if q.get("outcome") in ("pass", "fail") and outcome in items.columns:
        items = items[(items[outcome] >= 1) == (q["outcome"] == "pass")]
    page_no = max(0, int(q.get("page", "0") or 0))
    chunk = items.iloc[page_no * PAGE_SIZE:(page_no + 1) * PAGE_SIZE]
    root = Path(info["benchmark_root"])
    card = card_for(info["benchmark_kind"]) or choice_card
    cards = "".join(card(r, root) for _, r in chunk.iterrows())
    nav = (f'<p>{len(items)} items · page {page_no + 1} · '
           f'<a href="/items?run={quote(info["run_id"])}&page={page_no + 1}">next</a> · '
           f'<a href="/items?run={quote(info["run_id"])}&outcome=fail">failures only</a></p>')
    return page(f"items of {info['model_spec']}", info["benchmark_name"],
                nav + f'<div class="items">{cards}</div>')


class ItemPages:
    """``/items`` pages, each built once: a stored run never changes, and building one
    (opening the store, reading every item, drawing the thumbnails) took 1.8 s of median
    answer under 50 clients. Concurrent requests for one page wait for its one build; at
    most :data:`MAX_PAGES` pages are kept (least recently used go first)."""

    MAX_PAGES = 256

    def __init__(self) -> None:
        self._pages: dict[tuple, str] = {}
        self._locks: dict[tuple, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, db_path: Path, run: str, q: dict[str, str]) -> str:
        key = (run, q.get("edit_type", ""), q.get("outcome", ""), q.get("page", "0") or "0")
        with self._guard:
            if key in self._pages:
                self._pages[key] = self._pages.pop(key)  # most recently used last
                return self._pages[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._pages:
                    return self._pages[key]
            built = items_page(db_path, run, q)
            with self._guard:
                self._pages[key] = built
                self._locks.pop(key, None)
                while len(self._pages) > self.MAX_PAGES:
                    self._pages.pop(next(iter(self._pages)))
            return built


def create_app(db_path: str | Path, host: str = "127.0.0.1") -> Starlette:
    """The Starlette app: GET routes only (any other method is 405), a trusted-host check
    (requests addressed to another name, as a DNS-rebinding page sends them, get 400), and
    security headers on every response."""
    db_path = Path(db_path)
    images_of: dict[str, tuple[Path | None, frozenset[str]]] = {}
    pages = ItemPages()

    def html(build: Callable[[Request], str]) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                return HTMLResponse(build(request))
            except Exception as e:  # a bad request must not kill the server
                return PlainTextResponse(f"error: {e}", status_code=400)
        return endpoint

    def leaderboard_json(request: Request) -> Response:
        try:
            df = leaderboard_frame(db_path, request.query_params.get("benchmark", ""))
        except Exception as e:
            return PlainTextResponse(f"error: {e}", status_code=400)
        return Response(df.to_json(orient="records", date_format="iso"),
                        media_type="application/json")

    def image(request: Request) -> Response:
        run, rel = request.query_params.get("run", ""), request.query_params.get("path", "")
        try:
            if run not in images_of:  # a stored run never changes
                if len(images_of) > 64:
                    images_of.clear()
                images_of[run] = run_images(db_path, run)
        except Exception:
            return PlainTextResponse("not found", status_code=404)
        root, listed = images_of[run]
        path = resolved_inside(root, rel) if root is not None and rel in listed else None
        if path is None or not path.is_file():
            return PlainTextResponse("not found", status_code=404)
        return image_response(path)  # by its bytes: never an .html or .svg as a page

    routes = [
        Route("/", html(lambda r: leaderboard_page(db_path, dict(r.query_params)))),
        Route("/model", html(lambda r: model_page(db_path, r.query_params.get("fp", "")))),
        Route("/items", html(lambda r: pages.get(db_path, r.query_params.get("run", ""),
                                                 dict(r.query_params)))),
        Route("/image", image),
        Route("/api/leaderboard.json", leaderboard_json),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
    ]
    return Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=trusted_hosts(host)),
        Middleware(SecurityHeaders, policy=HEADERS)])


def make_server(db_path: str | Path, host: str = "127.0.0.1", port: int = 8765) -> AppServer:
    """A ready-to-run server (call ``serve_forever``); port 0 picks a free port. The database
    is opened once first, so a missing file, a file that is not a results store or one of a
    newer schema is refused before anything listens."""
    with ResultsStore(db_path, read_only=True):
        pass
    return AppServer(create_app(db_path, host), host, port)
