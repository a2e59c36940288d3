"""The settings of one ``run`` or ``sweep``, shared by the CLI and the Python API.

One frozen object instead of twelve loose arguments: the CLI builds it from its options
(:mod:`foilbench.cli.options`), a Python caller passes keywords, and a scheduler can ship it
to workers unchanged. Only ``seed``, ``n_boot``, ``ci_method`` and ``unit`` change the stored
numbers (:meth:`RunSettings.scoring`); they are also the resume key of a sweep (``unit`` only on
tiered pair benchmarks: :func:`foilbench.evaluation.hashed_unit`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from foilbench.errors import FoilbenchError
from foilbench.models.device import DTYPES
from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from foilbench.stats.breakdown import CI_METHODS
from foilbench.stats.units import DEFAULT_UNIT, UNIT_SETTINGS

DB_FILE = "foilbench.duckdb"
DEFAULT_OUT = "foilbench-runs"
DEFAULT_SUITE = "synth"
MIN_N_BOOT = 100


class RunnerError(FoilbenchError):
    """Bad settings or arguments given to the runner (the message names the setting)."""


@dataclass(frozen=True)
class RunSettings:
    """How to evaluate: device and batching, interval settings, validation, cache, display.

    Build it with keywords, or from a config file or dict with :meth:`from_config`. Only
    ``seed``, ``n_boot``, ``ci_method`` and ``unit`` change the stored numbers.

    Attributes:
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        dtype: Model weights dtype (``float32``, ``float16``, ``bfloat16``).
        batch_size: At most this many unique inputs per forward pass.
        n_boot: Bootstrap resamples of the scene-clustered intervals (>= 100).
        seed: Bootstrap seed.
        ci_method: ``auto`` (scene-clustered bootstrap when items carry ``scene_id``, else
            Wilson), ``bootstrap``, ``wilson`` or ``wald``.
        allow_partial: Drop invalid items (the run is marked partial) instead of refusing
            the benchmark.
        cache_dir: Embedding cache folder (default: the environment's, see
            :class:`store.cache.EmbeddingCache`).
        use_cache: False neither reads nor writes the embedding cache.
        progress: Show progress bars.
        threads: torch threads; 0 chooses from the usable CPUs and their load.
        share_preparation: Prepare each image once per preprocessing across models.
        precision: ``"bf16"``/``"fp16"`` forward passes plus a float32 pass; the share of
            outcomes the precision changed is reported.
        unit: Unit of n on tiered pair benchmarks (``paper``, ``instance``, ``pooled``,
            ``tier``).
    """

    device: str = "auto"
    dtype: str = "float32"
    batch_size: int = 64
    n_boot: int = DEFAULT_N_BOOT
    seed: int = DEFAULT_SEED
    ci_method: str = "auto"
    allow_partial: bool = False
    cache_dir: str | Path | None = None
    use_cache: bool = True
    progress: bool | None = None  # None: bars on a terminal, plain lines in a pipe
    threads: int = 0  # torch threads; 0 = chosen from the usable CPUs and load (runner.threads)
    share_preparation: bool = True  # images prepared once per preprocessing (scoring/prepared)
    precision: str | None = None  # "bf16"/"fp16": also a float32 pass, changed outcomes reported
    unit: str = DEFAULT_UNIT  # unit of n on tiered pair benchmarks (stats.units); "paper"

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise RunnerError(f"dtype {self.dtype!r}: choose one of {', '.join(DTYPES)}")
        if self.ci_method not in CI_METHODS:
            raise RunnerError(f"ci_method {self.ci_method!r}: choose one of "
                              f"{', '.join(CI_METHODS)}")
        if self.unit not in UNIT_SETTINGS:
            raise RunnerError(f"unit {self.unit!r}: choose one of {', '.join(UNIT_SETTINGS)}")
        if self.precision is not None and self.precision not in ("bf16", "fp16"):
            raise RunnerError(f"precision {self.precision!r}: choose bf16 or fp16 (or leave "
                              "it unset for the model's --dtype)")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise RunnerError(f"batch_size must be an integer >= 1, got {self.batch_size!r}")
        if not isinstance(self.n_boot, int) or self.n_boot < MIN_N_BOOT:
            raise RunnerError(f"n_boot must be an integer >= {MIN_N_BOOT}, got {self.n_boot!r}")
        if not isinstance(self.threads, int) or self.threads < 0:
            raise RunnerError(f"threads must be an integer >= 0 (0 = choose), got "
                              f"{self.threads!r}")
        if not isinstance(self.seed, int):
            raise RunnerError(f"seed must be an integer, got {self.seed!r}")

    @property
    def on_invalid(self) -> str:
        """What benchmark validation does with an invalid item: ``"drop"`` or ``"raise"``."""
        return "drop" if self.allow_partial else "raise"

    def scoring(self) -> dict[str, Any]:
        """The settings that change the stored numbers (and key a finished run)."""
        return {"seed": self.seed, "n_boot": self.n_boot, "ci_method": self.ci_method,
                "unit": self.unit}

    def to_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_config(cls, config: Any, command: str = "run") -> RunSettings:
        """The settings a ``run``/``sweep`` config file or dict gives (docs/config.md).

        Args:
            config: A ``.toml``/``.yaml`` path or a dict keyed by the CLI's option names
                (``n_boot``, ``no_cache``, ...); model, benchmark and output keys are
                allowed and ignored here.
            command: ``"run"`` or ``"sweep"``: which keys are valid.

        Returns:
            The settings, defaults where the config says nothing.
        """
        from collections.abc import Mapping

        from foilbench.configfile import read_config
        from foilbench.runner.config_keys import canonical, setting_fields

        if isinstance(config, Mapping):
            raw, where = config, f"config (foilbench {command})"
        else:
            raw, where = read_config(config), f"{config} (foilbench {command})"
        return make_settings(None, setting_fields(canonical(raw, command, where)))


def make_settings(settings: RunSettings | None, options: dict[str, Any]) -> RunSettings:
    """``settings`` with ``options`` (keyword overrides) applied; unknown names are errors."""
    base = settings or RunSettings()
    unknown = sorted(set(options) - set(RunSettings.__dataclass_fields__))
    if unknown:
        raise RunnerError(f"unknown run setting(s): {', '.join(unknown)} (known: "
                          f"{', '.join(RunSettings.__dataclass_fields__)})")
    return RunSettings(**{**asdict(base), **options}) if options else base
