"""Draw docs/sample_pairs.png: base, foil and edit mask with the pair's captions, one row per
edit type, from a world pair benchmark folder.

    PYTHONPATH=src python docs/sample_pairs.py BENCHMARK_DIR [OUT_PNG] [--tier medium]
    PYTHONPATH=src python docs/sample_pairs.py BENCHMARK_DIR docs/agent_pairs.png \
        --types modify_action swap_role --per-type 3 --tier short
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

DEFAULT_TYPES = ("modify_color", "swap_material", "modify_count", "modify_spatial",
                 "modify_state", "modify_presence", "modify_object", "swap_spatial")


def draw(bench_dir: str, out: str, tier: str = "medium", edit_types=DEFAULT_TYPES,
         per_type: int = 1) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from foilbench.data.format import load_benchmark

    bench = load_benchmark(bench_dir)
    items = bench.items[bench.items["tier"] == tier]
    rows, used = [], set()
    for t in edit_types:  # per_type rows per edit type, from scenes not shown yet if possible
        for _ in range(per_type):
            cands = items[(items["edit_type"] == t) & ~items["item_id"].isin(
                [r["item_id"] for r in rows])]
            if len(cands):
                fresh = cands[~cands["scene_id"].isin(used)]
                row = (fresh if len(fresh) else cands).iloc[0]
                used.add(row["scene_id"])
                rows.append(row)
    fig, axes = plt.subplots(len(rows), 4, squeeze=False, figsize=(12, 2.6 * len(rows)),
                             gridspec_kw={"width_ratios": [1, 1, 1, 1.9]})
    for ax_row, row in zip(axes, rows, strict=True):
        for ax, col, title in zip(ax_row[:3], ("image_base", "image_foil", "mask"),
                                  ("base", "foil", "edit mask"), strict=True):
            ax.imshow(Image.open(bench.root / row[col]), cmap="gray" if col == "mask" else None)
            ax.set_title(title, fontsize=9)
            ax.axis("off")
        text = (f"{row['edit_type']}  ({row['category']}, {row['operation']})\n\n"
                f"base: {textwrap.fill(row['caption_base'], 48)}\n\n"
                f"foil: {textwrap.fill(row['caption_foil'], 48)}")
        ax_row[3].text(0.0, 0.5, text, va="center", ha="left", fontsize=9, family="monospace")
        ax_row[3].axis("off")
    fig.suptitle(f"foilbench world pairs: single edits, {tier} captions", fontsize=12)
    fig.tight_layout()
    out_path = Path(out)
    fig.savefig(out_path, dpi=80, metadata={"Software": None})
    plt.close(fig)
    return out_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_dir")
    parser.add_argument("out", nargs="?", default=str(Path(__file__).with_name("sample_pairs.png")))
    parser.add_argument("--tier", default="medium", choices=("short", "medium", "long"))
    parser.add_argument("--types", nargs="+", default=list(DEFAULT_TYPES))
    parser.add_argument("--per-type", type=int, default=1)
    args = parser.parse_args()
    print(draw(args.bench_dir, args.out, args.tier, tuple(args.types), args.per_type))


if __name__ == "__main__":
    main()
