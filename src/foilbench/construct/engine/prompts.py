"""Packaged, versioned prompts (``name@version``), written from the papers' descriptions.

Each prompt is a text file in its method's ``construct/<method>/prompts/`` named ``<name>.txt``
(``<method>`` is the name's first part)::

    name: sugarcrepe.locate
    version: 1
    temperature: 0
    source: SugarCrepe App. D.2, step (1) of Replace
    [system]
    ...
    [user]
    ... $caption ...

Header lines are ``key: value`` until the first ``[section]``. Placeholders are
``string.Template`` style (``$name`` / ``${name}``), so JSON braces in examples need no
escaping. The version is part of every request (``TextRequest.prompt_id``), hence of every call
key: editing a prompt means bumping its version, and the stage cache never mixes versions.
The manifest of every constructed benchmark lists the prompt ids it used, and beside each
its content hash (:attr:`Prompt.sha256`, of the whole file): a prompt edited without a version
bump is then visible in the provenance, not hidden behind an unchanged ``name@version``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from string import Template

from foilbench.construct import METHODS
from foilbench.errors import FoilbenchError
from foilbench.hashing import sha256_text

_SECTION = re.compile(r"^\[(system|user)\]\s*$")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: str
    user: str
    temperature: float = 0.0
    source: str = ""
    #: SHA-256 of the prompt file's text (header, system and user parts)
    sha256: str = ""

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    def render(self, **fields: object) -> str:
        """The user message with ``fields`` substituted; a missing field raises."""
        try:
            return Template(self.user).substitute({k: str(v) for k, v in fields.items()})
        except KeyError as e:
            raise FoilbenchError(f"prompt {self.id}: no value for placeholder ${e.args[0]}") \
                from None


def parse_prompt(text: str, where: str = "<prompt>") -> Prompt:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = m.group(1)
            sections[current] = []
        elif current is None:
            if line.strip():
                key, sep, value = line.partition(":")
                if not sep:
                    raise FoilbenchError(f"{where}: header line {line!r} is not 'key: value'")
                header[key.strip()] = value.strip()
        else:
            sections[current].append(line)
    for key in ("name", "version"):
        if key not in header:
            raise FoilbenchError(f"{where}: missing header {key!r}")
    if "user" not in sections:
        raise FoilbenchError(f"{where}: missing [user] section")
    return Prompt(name=header["name"], version=header["version"],
                  system="\n".join(sections.get("system", [])).strip(),
                  user="\n".join(sections["user"]).strip(),
                  temperature=float(header.get("temperature", 0.0)),
                  source=header.get("source", ""), sha256=sha256_text(text))


@cache
def load_prompt(name: str) -> Prompt:
    """The packaged prompt ``name`` (e.g. ``"composet.foils"``)."""
    method = name.partition(".")[0]
    resource = (files(f"foilbench.construct.{method}").joinpath("prompts", f"{name}.txt")
                if method in METHODS else None)
    if resource is None or not resource.is_file():
        raise FoilbenchError(f"no packaged prompt {name!r}; possible: {', '.join(prompt_names())}")
    prompt = parse_prompt(resource.read_text(encoding="utf-8"), where=f"prompts/{name}.txt")
    if prompt.name != name:
        raise FoilbenchError(f"prompts/{name}.txt declares name {prompt.name!r}")
    return prompt


def prompt_names() -> list[str]:
    return sorted(p.name[:-4] for method in METHODS
                  for p in files(f"foilbench.construct.{method}").joinpath("prompts").iterdir()
                  if p.name.endswith(".txt"))


def template_bytes(name: str) -> int:
    """UTF-8 bytes of packaged prompt ``name``'s system and user text, fields unfilled (the
    spend plans add their fields' bounds to it)."""
    prompt = load_prompt(name)
    return len((prompt.system + prompt.user).encode("utf-8"))
