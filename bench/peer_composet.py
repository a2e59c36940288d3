"""Run CompoSET's own evaluation code, imported from a checkout the user fetched, for timing.

Nothing of CompoSET is copied here: this driver puts the checkout on ``sys.path``, imports its
``eval`` package and calls its command-line entry point ``eval.run.main`` (which calls
``eval.benchmark.run_composet`` with an ``eval.models.VLMScorer``, writes ``<model>.csv`` and
prints ``eval.analyze.print_summary``), exactly as ``python -m eval.run --models KEY
--variations ... --image-root ... --output ... --device cpu`` would.

Adaptations, each the least that lets their code load our tiny local model offline:

1. ``open_clip.add_model_config(CONFIG)``: registers the tiny architecture's JSON config with
   open_clip, so its name resolves (their models are open_clip's built-in names).
2. ``eval.models.MODELS[KEY] = {"model_name": <config name>, "pretrained": WEIGHTS}``: one
   entry per weight file in their registry, the way their ``models.py`` says to add a model ("Add new models by
   extending the MODELS dict"; their custom-weight entries also pass a file path as
   ``pretrained``). ``VLMScorer`` then builds it with ``open_clip.create_model_and_transforms``.
3. ``--device cpu`` (their default is ``cuda``; ``cuda`` when the bench runs on a GPU), ``--variations``/``--image-root`` point at the
   local release (their loader would otherwise download it from the Hugging Face Hub).

Everything else (the per-row, per-tier loop; one image per ``sim`` call, the two captions as
one batch; the CSV) is theirs, including their import of ``transformers`` in ``models.py``.

    python bench/peer_composet.py COMPOSET_REPO CONFIG.json WEIGHTS[,WEIGHTS...] RELEASE_DIR OUT_DIR \
        [DEVICE (cpu; cuda for bench_peers --device cuda)]
    -> OUT_DIR/fbpeer.csv (and fbpeer-1.csv, ... for more weight files: one ``--models`` list,
    one process, as their ``python -m eval.run --models a b c`` runs several models)
"""

from __future__ import annotations

import sys
from pathlib import Path

KEY = "fbpeer"
HOW_TO_GET = ("git clone https://github.com/laure-delisle/CompoSET (tested at commit "
              "e05658744de182aebc8358da58bf7edf14899e87) and pass its folder as --composet-repo")


def check_repo(repo: Path) -> str | None:
    """None when ``repo`` looks like a CompoSET checkout, else what is wrong and how to fix it."""
    need = [repo / "eval" / "run.py", repo / "eval" / "benchmark.py", repo / "eval" / "models.py"]
    missing = [str(p) for p in need if not p.is_file()]
    if missing:
        return f"{repo} is not a CompoSET checkout (missing {', '.join(missing)}): {HOW_TO_GET}"
    return None


def keys(n: int) -> list[str]:
    """Their registry keys of ``n`` models: ``fbpeer``, ``fbpeer-1``, ... (one CSV each)."""
    return [KEY] + [f"{KEY}-{k}" for k in range(1, n)]


def main() -> None:
    repo, config = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    weights = [Path(w).resolve() for w in sys.argv[3].split(",")]
    root, out = Path(sys.argv[4]).resolve(), Path(sys.argv[5]).resolve()
    device = sys.argv[6] if len(sys.argv) > 6 else "cpu"
    problem = check_repo(repo)
    if problem:
        raise SystemExit(problem)
    sys.path.insert(0, str(repo))
    import open_clip
    from eval import models as composet_models
    from eval import run as composet_run

    open_clip.add_model_config(config)  # adaptation 1
    for key, w in zip(keys(len(weights)), weights, strict=True):  # adaptation 2
        composet_models.MODELS[key] = {"model_name": config.stem, "pretrained": str(w)}
    sys.argv = ["eval.run", "--models", *keys(len(weights)), "--variations",
                str(root / "variations.parquet"), "--image-root", str(root), "--output",
                str(out), "--device", device]  # 3
    composet_run.main()


if __name__ == "__main__":
    main()
