"""Prefetching, the n-gram totals, the SVG figures and the fast process exit (no timings)."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foilbench.audit.ngram import BOS, EOS, NgramLM, Queries
from foilbench.errors import BenchmarkError
from foilbench.report import figures
from foilbench.scoring import encode
from foilbench.scoring.encode import Timer, encode_unique

SRC = Path(__file__).resolve().parents[1] / "src"


def _embed(inputs):
    return np.array([[float(x), float(x) ** 2] for x in inputs], dtype=np.float32)


@pytest.mark.parametrize("workers", [0, 1, 3])
def test_prefetched_encoding_equals_in_turn_loading(workers):
    hashes = [f"h{k}" for k in range(23)]
    in_flight, peak, lock = [0], [0], threading.Lock()

    def load_one(p):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        return p

    def embed(inputs):
        with lock:
            in_flight[0] -= len(inputs)
        return _embed(inputs)

    timer = Timer()
    got, encoded, hits = encode_unique(
        hashes, lambda pos: list(pos), embed, fingerprint="f", cache=None, batch_size=4,
        timer=timer, label="t", progress=False, load_one=load_one, workers=workers)
    assert (encoded, hits) == (23, 0)
    assert np.array_equal(got, _embed(range(23)))
    if workers:  # bounded: never more than PREFETCH_BATCHES + 1 batches loaded ahead
        assert peak[0] <= (encode.PREFETCH_BATCHES + 1) * 4
        assert timer.seconds["prefetch"] >= 0.0


def test_order_sets_the_batching_but_not_the_answer():
    hashes = [f"h{k}" for k in range(10)]
    seen = []

    def embed(inputs):
        seen.append(list(inputs))
        return _embed(inputs)

    keys = [5, 1, 9, 3, 7, 0, 8, 2, 6, 4]
    got, _, _ = encode_unique(hashes, lambda pos: list(pos), embed, fingerprint="f", cache=None,
                              batch_size=3, timer=Timer(), label="t", progress=False, order=keys)
    assert seen[0] == [5, 1, 7]  # the three smallest keys first
    assert np.array_equal(got, _embed(range(10)))


def test_a_failed_decode_on_a_worker_names_the_file(tmp_path):
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not an image")

    def load_one(p):
        return encode.open_rgb(bad) if p == 5 else p

    with pytest.raises(BenchmarkError, match="broken.png"):
        encode_unique([f"h{k}" for k in range(9)], lambda pos: list(pos), _embed,
                      fingerprint="f", cache=None, batch_size=2, timer=Timer(), label="t",
                      progress=False, load_one=load_one, workers=2)


def _reference_prob(lm: NgramLM, word, history):
    """Witten-Bell written out from the formula, summing the counts every time."""
    p = (lm.unigram.get(word, 0) + 1) / (sum(lm.unigram.values()) + len(lm.unigram) + 1)
    for n in range(1, len(history) + 1):
        seen = lm.follow.get(history[-n:])
        if not seen:
            break
        c, t = sum(seen.values()), len(seen)
        p = (seen.get(word, 0) + t * p) / (c + t)
    return p


def test_ngram_totals_and_memo_change_no_number():
    train = [s.split() for s in ["a red cube left of a blue sphere", "two red cubes",
                                 "a blue sphere right of a red cube", "a cat on a mat"]]
    lm = NgramLM(3).fit(train)
    tests = [s.split() for s in ["a red sphere", "a blue cube left of two cats", "zebra", ""]]
    for _ in range(2):  # the second pass reads the memo
        for tokens in tests:
            seq = [BOS, BOS, *tokens, EOS]
            want = sum(math.log(_reference_prob(lm, seq[i], tuple(seq[i - 2:i])))
                       for i in range(2, len(seq))) / (len(seq) - 2)
            assert lm.mean_logprob(tokens) == want
    assert Counter(lm.follow[("a",)])["red"] == 2


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_vectorised_ngram_scores_equal_the_model_exactly(order):
    rng = np.random.default_rng(order)
    vocab = ["a", "red", "blue", "cube", "sphere", "left", "of", "two", "cats", "the"]
    sentences = [list(rng.choice(vocab, int(rng.integers(0, 9)))) for _ in range(60)]
    sentences.append(["zebra", "unseen"])  # words never in training
    queries = Queries(sentences, order)
    for train in (np.arange(0, 60, 2), np.array([], dtype=np.int64), np.array([5])):
        lm = NgramLM(order).fit([sentences[i] for i in train])
        want = np.array([lm.mean_logprob(s) for s in sentences])
        assert np.array_equal(queries.fit_mean_logprobs(train), want)


def _parse(fig) -> ET.Element:
    root = ET.fromstring(fig.to_svg())
    assert root.tag.endswith("svg")
    return root


def test_svg_figures_are_well_formed_and_escape_labels():
    nasty = '<script>alert(1)</script> & "q"'
    rows = pd.DataFrame({"label": [nasty, "b"], "value": [0.4, np.nan], "ci_low": [0.3, np.nan],
                         "ci_high": [0.5, np.nan], "chance": [0.25, 0.5]})
    svg = figures.forest_plot(rows, "intervals").to_svg()
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    _parse(figures.forest_plot(rows, "intervals"))
    grid = pd.DataFrame([[0.1, np.nan], [0.9, 0.5]], index=["modify_color", nasty],
                        columns=["short", "long"])
    heat = _parse(figures.heatmap(grid, "Group %"))
    assert len([e for e in heat.iter() if e.tag.endswith("rect")]) >= 4
    ecdf = figures.ecdf_plot({"I2T": np.random.default_rng(0).normal(size=5000),
                              "empty": np.array([np.nan])}, "margins", "margin")
    paths = [e for e in _parse(ecdf).iter() if e.tag.endswith("path")]
    assert len(paths) == 1 and paths[0].get("d").count("L") <= 2 * 400 + 1
    bars = pd.DataFrame({"swap": [0.5, 0.2], "confusion": [0.4, np.nan]}, index=[2, 3])
    _parse(figures.grouped_bars(bars, "swap vs confusion", chance=0.5))


def _foilbench(*args, env_extra=None):
    import os

    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return subprocess.run([sys.executable, "-m", "foilbench", *args], capture_output=True,
                          text=True, env=env | (env_extra or {}), timeout=300)


def test_fast_exit_keeps_output_and_exit_codes(tmp_path):
    ok = _foilbench("--version")
    assert ok.returncode == 0 and "foilbench" in ok.stdout
    bad = _foilbench("inspect", str(tmp_path / "missing"))
    assert bad.returncode == 2 and "error:" in bad.stderr


def test_exit_now_keeps_the_normal_exit_while_a_thread_runs():
    from foilbench.cli.main import exit_now

    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        with pytest.raises(SystemExit) as info:
            exit_now(3)
        assert info.value.code == 3
    finally:
        stop.set()
        worker.join()
