"""Caption log-likelihood normalisation per benchmark: the paper's where a paper states one.

Auto-Comp §3 (Evaluation Protocol): "For generative MLLMs, we score each candidate caption by
its log-likelihood under the model conditioned on the image, summed over the caption's tokens
and obtained from a single forward pass per candidate." -> ``sum``.

CompoSET App. G.4: "Each candidate caption is scored by its mean per-token log-likelihood under
the image (length-normalized; without normalization, BLIP-2 on SugarCrepe inflates I2T by ~11
pp)." -> ``mean``.

The rule, first match wins: the user's ``?norm=`` on the model spec (stated); the benchmark
manifest's ``extras["loglik_norm"]`` (``{"norm": ..., "source": ...}``, set by the Auto-Comp
builders); the benchmark's name (``autocomp*`` -> sum; ``composet*`` and the CompoSET-style
``world-pairs`` -> mean); else the adapter's own default (foilbench's: ``mean``). The choice
and its source go into the model fingerprint's extras (the norm itself into the fingerprint)
and into the run's ``eval_stats`` (``loglik_norm``, ``loglik_norm_source``).
"""

from __future__ import annotations

from typing import Any

AUTOCOMP = ("sum", "Auto-Comp §3 (log-likelihood summed over the caption's tokens)")
COMPOSET = ("mean", "CompoSET App. G.4 (mean per-token log-likelihood, length-normalised)")
# benchmark name prefix -> (norm, source)
BY_NAME: tuple[tuple[str, tuple[str, str]], ...] = (
    ("autocomp", AUTOCOMP),
    ("composet", COMPOSET),
    ("world-pairs", COMPOSET),
)
NORMS = ("sum", "mean")


def benchmark_norm(benchmark) -> tuple[str, str] | None:
    """``(norm, source)`` the benchmark's paper states, or None when none is known."""
    stated = (benchmark.manifest.extras or {}).get("loglik_norm")
    if isinstance(stated, dict) and stated.get("norm") in NORMS:
        return str(stated["norm"]), str(stated.get("source") or "benchmark manifest")
    if isinstance(stated, str) and stated in NORMS:
        return stated, "benchmark manifest"
    name = benchmark.name.lower()
    for prefix, choice in BY_NAME:
        if name.startswith(prefix):
            return choice
    return None


def for_benchmark(adapter: Any, benchmark) -> Any:
    """The adapter to score ``benchmark`` with: a log-likelihood scorer whose user did not
    state ``?norm=`` takes the benchmark's (``adapter.with_default_norm``); others as given."""
    choose = getattr(adapter, "with_default_norm", None)
    choice = benchmark_norm(benchmark)
    if choose is None or choice is None:
        return adapter
    return choose(*choice)


def norm_stats(adapter: Any) -> dict[str, str]:
    """``{"loglik_norm", "loglik_norm_source"}`` for a log-likelihood scorer, else ``{}``."""
    extras = adapter.info.extras or {}
    if not extras.get("norm"):
        return {}
    return {"loglik_norm": str(extras["norm"]),
            "loglik_norm_source": str(extras.get("norm_source", ""))}
