"""The keys of a run or sweep config: the long option names of ``foilbench run``/``sweep``.

Data and pure functions only (no runner imports), so :class:`~foilbench.runner.RunSettings`
and :mod:`foilbench.runner.config` can both use them without an import circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foilbench.configfile import ConfigError, anchored, check_keys, key_name

#: config key -> RunSettings field (same value)
SETTING_KEYS = {"device": "device", "dtype": "dtype", "precision": "precision",
                "batch_size": "batch_size", "n_boot": "n_boot", "seed": "seed",
                "bootstrap_seed": "seed", "progress": "progress",
                "ci_method": "ci_method", "unit": "unit", "allow_partial": "allow_partial",
                "cache": "cache_dir", "threads": "threads"}
#: second names of a field above, accepted but not written into a recorded config
ALIAS_KEYS = ("bootstrap_seed", "progress")
#: config key -> RunSettings field holding the negation (``no_cache = true``)
NEGATED_KEYS = {"no_cache": "use_cache", "quiet": "progress"}
#: config key -> RayOptions field (``ray`` is the address)
RAY_KEYS = {"ray": "address", "ray_retries": "retries", "ray_cpus": "cpus_per_model",
            "ray_gpus": "gpus_per_model", "ray_max_workers": "max_workers",
            "ray_shard_size": "shard_size", "ray_shared_cache": "shared_cache"}
SPEC_KEYS = {"model": "models", "models": "models", "benchmark": "benchmarks",
             "benchmarks": "benchmarks"}
#: keys of one command only; log_level is the CLI's (the library configures no logging)
COMMAND_KEYS = {"run": ("out", "no_report", "rerun", "log_level"),
                "sweep": ("out", "db", "log_level", "matrix_only")}


def valid_keys(command: str) -> list[str]:
    """Every key a ``command`` (``"run"`` or ``"sweep"``) config may hold."""
    return ["models", "benchmarks", *COMMAND_KEYS[command], *SETTING_KEYS, *NEGATED_KEYS,
            *RAY_KEYS, "model", "benchmark"]


def canonical(raw: Mapping[str, Any], command: str, where: str,
              base: Path | None = None) -> dict[str, Any]:
    """``raw`` checked and keyed canonically (``n-boot`` -> ``n_boot``, ``model`` ->
    ``models``); spec lists as lists, ``@FILE`` entries anchored at ``base``."""
    check_keys(raw, valid_keys(command), where)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = SPEC_KEYS.get(key_name(key), key_name(key))
        if name in values:
            raise ConfigError(f"{where}: {key!r} is given twice (as {name} and an alias)")
        if name in ("models", "benchmarks"):
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: {name} must be a list of spec strings")
            if base is not None:
                value = [anchored(v, base) for v in value]
        values[name] = value
    return values


def setting_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """RunSettings field -> value for the settings keys among canonical ``values``."""
    fields: dict[str, Any] = {}
    for key, name in SETTING_KEYS.items():
        if key in values:
            fields[name] = values[key]
    for key, name in NEGATED_KEYS.items():
        if key in values:
            if not isinstance(values[key], bool):
                raise ConfigError(f"config key {key} must be true or false, got "
                                  f"{values[key]!r}")
            fields[name] = not values[key]
    return fields
