"""The project as an index would publish it: an SPDX licence with its file, classifiers that
claim only what is tested, and an sdist that carries what README.md links to. (CI builds the
sdist and wheel and runs ``twine check`` on them: .ci/run.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_is_an_spdx_expression_with_its_file(project):
    meta = project["project"]
    assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "foilbench contributors" in text
    # PEP 639 forbids a licence classifier beside an expression; setuptools 77 reads both keys
    assert not any(c.startswith("License ::") for c in meta["classifiers"])
    assert "setuptools>=77" in project["build-system"]["requires"]


def test_python_classifiers_match_requires_python_and_ci(project):
    meta = project["project"]
    floor = re.fullmatch(r">=3\.(\d+)", meta["requires-python"])
    assert floor is not None
    minors = [int(c.rsplit(".", 1)[1]) for c in meta["classifiers"]
              if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert minors and min(minors) >= int(floor.group(1))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"vermin -t=3.{floor.group(1)}-" in ci  # the floor is checked, not assumed


def test_the_sdist_carries_what_the_readme_links_to():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").split()
    grafted = {manifest[i + 1] for i, w in enumerate(manifest) if w == "graft"}
    included = {w for line in (ROOT / "MANIFEST.in").read_text().splitlines()
                if line.startswith("include ") for w in line.split()[1:]}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = set(re.findall(r"\]\(((?!https?:|#)[^)\s]+)\)", readme))
    links |= set(re.findall(r"`((?:tests|bench|docs)/[\w./-]+)", readme))
    assert links
    for link in links:
        path = link.split("#")[0]
        top = path.split("/")[0]
        carried = path in included or top in grafted or path.startswith("src/foilbench/")
        assert carried, f"README links to {path}, which the sdist leaves out"
    assert {"CHANGELOG.md", "LICENSE", "README.md"} <= included


def test_the_release_tools_are_in_the_dev_extra(project):
    dev = " ".join(project["project"]["optional-dependencies"]["dev"])
    for tool in ("build", "twine", "vermin", "ruff", "jsonschema"):
        assert re.search(rf"(^|\s|\"){tool}\b", dev), tool
