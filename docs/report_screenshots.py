"""Draw docs/report.png (the top of the report: the headline) and docs/report_full.png (the
whole page) from a results database, in headless Chromium at 1400 px wide, after checking the
page for cut titles and raw frames (tests/_report_checks.py); refuses to save if it finds any.

    PYTHONPATH=src:tests python docs/report_screenshots.py foilbench-runs/foilbench.duckdb
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

WIDTH = 1400


def shoot(db: str, out_dir: str = "docs") -> tuple[Path, Path]:
    from PIL import Image

    from _browser import browser_page
    from _report_checks import page_problems
    from foilbench.report import write_report

    out = Path(out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        html = write_report(db, [], Path(tmp) / "report.html")
        with browser_page(width=WIDTH) as (page, errors):
            page.goto(html.resolve().as_uri())
            problems = page_problems(page) + errors
            if problems:
                sys.exit("report has problems:\n" + "\n".join(problems))
            top = page.evaluate("document.querySelector('#summary').getBoundingClientRect()"
                                ".bottom + window.scrollY + 12")
            png = page.screenshot(full_page=True)
    full = Image.open(io.BytesIO(png)).convert("RGB")
    head = full.crop((0, 0, full.width, min(full.height, int(top))))
    paths = out / "report.png", out / "report_full.png"
    head.save(paths[0], optimize=True)
    full.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(paths[1], optimize=True)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--out-dir", default="docs")
    args = parser.parse_args()
    for path in shoot(args.db, args.out_dir):
        print(path, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
