"""CompoSET App. B.3: "A bias-mitigation variant of each captioning prompt (*.bias.txt) is run
in parallel as a sanity check". foilbench runs the variants only with --bias-variants (they
double the text calls of steps 3, 4 and 7); a run without them says so in its output and in
the manifest, and a run with them records that they ran."""

from __future__ import annotations

import json

from click.testing import CliRunner

from foilbench.cli.main import cli


def _construct(out, *extra):
    res = CliRunner().invoke(cli, ["construct", "composet", "--no-progress", "--size", "64",
                                   "--n-scenes", "1", "--foils-per-scene", "3",
                                   "--min-foils", "0", "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return res, json.loads((out / "manifest.json").read_text())["extras"]["bias_variants"]


def test_departure_is_stated_when_the_variants_are_off(tmp_path):
    res, rec = _construct(tmp_path / "off")
    assert "note: bias-mitigation prompt variants not run (App. B.3 runs them in parallel)" \
        in res.output
    assert rec["run"] is False and "--bias-variants runs them" in rec["departure"]
    assert rec["paper"].startswith("CompoSET App. B.3")
    res, rec = _construct(tmp_path / "on", "--bias-variants")
    assert "bias-mitigation prompt variants not run" not in res.output
    assert rec["run"] is True and "departure" not in rec
