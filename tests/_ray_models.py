"""Test fixtures for the Ray runner: a fault-injecting model, tiny benchmarks, the reference.

``faulty-tiny`` is ``tiny-random`` (seed 1: its own weights and fingerprint) that, when the
folder in ``FOILBENCH_TEST_FAULT_DIR`` holds a file ``die``, deletes it and ends its own
process with ``os._exit`` at its first image batch (a worker killed mid-cell); with a file
``die-always`` it does so on every attempt. Every image batch it embeds appends the process
id to ``calls`` in that folder, so a test can see that a cell ran, where, and how often. With a
file ``slow`` holding a number of seconds, each image batch first appends ``NODE_ID PID`` to
``nodes`` and then sleeps that long (a cell held long enough to kill its node under it).
Processes register the name with :func:`_ray_hook.register` (Ray workers through the
``worker_process_setup_hook``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from _loader_fixtures import png, write_json
from foilbench.models.tiny import TinyRandomEncoder

FAULT_ENV = "FOILBENCH_TEST_FAULT_DIR"


class FaultyTiny(TinyRandomEncoder):
    """tiny-random with an injectable process death (see the module docstring)."""

    def embed_images(self, images):
        folder = os.environ.get(FAULT_ENV)
        if folder:
            with open(Path(folder) / "calls", "a") as f:
                f.write(f"{os.getpid()}\n")
            once = Path(folder) / "die"
            if (Path(folder) / "die-always").exists():
                os._exit(1)
            if once.exists():
                once.unlink()  # the retried cell must succeed
                os._exit(1)
            slow = Path(folder) / "slow"
            if slow.exists():
                import time

                import ray

                node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "-"
                with open(Path(folder) / "nodes", "a") as f:
                    f.write(f"{node} {os.getpid()}\n")
                time.sleep(float(slow.read_text() or 1))
        return super().embed_images(images)


def build_faulty(device: str = "auto", dtype: str = "float32") -> FaultyTiny:
    return FaultyTiny(seed=1, spec="faulty-tiny")  # its own weights, so its own fingerprint


def calls(folder: Path) -> list[str]:
    path = Path(folder) / "calls"
    return path.read_text().split() if path.exists() else []


def sugarcrepe_spec(root: Path) -> str:
    """A SugarCrepe-format folder, one item per type (choice kind, R@1)."""
    from foilbench.data.loaders.sugarcrepe import EXPECTED_COUNTS

    for k, t in enumerate(EXPECTED_COUNTS):
        write_json(root / "sc" / f"{t}.json", {"0": {
            "filename": f"{k % 3}.png", "caption": f"a red {t} on the left",
            "negative_caption": f"a blue {t} on the right"}})
    for k in range(3):
        png(root / "coco" / f"{k}.png", (60 * k, 200 - 50 * k, 30), size=8)
    return f"sugarcrepe:{root / 'sc'}?images={root / 'coco'}"


def composet_spec(root: Path) -> str:
    """A CompoSET-release folder: 3 variations x 3 caption tiers (pair kind, Group)."""
    from foilbench.data.loaders import composet

    rows = []
    for k, edit in enumerate(("modify_color", "modify_cardinality", "swap_position")):
        rows.append({"id": f"v{k}", "scene_id": f"s{k % 2}", "edit_type": edit,
                     "image_base": f"img/v{k}_base.png", "image_var": f"img/v{k}_var.png",
                     "captions": {t: {"base": f"{t} base {k} red", "var": f"{t} var {k} blue"}
                                  for t in composet.TIERS}})
        png(root / f"img/v{k}_base.png", (200, 30 * k, 30), size=8)
        png(root / f"img/v{k}_var.png", (0, 30 * k, 200), size=8)
    pd.DataFrame(rows).to_parquet(root / "variations.parquet")
    pd.DataFrame({"scene_id": ["s0", "s1"]}).to_parquet(root / "scenes.parquet")
    return f"composet:{root}"


def openclip_spec(folder: Path) -> str:
    """A tiny open_clip model from a JSON config with safetensors weights."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    from _models_tiny import write_openclip_config

    cfg = write_openclip_config(folder, "fb-ray-tiny")
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model = open_clip.create_model("fb-ray-tiny").eval()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(folder / "w.safetensors"))
    return f"openclip:{cfg}:{folder / 'w.safetensors'}"


def stored(db: Path) -> dict[tuple[str, str], dict[str, pd.DataFrame]]:
    """(model spec, benchmark) -> its stored metrics, item scores and outcomes, ordered and
    without run ids (what must match between a sequential and a Ray sweep)."""
    from foilbench.store.db import ResultsStore

    out = {}
    with ResultsStore(db, read_only=True) as store:
        runs = store.con.execute("SELECT run_id, model_spec, benchmark_name FROM runs").fetchall()
        for run_id, spec, bench in runs:
            out[(spec, bench)] = {
                t: store.con.execute(f"SELECT * EXCLUDE (run_id) FROM {t} WHERE run_id = ?",
                                     [run_id]).df().sort_values(order).reset_index(drop=True)
                for t, order in (("metrics", ["metric", "group_by", "group_value"]),
                                 ("item_results", ["item_index"]),
                                 ("item_outcomes", ["item_id", "metric"]))}
            items = out[(spec, bench)]["item_results"]
            items["scores"] = items["scores"].map(tuple)  # exact float comparison, by value
    return out
