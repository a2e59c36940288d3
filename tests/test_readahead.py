"""Read-ahead advice for image files: each file asked for once, a window ahead, never blocking."""

from __future__ import annotations

import os
import threading

import pytest

from foilbench.data import readahead
from foilbench.data.readahead import ReadAhead, advise_will_need


def test_each_file_is_asked_for_once_a_window_ahead(monkeypatch, tmp_path):
    asked: list[str] = []
    monkeypatch.setattr(readahead, "advise_will_need", lambda p: asked.append(os.path.basename(p)))
    paths = [tmp_path / f"{k}.jpg" for k in range(10)]
    ahead = ReadAhead(paths, window=3)
    ahead.reached(0)
    assert asked == ["0.jpg", "1.jpg", "2.jpg", "3.jpg"]
    ahead.reached(1)
    assert asked[-1] == "4.jpg" and len(asked) == 5
    ahead.reached(1)  # asked again: nothing new
    assert len(asked) == 5
    ahead.reached(8)  # a jump (threads finish out of order): the gap is asked for too
    assert asked == [f"{k}.jpg" for k in range(10)]
    ahead.reached(9)
    assert len(asked) == 10
    with pytest.raises(ValueError, match="window"):
        ReadAhead(paths, window=0)


def test_threads_ask_for_every_file_exactly_once(monkeypatch, tmp_path):
    asked: list[str] = []
    lock = threading.Lock()

    def record(p):
        with lock:
            asked.append(str(p))

    monkeypatch.setattr(readahead, "advise_will_need", record)
    paths = [tmp_path / f"{k}.png" for k in range(200)]
    ahead = ReadAhead(paths, window=5)
    threads = [threading.Thread(target=lambda s=s: [ahead.reached(k) for k in range(s, 200, 4)])
               for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(asked) == sorted(map(str, paths))


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(os, "posix_fadvise"),
                    reason="POSIX only: FIFOs and posix_fadvise")
def test_advice_never_blocks_and_ignores_what_it_cannot_read(monkeypatch, tmp_path):
    calls: list[int] = []
    real = os.posix_fadvise
    monkeypatch.setattr(os, "posix_fadvise", lambda fd, o, n, a: calls.append(a) or real(fd, o, n, a))
    image = tmp_path / "a.jpg"
    image.write_bytes(b"\xff\xd8" + bytes(5000))
    advise_will_need(image)
    assert calls == [os.POSIX_FADV_WILLNEED]
    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (advise_will_need(fifo), done.set()), daemon=True)
    worker.start()
    assert done.wait(5), "advising a FIFO blocked"
    advise_will_need(tmp_path / "missing.jpg")
    advise_will_need(tmp_path)  # a folder
    assert calls == [os.POSIX_FADV_WILLNEED]  # only the regular file was advised
