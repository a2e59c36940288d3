"""Config files and spec list files: what ``--config FILE`` and ``@FILE`` read.

A config file holds a command's options by their long names (``n_boot = 200`` for
``--n-boot 200``; dashes or underscores), so twenty models are one list instead of twenty
``--model`` flags. TOML is read with the standard library's ``tomllib`` (``tomli`` on Python
3.10); YAML needs PyYAML (``pip install 'foilbench[yaml]'``). A list file holds one spec per
line (blank lines and ``#`` comments skipped); ``@models.txt`` where a spec is expected reads
it, for models and benchmarks alike, on the command line, in a config file and in Python.

Nothing here knows click: :mod:`foilbench.cli.config_option` applies a file to a command, and
:mod:`foilbench.runner.config` to :func:`foilbench.runner.run` and ``sweep``.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from foilbench.errors import FoilbenchError

#: the prefix that makes a spec a list file: ``--model @models.txt``
LIST_PREFIX = "@"
TOML_SUFFIXES = (".toml",)
YAML_SUFFIXES = (".yaml", ".yml")
MAX_LIST_DEPTH = 4


class ConfigError(FoilbenchError):
    """A config or list file is missing, unreadable, malformed or names an unknown key."""


def _toml_loads(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib  # novermin: imported on 3.11+ only (tomli below)
    else:  # pragma: no cover - Python 3.10 only
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ConfigError("reading a TOML config on Python 3.10 needs tomli, which is "
                              "not installed: pip install tomli") from None
    return tomllib.loads(text)


def _yaml_loads(text: str, path: Path) -> Any:
    try:
        import yaml
    except ModuleNotFoundError:
        raise ConfigError(f"{path}: a YAML config needs PyYAML, which is not installed: "
                          "pip install 'foilbench[yaml]' (or write the config as TOML)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({_one_line(e)})") from None


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]


def read_config(path: str | Path) -> dict[str, Any]:
    """Read a TOML or YAML config file into a dict (keys as written).

    Args:
        path: A ``.toml``, ``.yaml`` or ``.yml`` file.

    Returns:
        The file's top-level table.

    Raises:
        ConfigError: The file is missing, of another type, malformed, or not a table.
    """
    path = Path(path).expanduser()
    suffix = path.suffix.lower()
    if suffix not in TOML_SUFFIXES + YAML_SUFFIXES:
        raise ConfigError(f"{path}: a config file must end in .toml, .yaml or .yml")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config file ({_one_line(e)})") from None
    if suffix in TOML_SUFFIXES:
        try:
            data: Any = _toml_loads(text)
        except ValueError as e:  # tomllib.TOMLDecodeError is a ValueError
            raise ConfigError(f"{path}: not valid TOML ({_one_line(e)})") from None
    else:
        data = _yaml_loads(text, path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must hold a table of option = value, "
                          f"not a {type(data).__name__}")
    return data


def config_digest(path: str | Path) -> str:
    """SHA-256 of the config file's bytes, for provenance."""
    return hashlib.sha256(Path(path).expanduser().read_bytes()).hexdigest()


def key_name(key: str) -> str:
    """A config key in canonical form: ``n-boot`` and ``n_boot`` are both ``n_boot``.

    >>> key_name("--n-boot")
    'n_boot'
    """
    return str(key).strip().lstrip("-").replace("-", "_")


def check_keys(data: Mapping[str, Any], valid: Iterable[str], where: str) -> None:
    """Raise :class:`ConfigError` naming the first unknown key and the valid ones.

    >>> check_keys({"n_bot": 1}, ["n_boot", "seed"], "run.toml (foilbench run)")
    Traceback (most recent call last):
    ...
    foilbench.configfile.ConfigError: run.toml (foilbench run): unknown key 'n_bot' (did you mean n_boot?); valid keys: n_boot, seed
    """
    import difflib

    known = list(dict.fromkeys(valid))
    for key in data:
        if key_name(key) not in known:
            close = difflib.get_close_matches(key_name(key), known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"{where}: unknown key {str(key)[:80]!r}{hint}; valid keys: "
                              f"{', '.join(known)}")


def read_list_file(path: str | Path) -> list[str]:
    """The specs a list file holds: one a line, blank lines and ``#`` comments skipped.

    Args:
        path: A text file, e.g. ``models.txt``.

    Returns:
        The specs in file order, stripped.

    Raises:
        ConfigError: The file cannot be read.
    """
    path = Path(path).expanduser()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"list file {path}: cannot read it ({_one_line(e)})") from None
    out = []
    for line in lines:
        spec = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
        if spec:
            out.append(spec)
    return out


def expand_specs(specs: Iterable[str], base: str | Path | None = None,
                 _depth: int = 0) -> list[str]:
    """Specs with every ``@FILE`` replaced by the specs that list file holds.

    A list file may name further list files (``@more.txt``, relative to its own folder), up
    to a few levels deep.

    Args:
        specs: Model or benchmark specs, some of them ``@FILE``.
        base: Folder a relative ``@FILE`` is read from (default: the working directory).

    Returns:
        The specs, list files expanded in place, order kept.

    Raises:
        ConfigError: A list file is unreadable, empty or nested too deep.
    """
    out: list[str] = []
    for spec in specs:
        if not (isinstance(spec, str) and spec.startswith(LIST_PREFIX)):
            out.append(spec)
            continue
        if _depth >= MAX_LIST_DEPTH:
            raise ConfigError(f"{spec}: list files nested more than {MAX_LIST_DEPTH} deep")
        path = Path(spec[len(LIST_PREFIX):]).expanduser()
        if base is not None and not path.is_absolute():
            path = Path(base) / path
        listed = read_list_file(path)
        if not listed:
            raise ConfigError(f"list file {path} names no spec (one a line; # comments)")
        out += expand_specs(listed, path.parent, _depth + 1)
    return out


def anchored(spec: Any, base: Path) -> Any:
    """``@rel.txt`` in a config file made ``@<config folder>/rel.txt``, so a list file is
    found next to the config that names it; other values unchanged."""
    if isinstance(spec, str) and spec.startswith(LIST_PREFIX):
        path = Path(spec[len(LIST_PREFIX):]).expanduser()
        if not path.is_absolute():
            return LIST_PREFIX + str(base / path)
    return spec
