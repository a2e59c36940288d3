"""What a reviewed benchmark keeps of its construction: the files and the funnel.

A benchmark built by ``foilbench construct`` holds its construction record beside the items
(``construction_log.jsonl``: every candidate and why it was dropped; ``construction.json``: the
pipeline, every backend fingerprint and prompt version; ``survival.{json,md}``: candidates per
stage). Human QC is the last stage of that funnel (CompoSET App. B.4 follows the automatic
steps), so the export carries the record along, unchanged, and the QC report starts from it:
how many candidates the pipeline made, how many its automatic checks passed to review, and
how many the review kept.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from foilbench.data.format import Benchmark

CONSTRUCTION_FILES = ("construction_log.jsonl", "construction.json", "survival.json",
                      "survival.md")


def copy_construction_files(src: Path, out: Path) -> list[str]:
    """Copy the construction record of ``src`` (those files it has) into ``out``."""
    copied = []
    for name in CONSTRUCTION_FILES:
        if (src / name).is_file():
            shutil.copyfile(src / name, out / name)
            copied.append(name)
    return copied


def construction_summary(bench: Benchmark) -> dict | None:
    """The manifest's construction provenance, condensed for the QC report (None when the
    benchmark was not built by ``foilbench construct``)."""
    prov = bench.manifest.extras.get("construction")
    if not isinstance(prov, dict):
        return None
    backends = {role: b.get("spec") or b.get("fingerprint", "?")
                for role, b in (prov.get("backends") or {}).items()}
    return {"pipeline": prov.get("pipeline", "?"), "backends": backends,
            "fingerprints": {role: b.get("fingerprint", "?")
                             for role, b in (prov.get("backends") or {}).items()},
            "prompts": list(prov.get("prompts") or []),
            "survival": list(prov.get("survival") or []),
            "spent_usd": prov.get("spent_usd")}


def construction_markdown(summary: dict | None, files: list[str], reviewed: int,
                          kept: int) -> list[str]:
    """The report's "Construction" section: provenance, then the automatic funnel."""
    if summary is None:
        return []
    from foilbench.construct.engine.log import survival_cells

    lines = ["## Construction", "",
             f"Built by `foilbench construct {summary['pipeline']}` with "
             + ", ".join(f"{r} `{s}`" for r, s in sorted(summary["backends"].items()))
             + "; prompts " + ", ".join(f"`{p}`" for p in summary["prompts"]) + ".", ""]
    rows = survival_cells(summary["survival"])
    if rows:
        lines += ["Automatic stages (candidates in, passed, dropped by reason), then this "
                  f"review: {reviewed} instance(s) reviewed, {kept} kept.", "",
                  "| stage | unit | in | out | dropped | survival | why dropped |",
                  "|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        lines.append("")
    if files:
        lines += ["The construction record travels with this benchmark: "
                  + ", ".join(f"`{f}`" for f in files) + " (every candidate, every stage, "
                  "why each was dropped; every backend fingerprint and prompt version).", ""]
    return lines
