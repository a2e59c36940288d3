"""Decoding images that are not in the page cache, with and without read-ahead.

Before each timed pass every image file is dropped from the page cache
(``posix_fadvise(POSIX_FADV_DONTNEED)``, no root needed), as after a reboot or after the kernel
reclaimed the cache. Each pass then decodes and resizes the files in order, as validation does
(PIL ``load`` and a bicubic resize to 224 px), either plainly or with
:class:`foilbench.data.readahead.ReadAhead` asking for the next files first. Passes alternate;
the script prints median wall and CPU seconds and the wall ratio. On a warm cache the two are
the same work; the difference is the disk wait that read-ahead overlaps with decoding.

    PYTHONPATH=src taskset -c 0 python bench/bench_readahead.py --images /tmp/fb_bench_peers/coco_synth
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def drop_from_cache(paths: list[Path]) -> None:
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def decode_all(paths: list[Path], ahead: bool) -> tuple[float, float]:
    from PIL import Image

    from foilbench.data.readahead import ReadAhead

    advice = ReadAhead(paths) if ahead else None
    t0, c0 = time.perf_counter(), time.process_time()
    for k, p in enumerate(paths):
        if advice is not None:
            advice.reached(k)
        with Image.open(p) as im:
            im.load()
            w, h = im.size
            s = 224 / min(w, h)
            im.resize((round(w * s), round(h * s)), Image.BICUBIC)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", default=None,
                    help="folder of images (default: the SugarCrepe-shaped set of peer_data)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    if not hasattr(os, "posix_fadvise"):
        sys.exit("this bench needs posix_fadvise (Linux)")
    if args.images is None:
        import peer_data

        _, folder = peer_data.sugarcrepe_set(Path(args.work), 1.0)
    else:
        folder = Path(args.images)
    paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in {".jpg", ".jpeg", ".png"})
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for r in range(args.repeats):
        for ahead in ((False, True) if r % 2 == 0 else (True, False)):
            drop_from_cache(paths)
            times[ahead].append(decode_all(paths, ahead))
            wall, cpu = times[ahead][-1]
            print(f"  pass {r + 1}, read-ahead {'on ' if ahead else 'off'}: wall {wall:6.2f} s, "
                  f"CPU {cpu:6.2f} s", flush=True)
    med = {a: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
           for a, t in times.items()}
    print(f"{len(paths):,} images from {folder}, cold page cache each pass")
    for a in (False, True):
        print(f"read-ahead {'on ' if a else 'off'}: median wall {med[a][0]:6.2f} s, "
              f"CPU {med[a][1]:6.2f} s")
    print(f"wall ratio off / on: {med[False][0] / med[True][0]:.2f}x")


if __name__ == "__main__":
    main()
