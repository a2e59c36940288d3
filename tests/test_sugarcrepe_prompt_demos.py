"""SugarCrepe App. D.2: "Each template consists of task instruction for generating the
corresponding type of hard negatives and several (7 or more) few-shot demonstrations". Every
template foilbench sends, the shared locate (step 1) and compose (step 3) templates
included, carries at least seven demonstrations, each a well-formed reply."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from foilbench.construct.engine.prompts import load_prompt

NAMES = sorted(p.name.removesuffix(".txt") for p in
               resources.files("foilbench.construct.sugarcrepe").joinpath("prompts").iterdir()
               if p.name.endswith(".txt"))
DEMO = re.compile(r"^Caption: (?!\$caption)(.+)\n((?:.+\n)?)(\{.*\})$", re.M)


def test_every_template_is_covered():
    assert {"sugarcrepe.locate", "sugarcrepe.compose_add",
            "sugarcrepe.compose_replace"} <= set(NAMES) and len(NAMES) == 10


@pytest.mark.parametrize("name", NAMES)
def test_seven_or_more_demonstrations(name):
    demos = DEMO.findall(load_prompt(name).user)
    assert len(demos) >= 7, name
    for caption, middle, reply in demos:
        got = json.loads(reply)
        if name == "sugarcrepe.locate":
            words = caption.lower()
            found = [re.search(rf"\b{re.escape(c.lower())}\b", words)
                     for c in got["concepts"]]
            assert all(found), (caption, got)
            positions = [m.start() for m in found]
            assert positions == sorted(positions)  # in the order they appear
        elif name == "sugarcrepe.compose_replace":
            old, new = re.match(r"Old: (.+), new: (.+)", middle).groups()
            assert got["caption"] == re.sub(rf"\b{re.escape(old)}\b", new, caption, count=1) \
                or new in got["caption"] and old not in got["caption"]
        elif name == "sugarcrepe.compose_add":
            new = re.match(r"Add \w+: (.+), at: ", middle).group(1)
            assert new in got["caption"] and got["caption"] != caption
