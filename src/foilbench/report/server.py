"""``foilbench serve``: a local, read-only web app over the results database.

Routes: ``/`` leaderboard (filter by benchmark, edit type, tier; sortable), ``/model?fp=``
drill-down, ``/items?run=`` item browser, ``/image?run=&path=`` images, ``/api/leaderboard.json``.
Binds to 127.0.0.1 unless told otherwise; every request opens the database read-only (and
briefly, so runs writing to it meanwhile only make it wait).

The database is input, not authority: a crafted one could name ``/`` as a run's benchmark root.
So ``/image`` serves a file only when (1) the run's stored items list exactly that path in an
image column of their kind, (2) it resolves, symlinks included, inside the run's resolved
root (:func:`foilbench.data.images.resolved_inside`, the rule ``run`` validates by), (3) that
root is not a file-system root, the home folder or above it
(:func:`foilbench.data.images.servable_root`), and (4) its type is an image type.
"""

from __future__ import annotations

import mimetypes
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import pandas as pd

from foilbench.data.images import resolved_inside, servable_root
from foilbench.kinds import kind_of
from foilbench.report.html import Raw, esc, fmt_pct, page, table
from foilbench.store.db import ResultsStore

PAGE_SIZE = 40
LOOPBACK = ("127.0.0.1", "localhost", "::1")


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
        sql = ("SELECT r.run_id, r.model_spec, r.model_fingerprint, r.benchmark_name, "
               "r.created, m.metric, m.group_by, m.group_value, m.value, m.ci_low, m.ci_high, "
               "m.chance, m.ties, m.n FROM metrics m JOIN runs r USING (run_id) "
               "WHERE m.group_by = ? AND (? = '' OR m.group_value = ?) "
               "AND (? = '' OR r.benchmark_name = ?) ORDER BY m.value DESC")
        return store.con.execute(sql, [group_by, group_value, group_value, benchmark,
                                       benchmark]).df()


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
    bench, edit, tier = q.get("benchmark", ""), q.get("edit_type", ""), q.get("tier", "")
    group_by, value = ("edit_type", edit) if edit else (("tier", tier) if tier else ("", ""))
    df = leaderboard_frame(db_path, bench, group_by, value)
    ch = _choices(db_path)
    form = ('<form method="get">' + _select("benchmark", ch["benchmark"], bench)
            + _select("edit_type", ch["edit_type"], edit) + _select("tier", ch["tier"], tier)
            + '<button type="submit">filter</button></form>')
    rows = [[Raw(f'<a href="/model?fp={quote(r.model_fingerprint)}">{esc(r.model_spec)}</a>'),
             r.benchmark_name, r.metric, r.group_value or "",
             Raw(f'<span data-v="{r.value:.6f}">{fmt_pct(r.value)}</span>'),
             f"[{fmt_pct(r.ci_low)}, {fmt_pct(r.ci_high)}]", fmt_pct(r.chance), int(r.ties),
             int(r.n), Raw(f'<a href="/items?run={quote(r.run_id)}">items</a>')]
            for r in df.itertuples()]
    body = form + table(["model", "benchmark", "metric", "subset", "%", "95% CI", "chance %",
                         "ties", "n", ""], rows, table_id="leaderboard",
                        numeric=[False, False, False, False, True, False, True, True, True,
                                 False])
    return page("foilbench results", f"{db_path} · leaderboard", body)


def model_page(db_path: Path, fp: str) -> str:
    with ResultsStore(db_path, read_only=True) as store:
        runs = store.con.execute(
            "SELECT run_id, model_spec, benchmark_name, created FROM runs "
            "WHERE model_fingerprint = ? ORDER BY created", [fp]).df()
        parts = []
        for r in runs.itertuples():
            m = store.load_metrics(r.run_id)
            m = m[m["group_by"].isin(["", "edit_type", "tier", "n_objects", "condition"])]
            rows = [[x.group_by or "overall", x.group_value or "", x.metric, fmt_pct(x.value),
                     f"[{fmt_pct(x.ci_low)}, {fmt_pct(x.ci_high)}]", int(x.n)]
                    for x in m.itertuples()]
            parts.append(f"<section><h2>{esc(r.benchmark_name)}</h2>"
                         f'<p><a href="/items?run={quote(r.run_id)}">browse items</a></p>'
                         + table(["by", "value", "metric", "%", "95% CI", "n"], rows)
                         + "</section>")
    title = runs["model_spec"].iloc[0] if len(runs) else fp
    return page(f"model {title}", f"fingerprint {fp}", "".join(parts) or "<p>no runs</p>")


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


class Handler(BaseHTTPRequestHandler):
    db_path: Path = Path()
    images_of: dict[str, tuple[Path | None, frozenset[str]]] = {}

    def log_message(self, fmt: str, *args) -> None:  # quiet by default
        pass

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        try:
            if url.path == "/":
                self._html(leaderboard_page(self.db_path, q))
            elif url.path == "/model":
                self._html(model_page(self.db_path, q.get("fp", "")))
            elif url.path == "/items":
                self._html(items_page(self.db_path, q.get("run", ""), q))
            elif url.path == "/image":
                self._image(q.get("run", ""), q.get("path", ""))
            elif url.path == "/api/leaderboard.json":
                df = leaderboard_frame(self.db_path, q.get("benchmark", ""))
                body = df.to_json(orient="records", date_format="iso").encode()
                self._send(HTTPStatus.OK, body, "application/json")
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
        except Exception as e:  # a bad request must not kill the server
            self._send(HTTPStatus.BAD_REQUEST, f"error: {e}".encode(), "text/plain")

    def _html(self, text: str) -> None:
        self._send(HTTPStatus.OK, text.encode("utf-8"), "text/html; charset=utf-8")

    def _image(self, run: str, rel: str) -> None:
        root, listed = self._run_images(run)
        path = resolved_inside(root, rel) if root is not None and rel in listed else None
        ctype = mimetypes.guess_type(rel)[0] or ""
        if path is None or not path.is_file() or not ctype.startswith("image/"):
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
            return
        self._send(HTTPStatus.OK, path.read_bytes(), ctype)

    def _run_images(self, run: str) -> tuple[Path | None, frozenset[str]]:
        """:func:`run_images`, remembered per run (a stored run never changes)."""
        cache = type(self).images_of
        if run not in cache:
            if len(cache) > 64:
                cache.clear()
            cache[run] = run_images(self.db_path, run)
        return cache[run]


def make_server(db_path: str | Path, host: str = "127.0.0.1", port: int = 8765):
    """A ready-to-run server (call ``serve_forever``); port 0 picks a free port. The database
    is opened once first, so a missing file, a file that is not a results store or one of a
    newer schema is refused before anything listens."""
    with ResultsStore(db_path, read_only=True):
        pass
    handler = type("BoundHandler", (Handler,), {"db_path": Path(db_path), "images_of": {}})
    return ThreadingHTTPServer((host, port), handler)


def exposure_warning(host: str) -> str | None:
    """The warning to print when ``host`` makes the app reachable from other machines.

    >>> exposure_warning("127.0.0.1") is None
    True
    >>> exposure_warning("0.0.0.0").startswith("warning: --host 0.0.0.0")
    True
    """
    if host in LOOPBACK or host.startswith("127."):
        return None
    return (f"warning: --host {host} makes this app reachable from the network: anyone who can "
            "reach this machine can read the stored results and the benchmark images (there is "
            "no login). Use the default 127.0.0.1 unless that is what you want.")
