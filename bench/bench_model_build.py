"""The open_clip adapter's build from a local safetensors file, side by side: open_clip's own
loader as it was (before: random initialisation, then the file copied over it) against the
build with the random fills skipped (after: :mod:`foilbench.models.openclip.no_init`),
alternating, pinned to ``--cores``, median of ``--repeats``. Both must give the same tensors.

    PYTHONPATH=src python bench/bench_model_build.py --cores 1 [--arch tiny|ViT-B-32]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import alternating  # noqa: E402
import peer_data  # noqa: E402


def main() -> None:
    args = alternating.parse_args(__doc__, repeats=7)
    import torch

    import foilbench.models.openclip.adapter as adapter

    torch.set_num_threads(1)
    arch = args.arch
    config, weights = peer_data.model_files(Path(args.work), arch)
    spec = f"{config}:{weights}"
    skips = adapter.skips_init

    def build(skip: bool):
        adapter.skips_init = skips if skip else (lambda *a: False)
        try:
            model = adapter.from_spec(spec, device="cpu").model
            return {**dict(model.named_buffers()), **model.state_dict()}
        finally:
            adapter.skips_init = skips

    build(True)  # open_clip's config registry and the weights file, warm for both
    medians, got = alternating.alternate(
        {"before (open_clip loader)": lambda: build(False),
         "random fills skipped": lambda: build(True)}, args.repeats)
    before, after = medians.values()
    a, b = got.values()
    same = a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    print(f"model build ({arch}, {Path(weights).name}), cores {args.cores}: before "
          f"{before:.2f} s, skipped {after:.2f} s -> {before / after:.2f}x; saves "
          f"{before - after:.2f} s per run; same tensors: {same}")


if __name__ == "__main__":
    main()
