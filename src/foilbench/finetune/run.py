"""The matched comparison end to end: split, evaluate the pretrained model, fine-tune each
arm for each seed, save, reload the saved weights by their spec, evaluate on every cell the
benchmarks hold, and tabulate.

    "two matched configurations differing only in the negative type: a Swap-only baseline
    using K=3 Swap negatives per positive, and a Confusion variant using K=3 Confusion
    negatives. Table 8 reports the additional Confusion gain (Delta_C) of the Confusion
    variant over the Swap-only baseline." (Auto-Comp §5); "report the mean over three seeds"
    (App. A.9).

Evaluated: every (task, N, condition) cell of the given benchmarks, Swap and Confusion sets
(:func:`foilbench.finetune.data.evaluation_concepts`): the trained cell and its other
condition on the held-out 20% of its concepts, every other cell on all its concepts ("Gains
are positive on every cell, largest on Shape-Color and persisting cross-axis to Position and
Relative Size", Auto-Comp §5). Each row carries ``role``: trained, other condition, other N
or cross-axis (:func:`foilbench.finetune.data.cell_role`).

* ``r1``: per model (pretrained, each arm and seed) and cell (task, N, negative set,
  condition): n, R@1 and R@1-valid with Wilson 95% intervals, ties;
* ``deltas``: per cell, each arm's outcome (averaged over seeds per item) minus the
  pretrained outcome (Delta Swap / Delta Confusion of Table 8), and Delta_C = Confusion arm -
  Swap arm; paired percentile bootstrap over items (one item per concept in a row, so this
  resamples concepts). :func:`foilbench.finetune.table8.table8` lays them out as Table 8.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from foilbench.finetune.config import FinetuneConfig, FinetuneError
from foilbench.finetune.data import (
    cell_role,
    eval_items,
    evaluation_concepts,
    examples,
    items_frame,
    split_concepts,
    training_scope,
)
from foilbench.finetune.evaluate import item_outcomes, r1_table
from foilbench.finetune.loop import train_arm
from foilbench.finetune.towers import Towers

GROUP = ("negative_set", "condition")
CELL = ("task", "n_objects", *GROUP)


def load_items(benchmark_specs: Sequence[str]) -> pd.DataFrame:
    """The Auto-Comp items of the named benchmarks (a suite contributes its Auto-Comp
    members; a single named benchmark without the columns is refused)."""
    from foilbench.data.registry import resolve_benchmarks

    benches = []
    for spec in benchmark_specs:
        found = resolve_benchmarks(spec, progress=False)
        auto = [b for b in found if {"concept_id", "negative_set"} <= set(b.items.columns)]
        if not auto and len(found) == 1:
            auto = found  # items_frame names the missing columns
        benches.extend(auto)
    return items_frame(benches)


def finetune(model_spec: str, benchmark_specs: Sequence[str], out_dir: str | Path,
             cfg: FinetuneConfig, log: Callable[[str], None] = lambda msg: None) -> dict:
    """Run the comparison; writes ``out_dir/<arm>-seed<S>/`` weights and
    ``out_dir/finetune.json``; returns the same record (tables as lists of rows)."""
    from foilbench.jsonio import write_json
    from foilbench.models.registry import resolve_model

    out = Path(out_dir)
    df = load_items(benchmark_specs)
    split = split_concepts(training_scope(df, cfg)["concept_id"].unique(), cfg.train_share,
                           cfg.val_share, cfg.split_seed)
    train = examples(df, split.train, cfg)
    val = eval_items(df, split.val, condition=cfg.condition, negative_set="confusion")
    test = eval_items(df, evaluation_concepts(df, split, cfg))
    cells = sorted({(it.task, it.n_objects, it.condition) for it in test})
    log(f"concepts: {len(split.train)} train, {len(split.val)} validation, {len(split.test)} "
        f"held out; {len(test)} items scored in {len(cells)} (task, N, condition) cell(s)")
    pretrained = resolve_model(model_spec, device=cfg.device)
    Towers(pretrained, model_spec)  # refuses what cannot be fine-tuned before any work
    before = item_outcomes(pretrained, test)
    before["model"] = "pretrained"
    runs, tuned, specs = [], [], {}
    for arm in cfg.negatives:
        for seed in cfg.seeds:
            towers = Towers(resolve_model(model_spec, device=cfg.device), model_spec)
            runs.append(train_arm(towers, train, val, arm, seed, cfg, log))
            spec = towers.save(out / f"{arm}-seed{seed}")
            specs[f"{arm}-seed{seed}"] = spec
            after = item_outcomes(resolve_model(spec, device=cfg.device), test)
            after["model"], after["arm"], after["seed"] = f"{arm} seed {seed}", arm, seed
            tuned.append(after)
    outcomes = pd.concat([before, *tuned], ignore_index=True)
    table = with_roles(r1_table(outcomes, by=("model", *CELL)), cfg)
    deltas = with_roles(delta_table(before, pd.concat(tuned, ignore_index=True)), cfg)
    record = {"model": model_spec, "benchmarks": list(benchmark_specs),
              "config": cfg.as_dict(), "split": {"train": list(split.train),
                                                 "val": list(split.val),
                                                 "test": list(split.test)},
              "runs": runs, "weights": specs, "r1": table.to_dict("records"),
              "deltas": deltas.to_dict("records")}
    write_json(out / "finetune.json", record)
    return record


def with_roles(table: pd.DataFrame, cfg: FinetuneConfig) -> pd.DataFrame:
    """``table`` with a ``role`` column (trained, other condition, other N, cross-axis)."""
    out = table.copy()
    out["role"] = [cell_role(t, n, c, cfg) for t, n, c in
                   zip(out["task"], out["n_objects"], out["condition"], strict=True)]
    return out


def delta_table(before: pd.DataFrame, tuned: pd.DataFrame, metric: str = "r1",
                n_boot: int = 10_000, seed: int = 42) -> pd.DataFrame:
    """Per cell (task, N, negative set, condition): each arm minus pretrained, and Confusion
    minus Swap (Delta_C) when both arms ran; outcomes of an arm are averaged over its seeds
    per item."""
    from foilbench.stats import paired_delta_ci

    if tuned.empty:
        raise FinetuneError("no fine-tuned run to compare")
    arms = tuned.groupby(["arm", "item_id"])[metric].mean().unstack("arm")
    base = before.set_index("item_id")
    rows = []
    for key, sub in base.groupby(list(CELL), sort=True):
        ids = sub.index
        pairs = [(f"{arm} - pretrained", arms.loc[ids, arm], sub[metric]) for arm in arms]
        if {"swap", "confusion"} <= set(arms):
            pairs.append(("Delta_C = confusion - swap", arms.loc[ids, "confusion"],
                          arms.loc[ids, "swap"]))
        for name, a, b in pairs:
            stat = paired_delta_ci(a.to_numpy(), b.to_numpy(), n_boot=n_boot, seed=seed)
            rows.append(dict(zip(CELL, key, strict=True)) | {"comparison": name, **stat})
    return pd.DataFrame(rows)
