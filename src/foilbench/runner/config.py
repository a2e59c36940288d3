"""A run or sweep config (file or dict) as the runner's arguments, and back for provenance.

The keys are the long option names of ``foilbench run`` / ``foilbench sweep`` (``n_boot``
for ``--n-boot``; ``models``/``benchmarks`` or ``model``/``benchmark`` for the repeatable
specs, ``@FILE`` entries allowed), so one file serves the CLI (``--config run.toml``) and
Python (``runner.run(config="run.toml")``, :meth:`RunSettings.from_config`). The resolved
config (:func:`resolved_config`) uses the same keys, so what provenance records is itself a
valid config file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilbench.configfile import ConfigError, config_digest, read_config
from foilbench.runner.config_keys import (
    ALIAS_KEYS,
    NEGATED_KEYS,
    RAY_KEYS,
    SETTING_KEYS,
    canonical,
    setting_fields,
)
from foilbench.runner.settings import RunSettings, make_settings


@dataclass
class LoadedConfig:
    """A config's values by canonical key, and the file they came from (if any)."""

    values: dict[str, Any]
    file: Path | None = None
    sha256: str | None = None

    def record(self) -> dict[str, Any]:
        """Where the config came from, for provenance."""
        return {"file": str(self.file), "sha256": self.sha256} if self.file else {}


def load(config: str | Path | Mapping[str, Any], command: str) -> LoadedConfig:
    """Read and check a ``run``/``sweep`` config.

    Args:
        config: A ``.toml``/``.yaml`` path or a mapping with the same keys.
        command: ``"run"`` or ``"sweep"`` (``db`` only for sweep, ``no_report`` only for
            run).

    Returns:
        The values by canonical key; relative ``@FILE`` list entries anchored at the
            config file's folder.

    Raises:
        ConfigError: Unreadable file, unknown key, or a spec list that is not strings.
    """
    if isinstance(config, Mapping):
        raw, path, where = dict(config), None, f"config (foilbench {command})"
    else:
        path = Path(config).expanduser().resolve()
        raw, where = read_config(path), f"{path} (foilbench {command})"
    values = canonical(raw, command, where, path.parent if path else None)
    return LoadedConfig(values, path, config_digest(path) if path else None)


def settings_of(values: Mapping[str, Any], base: RunSettings | None = None) -> RunSettings:
    """The :class:`RunSettings` a config's canonical values give (other keys ignored)."""
    return make_settings(base, setting_fields(values))


def ray_of(values: Mapping[str, Any]) -> Any:
    """The RayOptions a config's ``ray*`` keys give, or None without ``ray``."""
    if values.get("ray") in (None, False):
        extra = [k for k in RAY_KEYS if k != "ray" and k in values]
        if extra:
            raise ConfigError(f"config keys {', '.join(extra)} only apply with ray")
        return None
    from foilbench.runner.ray.cluster import LOCAL, RayOptions

    address = values["ray"]
    fields: dict[str, Any] = {"address": LOCAL if address is True else str(address)}
    fields.update({name: values[key] for key, name in RAY_KEYS.items()
                   if key != "ray" and key in values})
    return RayOptions(**fields)


def resolved_config(*, models: list[Any], benchmarks: list[Any], out: Any,
                    settings: RunSettings, ray: Any, extra: dict[str, Any],
                    loaded: LoadedConfig | None) -> dict[str, Any]:
    """What a run or sweep ran with, under the config keys (a valid config itself), and
    the file it was read from."""
    values: dict[str, Any] = {
        "models": [m if isinstance(m, str) else str(getattr(m, "spec", m)) for m in models],
        "benchmarks": [b if isinstance(b, str) else str(getattr(b, "name", b))
                       for b in benchmarks],
        "out": str(out), **extra}
    for key, name in SETTING_KEYS.items():
        if key in ALIAS_KEYS:
            continue
        value = getattr(settings, name)
        values[key] = str(value) if isinstance(value, Path) else value
    for key, name in NEGATED_KEYS.items():
        values[key] = not getattr(settings, name)
    if ray is not None:
        for key, name in RAY_KEYS.items():
            values[key] = getattr(ray, name)
    record = {"values": {k: v for k, v in values.items() if v is not None}}
    if loaded is not None and loaded.file is not None:
        record.update(loaded.record())
    return record


@dataclass
class Arguments:
    """A run's or sweep's arguments after the config: explicit ones win over the file."""

    models: Any
    benchmarks: Any
    out: Any
    settings: RunSettings | None
    ray: Any
    report: bool = True
    db: Any = None
    loaded: LoadedConfig | None = None


def merged(config: str | Path | Mapping[str, Any] | None, command: str, *, models: Any,
           benchmarks: Any, out: Any, settings: RunSettings | None, ray: Any,
           report: bool | None = None, db: Any = None) -> Arguments:
    """The runner's arguments with ``config`` filled in where the caller gave None.

    A ``settings`` object given with a config replaces the config's settings (keyword
    options to ``run``/``sweep`` still override single ones).
    """
    from foilbench.runner.settings import DEFAULT_OUT

    loaded = load(config, command) if config is not None else None
    values = loaded.values if loaded is not None else {}
    if settings is None and values:
        settings = settings_of(values)
    if ray is None:
        ray = ray_of(values)
    return Arguments(
        models=models if models is not None else values.get("models"),
        benchmarks=benchmarks if benchmarks is not None else values.get("benchmarks"),
        out=out if out is not None else values.get("out", DEFAULT_OUT),
        settings=settings, ray=ray,
        report=report if report is not None else not values.get("no_report", False),
        db=db if db is not None else values.get("db"), loaded=loaded)
