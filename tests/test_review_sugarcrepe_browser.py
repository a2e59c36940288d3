"""The negative-validation phase (SugarCrepe §4.1 Stage 2) in headless Chromium, against the
real `foilbench review DIR` server: the page shows image, positive and negative; keys 1/2/3
record the three verdicts, u undoes the last; what the store holds matches the keys."""

from __future__ import annotations

from click.testing import CliRunner

from _browser import browser_page
from _construct_helpers import caption_set
from foilbench.cli.main import cli
from foilbench.review.choice import ChoiceSession
from test_review_browser import Server


def _press(page, key: str) -> None:
    before = page.inner_text("#progress")
    page.keyboard.press(key)
    page.wait_for_function(
        "b => document.querySelector('#progress').textContent !== b", arg=before)


def test_validate_negatives_by_keyboard(tmp_path):
    caps = caption_set(tmp_path / "coco")
    out = tmp_path / "sc"
    res = CliRunner().invoke(cli, ["construct", "sugarcrepe", str(caps), "--out", str(out),
                                   "--no-refine", "--no-progress"])
    assert res.exit_code == 0, res.output
    units = ChoiceSession(out).units
    server = Server(out)
    try:
        with browser_page() as (page, errors):
            page.goto(server.url)
            page.wait_for_function("() => document.querySelector('#negative').textContent")
            assert page.inner_text("#positive") == units[0].positive
            assert page.inner_text("#negative") == units[0].negative
            assert page.locator("#verdicts button").count() == 3
            assert "negative is false of the image" in page.inner_text("#verdicts")
            page.wait_for_function("() => document.querySelector('#image').naturalWidth > 0")
            _press(page, "1")
            assert page.inner_text("#negative") == units[1].negative  # moved to the next
            _press(page, "2")
            _press(page, "3")
            _press(page, "u")  # undoes "not fluent" on the third item
            assert page.inner_text("#negative") == units[2].negative
            assert "3 / " not in page.inner_text("#progress")
            page.screenshot(path=str(tmp_path / "review_sugarcrepe.png"))
            assert errors == []
    finally:
        server.kill()
    store = ChoiceSession(out).store.current()
    assert store == {units[0].item_id: "false", units[1].item_id: "true_or_ambiguous"}
