"""``--config FILE``: a command's options from a TOML or YAML file, flags overriding it.

The file's keys are the command's long option names (``n_boot`` or ``n-boot`` for
``--n-boot``; a repeatable option also by its plural, ``models``); arguments by their name
(``captions``). The file becomes click's ``default_map`` in an eager callback, so every
option is settable, a flag typed on the command line wins, and click converts and checks
each value as it would the flag's. ``@FILE`` entries of ``models``/``benchmarks`` are read
relative to the config's folder. Reading is :mod:`foilbench.configfile`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from foilbench.configfile import (
    ConfigError,
    anchored,
    check_keys,
    config_digest,
    key_name,
    read_config,
)

CONFIG_PARAM = "config_file"
#: options whose ``@FILE`` entries are spec list files
SPEC_PARAMS = ("models", "benchmarks")


def config_keys(command: click.Command) -> dict[str, str]:
    """Config key -> click parameter name, for every parameter of ``command``."""
    keys: dict[str, str] = {}
    for param in command.params:
        if param.name is None or param.name == CONFIG_PARAM or \
                getattr(param, "is_eager", False) and not param.expose_value:
            continue
        if isinstance(param, click.Argument):
            keys[key_name(param.name)] = param.name
            continue
        for long in (o for o in param.opts if o.startswith("--")):  # an old name too
            keys[key_name(long)] = param.name
        if getattr(param, "multiple", False):
            keys[key_name(param.name)] = param.name
    return keys


def command_name(ctx: click.Context) -> str:
    """``run``, ``sweep`` or ``construct composet``: the subcommand path below foilbench."""
    names = []
    while ctx is not None and ctx.command.name not in (None, "cli"):
        names.append(ctx.command.name)
        ctx = ctx.parent
    return " ".join(reversed(names))


def _apply(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser().resolve()
    command = ctx.command
    where = f"{path} (foilbench {command_name(ctx)})"
    keys = config_keys(command)
    try:
        data = read_config(path)
        check_keys(data, keys, where)
    except ConfigError as e:
        raise click.BadParameter(str(e), ctx=ctx, param=param) from None
    defaults: dict[str, Any] = {}
    for key, item in data.items():
        name = keys[key_name(key)]
        if name in defaults:
            raise click.BadParameter(f"{where}: {key!r} sets {name} a second time",
                                     ctx=ctx, param=param)
        if name in SPEC_PARAMS:
            item = [item] if isinstance(item, str) else item
            if not isinstance(item, list) or not all(isinstance(v, str) for v in item):
                raise click.BadParameter(f"{where}: {key} must be a list of spec strings",
                                         ctx=ctx, param=param)
            item = [anchored(v, path.parent) for v in item]
        defaults[name] = item
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return str(path)


def config_option() -> Callable[[Callable], Callable]:
    """Decorator adding ``--config FILE`` to a command (read before its other options)."""
    return click.option(
        "--config", CONFIG_PARAM, default=None, is_eager=True, callback=_apply,
        type=click.Path(dir_okay=False, exists=True), metavar="FILE",
        help="Read this command's options from a TOML (or, with PyYAML, YAML) file: keys "
             "are the long option names (n_boot = 200; models = [\"a\", \"@models.txt\"]); "
             "flags typed here override the file (docs/config.md).")


def invocation(ctx: click.Context | None = None) -> dict[str, Any]:
    """The command's resolved options (file, flags and defaults merged), where each came
    from, and the config file with its SHA-256: what provenance records."""
    ctx = ctx or click.get_current_context()
    values = {k: (str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v)
              for k, v in ctx.params.items() if k != CONFIG_PARAM}
    record: dict[str, Any] = {"values": values}
    file = ctx.params.get(CONFIG_PARAM)
    if file:
        record["file"] = file
        record["sha256"] = config_digest(file)
        source = click.core.ParameterSource.DEFAULT_MAP
        record["from_file"] = sorted(k for k in values if ctx.get_parameter_source(k) == source)
    return record
