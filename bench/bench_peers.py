"""foilbench's whole ``foilbench run`` process against the peers' own evaluation code.

The peers' code is imported at run time from checkouts the user fetched (nothing of theirs is
in this project): ``--composet-repo`` (github.com/laure-delisle/CompoSET) and
``--sugarcrepe-repo`` (github.com/RAIVNLab/sugar-crepe). A peer whose checkout is not given is
skipped with a line saying how to get it; nothing re-implements it.

Two comparisons, each on the same data and the same tiny open_clip model files:

- CompoSET-shaped release (80 scenes x 22 foils x 3 tiers = 5,280 pair rows, 224 px PNGs;
  :mod:`peer_data`) read by foilbench through ``composet:DIR``, against CompoSET's entry point
  ``eval.run.main`` -> ``eval.benchmark.run_composet`` with ``eval.models.VLMScorer``
  (driver :mod:`peer_composet`, which lists its adaptations).
- SugarCrepe-shaped set (the real 7,511 items, 1,560 synthetic 640x480 JPEGs under the COCO
  names) read through ``sugarcrepe:DIR?images=...``, against SugarCrepe's ``main_eval.load_model``
  and ``main_eval.evaluate`` (driver :mod:`peer_sugarcrepe`, which lists its adaptations).

Every timed command is a fresh process (``python -m foilbench run`` with a fresh output
folder, embedding cache and ``$FOILBENCH_HOME``, so nothing is reused from an earlier run;
start-up, blind reference rows and the HTML report included), pinned with ``taskset`` to the
same core list and run with ``OMP_NUM_THREADS=1`` (one torch thread each). foilbench and the
peer alternate order within each repeat; the ratio is the median peer time over the median
foilbench time. ``--two-cores`` adds foilbench runs allowed a second core (its image prefetch
threads can use it; torch stays at one thread), reported separately.

After the timed runs, one instrumented foilbench run (:mod:`fb_phases`, the same CLI path)
gives the phase table, and the outcomes of foilbench and the peer are compared item by item.

    PYTHONPATH=src python bench/bench_peers.py --composet-repo /tmp/peers/CompoSET \
        --sugarcrepe-repo /tmp/peers/sugar-crepe [--scale 0.25 --repeats 1] [--two-cores]
        [--device cuda --cores 0-15]

``--arch ViT-B-32`` uses that open_clip architecture with seeded random weights (no download;
:func:`peer_data.model_files`) instead of the tiny model; ``--subset N`` draws about N pair
items per set, stratified (:mod:`peer_data`), instead of ``--scale``'s leading fraction.
``--two-threads`` adds, on ``--cores2``, both foilbench and the peer with two torch threads
(the ratio on two cores); ``--two-threads-only`` times only those. ``--floor FILE`` (from ``bench_forward_floor.py --json``) prints
foilbench's wall over the forward-pass floor; the fixed-cost line (:mod:`fixed_cost`) is
always printed.

``--device cuda`` runs every process on the GPU (give it the cores too). On either device the
report gives images per second of wall for foilbench and the peer, and foilbench's image
encoder's images per second of forward time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fb_phases  # noqa: E402
import fixed_cost  # noqa: E402
import peer_composet  # noqa: E402
import peer_data  # noqa: E402
import peer_sugarcrepe  # noqa: E402

SRC = HERE.parent / "src"
LOAD = "benchmark load + validate"
ENGINE_EARLY = "image decode + prepare, in validation (engine work)"
IMPORTS = ("thread setup (imports torch)", "import open_clip (+torch)")


DEVICE = {"name": "cpu"}  # set by --device: every timed process runs there


def _env(home: Path, src: Path = SRC) -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", FOILBENCH_HOME=str(home),
               PYTHONPATH=f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    env.pop("FOILBENCH_CACHE", None)
    if DEVICE["name"] == "cpu":  # SugarCrepe's glue takes a visible GPU by itself: hide it
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _timed(cmd: list[str], cores: str, home: Path, log: Path,
           extra_env=None, src: Path = SRC) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the process and all its threads)."""
    env = _env(home, src) | (extra_env or {})
    c0, t0 = _children_cpu(), time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(["taskset", "-c", cores, *cmd], env=env, stdout=fh,
                              stderr=subprocess.STDOUT)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{log.read_text()[-3000:]}")
    return wall, cpu


def foilbench_cmd(spec: str, bench: str, out: Path, driver: bool = False) -> list[str]:
    head = [sys.executable, str(HERE / "fb_phases.py")] if driver else \
        [sys.executable, "-m", "foilbench", "run"]
    return [*head, "--model", spec, "--benchmark", bench, "--out", str(out),
            "--cache", str(out / "cache"), "--quiet", "--device", DEVICE["name"]]


def warm_files(*folders: Path) -> None:
    """Read every data file once so no timed run pays the first disk read."""
    for folder in folders:
        for p in folder.rglob("*"):
            if p.is_file():
                p.read_bytes()


def compare_outcomes(db: Path, peer_out: Path, kind: str) -> dict:
    """foilbench's stored per-item scores and outcomes against the peer's, item by item."""
    from foilbench.store.db import ResultsStore

    with ResultsStore(db, read_only=True) as store:
        run_id = store.list_runs()["run_id"].iloc[0]
        items = store.load_item_results(run_id)
    if kind == "composet":
        import pandas as pd

        peer = pd.read_csv(peer_out)
        peer["item_id"] = peer["variation_id"] + "/" + peer["tier"]
        peer = peer.set_index("item_id").loc[items["item_id"]]
        mine = np.stack(items["scores"].to_numpy())  # s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)
        theirs = peer[["sim_base_cb", "sim_var_cb", "sim_base_cv", "sim_var_cv"]].to_numpy()
        same = {m: int((items[m].to_numpy().astype(int) == peer[f"{m}_score"].to_numpy()).sum())
                for m in ("i2t", "t2i", "group")}
    else:
        peer = json.loads(peer_out.read_text())["items"]
        mine = np.stack(items["scores"].to_numpy())
        theirs = np.array([peer[i] for i in items["item_id"]])
        same = {"r1": int((items["r1"].to_numpy().astype(int)
                           == (theirs[:, 0] > theirs[:, 1]).astype(int)).sum())}
    return {"n": len(items), "max_abs_diff": float(np.abs(mine - theirs).max()),
            "agree": same}


def phase_table(phases: dict, stats: list[dict], wall: float,
                cpu: float) -> list[tuple[str, float, float]]:
    """Rows (phase, wall s, CPU s) of one instrumented run; the engine split by its own
    stats (indented rows are parts of the row above them). CPU is the main thread's, plus the
    prefetch threads' where named."""
    p = {k: tuple(v) for k, v in phases["phases"].items()}
    numeric = [k for k, v in stats[0].items() if isinstance(v, int | float)] if stats else []
    st = {k: sum(s.get(k, 0.0) for s in stats) for k in numeric}  # counts and seconds
    engine = p.pop("engine", (0.0, 0.0))
    in_wall, in_cpu = p.pop("in-process total", (0.0, 0.0))
    early = p.pop(fb_phases.EARLY_DECODE, (0.0, 0.0))
    if LOAD in p:  # the early decode ran inside validation: shown on its own row
        p[LOAD] = (p[LOAD][0] - early[0], p[LOAD][1] - early[1])
    workers = st.get("prefetch_cpu_seconds", 0.0)
    rows = [("interpreter start-up and exit", wall - in_wall, cpu - in_cpu - workers),
            *((k, w, c) for k, (w, c) in p.items()),
            (ENGINE_EARLY, early[0], early[1]),
            ("engine (scoring/engine.evaluate)", engine[0], engine[1] + workers)]
    fw, fw_cpu = st.get("forward_seconds", 0.0), st.get("forward_cpu_seconds", 0.0)
    img, txt = st.get("forward_image_seconds", 0.0), st.get("forward_text_seconds", 0.0)
    parts = [
        ("forward passes (texts incl. tokenising)", fw, fw_cpu),
        ("  of which images / texts (wall)", img, txt),
        ("image decode + prepare (prefetch threads)", st.get("prefetch_seconds", 0.0), workers),
        ("waiting for / loading inputs", st.get("load_seconds", 0.0),
         st.get("load_cpu_seconds", 0.0)),
        ("hashing inputs", st.get("hash_seconds", 0.0), None),
        ("embedding cache", st.get("cache_seconds", 0.0), None),
        ("scoring slots", st.get("score_seconds", 0.0), None),
    ]
    rows += [(f"  {label}", w, c) for label, w, c in parts]
    named_w = sum(w for k, w, _ in rows if not k.startswith("  "))
    named_c = sum(c for k, _, c in rows if not k.startswith("  "))
    rows.append(("not inside a named phase", wall - named_w, cpu - named_c))
    return rows


def run_pair(name: str, fb_args: tuple[str, str], peer_cmd, peer_out: Path, args, work: Path,
             runs: Path) -> dict:
    spec, bench = fb_args
    walls: dict[str, list[tuple[float, float]]] = {"foilbench": [], "peer": [],
                                                   "foilbench_2cores": [], "foilbench_2t": [],
                                                   "peer_2t": []}
    for r in range(args.repeats):
        order = ["foilbench", "peer"] if r % 2 == 0 else ["peer", "foilbench"]
        if args.two_threads_only:
            order = []
        if args.two_cores:
            order.append("foilbench_2cores")
        if args.two_threads or args.two_threads_only:
            order += ["foilbench_2t", "peer_2t"] if r % 2 == 0 else ["peer_2t", "foilbench_2t"]
        for who in order:
            tag = runs / f"{name}-{who}-{r}"
            shutil.rmtree(tag, ignore_errors=True)
            tag.mkdir(parents=True)
            if who.startswith("peer"):
                cmd, cores = peer_cmd, args.cores
            else:
                cmd = foilbench_cmd(spec, bench, tag / "out")
                cores = args.cores if who == "foilbench" else args.cores2
            two = who.endswith("_2t")
            cores = args.cores2 if two else cores
            wall, cpu = _timed(cmd, cores, tag / "home", tag / "log.txt",
                               {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"} if two else None)
            walls[who].append((wall, cpu))
            print(f"  {name} repeat {r + 1}: {who:17s} wall {wall:7.2f} s, CPU {cpu:7.2f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    tag = runs / f"{name}-phases"
    shutil.rmtree(tag, ignore_errors=True)
    tag.mkdir(parents=True)
    env = {"FB_PHASES_OUT": str(tag / "phases.json")}
    if args.two_threads_only:  # the phases of the runs timed: two cores, two torch threads
        env.update({"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"})
    wall, cpu = _timed(foilbench_cmd(spec, bench, tag / "out", driver=True),
                       args.cores2 if args.two_threads_only else args.cores,
                       tag / "home", tag / "log.txt", env)
    phases = json.loads((tag / "phases.json").read_text())
    timed = "foilbench_2t" if args.two_threads_only else "foilbench"
    last_fb = runs / f"{name}-{timed}-{args.repeats - 1}" / "out" / "foilbench.duckdb"
    return {"walls": walls, "phases": phases, "phase_wall": wall, "phase_cpu": cpu,
            "outcomes": compare_outcomes(last_fb, peer_out, name),
            "fresh_imports": fixed_cost.fresh_import_seconds(args.cores)}


def _medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def report(name: str, res: dict, floor=None) -> None:
    one_core = bool(res["walls"]["foilbench"])  # False with --two-threads-only
    fb_w, fb_c = _medians(res["walls"]["foilbench" if one_core else "foilbench_2t"])
    peer_w, peer_c = _medians(res["walls"]["peer" if one_core else "peer_2t"])
    stats = res["phases"]["eval_stats"]
    fw_cpu = sum(s.get("forward_cpu_seconds", 0.0) for s in stats)
    fw_wall = sum(s.get("forward_seconds", 0.0) for s in stats)
    wall, cpu = res["phase_wall"], res["phase_cpu"]
    fmt = "  ".join
    print(f"\n== {name} ==")
    where = "one core" if one_core else "two cores, two torch threads"
    print(f"peer own code      : median wall {peer_w:7.2f} s, CPU {peer_c:7.2f} s   "
          + fmt(f"({w:.1f}, {c:.1f})"
                for w, c in res["walls"]["peer" if one_core else "peer_2t"]))
    print(f"foilbench run      : median wall {fb_w:7.2f} s, CPU {fb_c:7.2f} s   "
          + fmt(f"({w:.1f}, {c:.1f})"
                for w, c in res["walls"]["foilbench" if one_core else "foilbench_2t"]))
    print(f"ratio peer / foilbench, {where} each: CPU {peer_c / fb_c:.2f}x, "
          f"wall {peer_w / fb_w:.2f}x")
    if one_core and res["walls"]["foilbench_2t"]:
        fb2_w, _ = _medians(res["walls"]["foilbench_2t"])
        peer2_w, _ = _medians(res["walls"]["peer_2t"])
        print(f"two cores, two torch threads each: peer {peer2_w:7.2f} s, foilbench "
              f"{fb2_w:7.2f} s -> wall ratio {peer2_w / fb2_w:.2f}x")
    if floor is not None:  # (file, distinct images, distinct texts)
        print(fixed_cost.floor_line(name, fb_w, floor[0], 1 if one_core else 2, floor[1],
                                        floor[2]))
        if one_core and res["walls"]["foilbench_2t"]:
            print(fixed_cost.floor_line(name, _medians(res["walls"]["foilbench_2t"])[0],
                                        floor[0], 2, floor[1], floor[2]))
    if res["walls"]["foilbench_2cores"]:
        fb2_w, fb2_c = _medians(res["walls"]["foilbench_2cores"])
        print(f"foilbench allowed 2 cores: median wall {fb2_w:7.2f} s (CPU {fb2_c:.2f} s) -> "
              f"wall ratio {peer_w / fb2_w:.2f}x; the second core changes foilbench's wall "
              f"time by {100 * (fb2_w / fb_w - 1):+.0f}%")
    print(f"forward passes (instrumented run): CPU {fw_cpu:.2f} s of {cpu:.2f} s = "
          f"{100 * fw_cpu / cpu:.1f}%; wall {fw_wall:.2f} s of {wall:.2f} s = "
          f"{100 * fw_wall / wall:.1f}%")
    settled = sum(s.get("near_ties_settled", 0) for s in stats)
    changed = sum(sum((s.get("near_ties_changed") or {}).values()) for s in stats)
    print(f"near ties (instrumented run): {settled} item(s) rescored in float64 in "
          f"{sum(s.get('settle_seconds', 0.0) for s in stats):.2f} s, {changed} outcome(s) "
          f"changed by it")
    print(f"phase table (instrumented run){'':29s}   wall s      %    CPU s      %")
    for label, w, c in phase_table(res["phases"], stats, wall, cpu):
        cpu_cols = f"{c:8.2f} {100 * c / cpu:6.1f}" if c is not None else f"{'':8s} {'':6s}"
        if label.strip().startswith("of which"):
            print(f"  {label:58s} {w:8.2f} / {c:.2f}")
            continue
        print(f"  {label:58s} {w:8.2f} {100 * w / wall:6.1f} {cpu_cols}")
    rows = phase_table(res["phases"], stats, wall, cpu)
    by = {label: w for label, w, _ in rows}
    fixed = wall - by["engine (scoring/engine.evaluate)"] - by[ENGINE_EARLY]
    libs = sum(by.get(k, 0.0) for k in IMPORTS)
    print(f"outside the engine (start-up, imports, validation, notes, bootstrap, store, "
          f"reference rows, report): {fixed:.2f} s = {100 * fixed / wall:.1f}% of wall; "
          f"without the torch and open_clip imports ({libs:.2f} s, which the peer pays too): "
          f"{fixed - libs:.2f} s = {100 * (fixed - libs) / wall:.1f}%")
    for line in fixed_cost.fixed_cost_lines(
            rows, wall, ("engine (scoring/engine.evaluate)", ENGINE_EARLY),
            IMPORTS, res.get("fresh_imports")):
        print(line)
    n_images = stats[0].get("images_unique", 0) if stats else 0
    img_fwd = sum(s.get("forward_image_seconds", 0.0) for s in stats)
    encoded = sum(s.get("images_encoded", 0) for s in stats)
    print(f"images per second of whole-process wall ({n_images:,} distinct images, "
          f"{DEVICE['name']}): foilbench {n_images / fb_w:.1f}, peer {n_images / peer_w:.1f}; "
          f"foilbench's image encoder alone: {encoded / img_fwd if img_fwd else 0:.1f} images/s "
          f"of forward time")
    out = res["outcomes"]
    print(f"outcomes: {out['n']} items; agreeing per metric {out['agree']}; largest score "
          f"difference {out['max_abs_diff']:.2e}")


DRIVERS = {"composet": peer_composet, "sugarcrepe": peer_sugarcrepe}


def usable_repos(args: argparse.Namespace) -> dict[str, str | None]:
    """Each peer's checkout from ``--composet-repo`` / ``--sugarcrepe-repo``, or None (with a
    line saying why and how to get it) when not given, not a checkout, or left out by
    ``--only``."""
    out: dict[str, str | None] = {}
    for name, driver in DRIVERS.items():
        repo = getattr(args, f"{name}_repo")
        out[name] = None
        if args.only not in (None, name):
            continue
        problem = (f"no --{name}-repo given: {driver.HOW_TO_GET}" if repo is None
                   else driver.check_repo(Path(repo)))
        if problem:
            print(f"skipping {name}: {problem}", flush=True)
            continue
        out[name] = repo
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0,
                    help="fraction of scenes / items (0.25 for a quick run)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"),
                    help="data and model files, built once and reused")
    ap.add_argument("--cores", default="0", help="taskset core list for every timed run")
    ap.add_argument("--cores2", default="0,1", help="core list of --two-cores runs")
    ap.add_argument("--two-cores", action="store_true")
    ap.add_argument("--two-threads", action="store_true",
                    help="also time both sides on --cores2 with two torch threads")
    ap.add_argument("--two-threads-only", action="store_true",
                    help="time only the --two-threads runs (both sides on --cores2, two "
                         "torch threads); the instrumented run uses them too")
    ap.add_argument("--arch", choices=peer_data.ARCHS, default="tiny",
                    help="the tiny model, or ViT-B-32 with seeded random weights")
    ap.add_argument("--subset", type=int, default=None,
                    help="about this many pair items per set, stratified (instead of --scale)")
    ap.add_argument("--floor", default=None,
                    help="rates from bench_forward_floor.py --json: print wall over the floor")
    ap.add_argument("--only", choices=("composet", "sugarcrepe"), default=None)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="where every timed process runs its model: cuda gives foilbench "
                         "--device cuda, CompoSET --device cuda and SugarCrepe its own "
                         "'cuda if available'; cpu hides any GPU from all of them")
    ap.add_argument("--composet-repo", default=None,
                    help="a checkout of github.com/laure-delisle/CompoSET (its eval package)")
    ap.add_argument("--sugarcrepe-repo", default=None,
                    help="a checkout of github.com/RAIVNLab/sugar-crepe (its main_eval.py)")
    args = ap.parse_args()
    DEVICE["name"] = args.device
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: torch sees no CUDA device on this machine")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    config, weights = peer_data.model_files(work, args.arch)
    spec = f"openclip:{config}:{weights}"
    todo = []
    repos = {name: (repo, DRIVERS[name]) for name, repo in usable_repos(args).items()}
    if args.only in (None, "composet") and repos["composet"][0]:
        root = peer_data.composet_release(work, args.scale, subset=args.subset)
        todo.append(("composet", (spec, f"composet:{root}"), root))
    if args.only in (None, "sugarcrepe") and repos["sugarcrepe"][0]:
        jdir, images = peer_data.sugarcrepe_set(work, args.scale, args.subset)
        todo.append(("sugarcrepe", (spec, f"sugarcrepe:{jdir}?images={images}"), (jdir, images)))
    print(f"data ready in {time.perf_counter() - t0:.1f} s ({args.arch}; scale {args.scale}, "
          f"subset {args.subset}); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; timed runs on cores "
          + (f"{args.cores2}, OMP_NUM_THREADS=2" if args.two_threads_only
             else f"{args.cores}, OMP_NUM_THREADS=1"), flush=True)
    # one folder per model and size, so runs of other sizes in the same work folder never meet
    runs = work / "runs" / f"{args.arch}-{f'sub{args.subset}' if args.subset else args.scale}"
    results = {}
    for name, fb_args, data in todo:
        runs.mkdir(parents=True, exist_ok=True)
        repo = str(Path(repos[name][0]).resolve())
        if name == "composet":
            warm_files(data)
            peer_dir = runs / "composet-peer"
            peer_out = peer_dir / f"{peer_composet.KEY}.csv"
            peer_cmd = [sys.executable, str(HERE / "peer_composet.py"), repo, str(config),
                        str(weights), str(data), str(peer_dir), args.device]
        else:
            warm_files(*data)
            peer_out = runs / "sugarcrepe-peer.json"
            peer_cmd = [sys.executable, str(HERE / "peer_sugarcrepe.py"), repo, str(config),
                        str(weights), str(data[0]), str(data[1]), str(peer_out)]
        results[name] = run_pair(name, fb_args, peer_cmd, peer_out, args, work, runs)
    data_of = {name: data for name, _, data in todo}
    for name, res in results.items():
        floor = None
        if args.floor:
            floor = (Path(args.floor), *peer_data.unique_inputs(name, data_of[name]))
        report(name, res, floor)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
