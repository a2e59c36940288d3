"""Draw docs/report.png (the top of the report: the headline) and docs/report_full.png (the
whole page) from a results database, in headless Chromium at 1400 px wide, after checking the
page for cut titles and raw frames (tests/_report_checks.py); refuses to save if it finds any.
With --sections ID,ID,... it draws only those sections, one under the other, to --name
(docs/report_analyses.png: the analysis sections of issue 26).

    PYTHONPATH=src:tests python docs/report_screenshots.py foilbench-runs/foilbench.duckdb
    PYTHONPATH=src:tests python docs/report_screenshots.py DB \
        --sections units,robustness,relations,compass --name report_analyses.png

The pictures go to a new temporary folder (printed) unless --out-dir names one, or
--update-docs rewrites the tracked ones in docs/ (what a maintainer does after a change
to the report).
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


def shoot_sections(db: str, ids: list[str], out_path: str) -> Path:
    """The report sections ``ids`` (element ids), each drawn alone, stacked top to bottom."""
    from PIL import Image

    from _browser import browser_page
    from _report_checks import page_problems
    from foilbench.report import write_report

    with tempfile.TemporaryDirectory() as tmp:
        html = write_report(db, [], Path(tmp) / "report.html")
        with browser_page(width=WIDTH) as (page, errors):
            page.goto(html.resolve().as_uri())
            problems = page_problems(page) + errors
            if problems:
                sys.exit("report has problems:\n" + "\n".join(problems))
            missing = [i for i in ids if page.locator(f"#{i}").count() == 0]
            if missing:
                sys.exit(f"the report has no section {', '.join(missing)}")
            shots = [Image.open(io.BytesIO(page.locator(f"#{i}").screenshot())).convert("RGB")
                     for i in ids]
    width = max(s.width for s in shots)
    sheet = Image.new("RGB", (width, sum(s.height + 12 for s in shots)), (246, 247, 249))
    y = 0
    for s in shots:
        sheet.paste(s, (0, y))
        y += s.height + 12
    out = Path(out_path)
    sheet.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--out-dir", default=None,
                        help="folder for the pictures (default: a new temporary folder)")
    parser.add_argument("--update-docs", action="store_true",
                        help="rewrite the tracked pictures in docs/ (same as --out-dir docs)")
    parser.add_argument("--sections", default="", help="comma-separated section ids")
    parser.add_argument("--name", default="report_analyses.png")
    args = parser.parse_args()
    if args.update_docs and args.out_dir not in (None, "docs"):
        parser.error("--update-docs writes docs/; leave out --out-dir")
    args.out_dir = "docs" if args.update_docs else (
        args.out_dir or tempfile.mkdtemp(prefix="foilbench-screenshots-"))
    if args.sections:
        path = shoot_sections(args.db, args.sections.split(","),
                              str(Path(args.out_dir) / args.name))
        print(path, path.stat().st_size, "bytes")
        return
    for path in shoot(args.db, args.out_dir):
        print(path, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
