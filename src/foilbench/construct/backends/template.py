"""The ``template`` text backend: deterministic answers with no model.

A pipeline sends every text request with a structured ``task`` beside the rendered prompt.
A language model reads the prompt; this backend reads the task and answers in the same reply
format the prompt asks for (JSON where the prompt asks for JSON), so the pipeline parses one
reply format whatever the backend. ``task["kind"]`` is ``"<pipeline>.<step>"``; the answer comes
from ``foilbench.construct.<pipeline>.template.<step>(task, request)``, next to the
pipeline it serves. Answers depend only on the task and ``request.seed`` (temperature is
ignored: where a paper samples at a high temperature, the template draws with the seed).

The fingerprint hashes the source of this module and of every method's ``template`` module, so a rule
change is a new cache key and never replays an old answer.
"""

from __future__ import annotations

import hashlib
import importlib
from functools import lru_cache
from importlib.resources import files
from typing import Any

from foilbench.construct import METHODS
from foilbench.construct.backends.base import TextBackend, TextRequest
from foilbench.errors import FoilbenchError


class TemplateTaskError(FoilbenchError, ValueError):
    """The request carries no task the template backend can answer."""


@lru_cache(maxsize=1)
def template_source_hash() -> str:
    h = hashlib.sha256(files("foilbench.construct.backends").joinpath("template.py")
                       .read_bytes())
    for method in METHODS:
        entry = files(f"foilbench.construct.{method}").joinpath("template.py")
        h.update(f"{method}/template.py".encode())
        h.update(entry.read_bytes())
    return h.hexdigest()[:16]


def template_answer(task: Any, request: TextRequest) -> str:
    """The template answer for ``task`` (see the module docstring)."""
    if not isinstance(task, dict) or not isinstance(task.get("kind"), str) \
            or task["kind"].count(".") != 1:
        raise TemplateTaskError(
            "the template backend answers structured tasks {'kind': '<pipeline>.<step>', ...}; "
            f"this request has task={task!r} (prompt {request.prompt_id or '?'})")
    pipeline, step = task["kind"].split(".")
    try:
        if pipeline not in METHODS:
            raise ModuleNotFoundError(pipeline)
        module = importlib.import_module(f"foilbench.construct.{pipeline}.template")
    except ModuleNotFoundError:
        raise TemplateTaskError(f"no template rules for pipeline {pipeline!r} "
                                f"(task {task['kind']!r})") from None
    fn = getattr(module, step, None)
    if fn is None or step.startswith("_"):
        raise TemplateTaskError(f"no template rule {step!r} in {module.__name__}")
    return fn(task, request)


class TemplateText(TextBackend):
    """Deterministic rule-based text (see the module docstring). No cost, no concurrency."""

    reads_structure = True
    #: Images sent with a request are accepted and ignored: the task carries the truth.
    accepts_images = True

    def __init__(self, rest: str = "", **options: Any) -> None:
        if rest:
            raise TemplateTaskError(f"the template backend takes no argument, got {rest!r}")

    @property
    def fingerprint(self) -> str:
        return f"template:{template_source_hash()}"

    def complete(self, request: TextRequest) -> str:
        return template_answer(request.task, request)
