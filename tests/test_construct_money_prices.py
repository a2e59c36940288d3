"""Prices by exact name (issue 40): a dated snapshot is priced only when the price list names
it (its own price, or ``same_as`` its alias's), so a cap holds against a provider that bills
``gpt-4o-2024-05-13`` at 5 / 15 USD per million tokens and not at gpt-4o's 2.50 / 10; the
ledger keeps token counts, so a price given later re-prices settled requests
(``foilbench construct spend DIR --reprice --price``); ``--price`` names image models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import composet_answer, composet_image
from foilbench.cli.main import cli
from foilbench.construct.backends import api_image_price as pricing
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.models.api.prices import PriceBook, PriceError, parse_price_option
from foilbench.models.api.spend import SpendCapError

IMAGES = ["--image", "api:gemini-image:gemini-2.5-flash-image",
          "--edit", "api:gemini-image:gemini-2.5-flash-image"]


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders(answer=composet_answer, image=composet_image)
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def construct(out: Path, text: str, *extra: str):
    return CliRunner().invoke(cli, [
        "construct", "composet", "--text", text, *IMAGES, "--n-scenes", "2",
        "--foils-per-scene", "6", "--min-foils", "0", "--size", "64", "--no-progress",
        "--out", str(out), *extra])


def test_snapshots_are_priced_only_by_their_own_name():
    book = PriceBook()
    assert book.token_price("openai", "gpt-4o-2024-05-13") == (5.0, 15.0)
    assert book.token_price("openai", "gpt-4o") == (2.5, 10.0)
    shared = book.token_entry("openai", "gpt-4o-2024-08-06")
    assert (shared["in"], shared["out"], shared["same_as"]) == (2.5, 10.0, "openai:gpt-4o")
    assert shared["source"].startswith("https://") and shared["date"]
    for unlisted in ("gpt-4o-2099-01-01", "gpt-4o-latest", "gpt-5-mini-2099-01-01"):
        assert book.token_price("openai", unlisted) is None
        with pytest.raises(PriceError, match=f"--price openai:{unlisted}=IN/OUT"):
            book.require("openai", unlisted)
    assert book.token_price("anthropic", "claude-opus-4-7") == (5.0, 25.0)


def test_the_cap_holds_on_a_snapshot_dearer_than_its_alias(strict, tmp_path):
    out = tmp_path / "o"
    for _ in range(3):
        res = construct(out, "api:openai:gpt-4o-2024-05-13", "--max-spend", "0.30")
        assert res.exit_code == 0 or isinstance(res.exception, SpendCapError), res.output
    assert strict.rejected == []
    led = SpendLedger(out, 0.30)
    print(f"gpt-4o-2024-05-13, cap $0.30: provider billed ${strict.billed_usd:.4f}, ledger "
          f"${led.total:.4f} committed")
    assert led.settled == pytest.approx(strict.billed_usd)
    assert strict.billed_usd <= 0.30


def test_an_unlisted_snapshot_is_refused_before_any_request(strict, tmp_path):
    res = construct(tmp_path / "o", "api:openai:gpt-4o-2099-01-01")
    assert "--price openai:gpt-4o-2099-01-01=IN/OUT" in str(res.exception)
    assert strict.requests == []


def test_reprice_settled_requests_with_a_price_given_later(strict, tmp_path):
    """An unpriced model runs at the dearest price (--allow-unpriced); once its price is
    known, ``construct spend --reprice --price`` re-prices what was settled, from the
    token counts the ledger kept, and the folder's committed spend drops to the truth."""
    out = tmp_path / "o"
    strict.prices = PriceBook({"openai:gpt-9-turbo": (1.0, 4.0)})  # what the provider bills
    res = construct(out, "api:openai:gpt-9-turbo", "--allow-unpriced", "--max-spend", "50")
    assert res.exit_code == 0, res.output
    before = SpendLedger(out, 50).settled
    assert before > 2 * strict.billed_usd  # text settled at the dearest price we know of
    res = CliRunner().invoke(cli, ["construct", "spend", str(out), "--reprice", "--price",
                                   "openai:gpt-9-turbo=1/4"])
    assert res.exit_code == 0, res.output
    assert "re-priced" in res.output
    led = SpendLedger(out, 50)
    text_rows = [r for r in map(json.loads, (out / ".construct" / "spend.jsonl")
                                .read_text().splitlines()) if r["op"] == "reprice"]
    assert text_rows and all(r["was"] > r["usd"] for r in text_rows)
    assert led.settled == pytest.approx(strict.billed_usd)
    print(f"re-priced: ${before:.4f} -> ${led.settled:.4f} (provider billed "
          f"${strict.billed_usd:.4f})")


def test_price_names_an_image_model_per_image():
    assert parse_price_option("openai-image:my-imager=0.08") == ("openai-image:my-imager",
                                                                 (0.08,))
    with pytest.raises(PriceError, match="USD per image"):
        parse_price_option("openai-image:my-imager=1/2")
    with pytest.raises(PriceError, match="IN/OUT"):
        parse_price_option("openai:m=0.08")
    book = PriceBook(dict([parse_price_option("gemini-image:my-imager=0.08")]))
    book.require("gemini-image", "my-imager", image=True)
    assert pricing.worst_case(book, "gemini-image", "my-imager", "a cat", None, None, None,
                              False) == pytest.approx(0.08)
    assert pricing.billed(book, "gemini-image", "my-imager", None, None, {}) == 0.08
    with pytest.raises(PriceError, match="--price gemini-image:other=USD"):
        PriceBook().require("gemini-image", "other", image=True)


def test_an_unpriced_image_model_is_billed_from_its_usage():
    """--allow-unpriced: priced as the dearest listed model of its provider, billed from the
    usage the reply gives (it was a flat $0.50 whatever the usage said)."""
    book = PriceBook(allow_unpriced=True)
    model, entry = pricing.stand_in("openai-image")
    worst = pricing.worst_case(book, "openai-image", "gpt-image-9", "a cat", "1024x1024",
                               "high", None, False)
    big = {"usage": {"input_tokens": 20, "output_tokens": 20000,
                     "input_tokens_details": {"text_tokens": 20}}}
    small = {"usage": {"input_tokens": 20, "output_tokens": 272,
                       "input_tokens_details": {"text_tokens": 20}}}
    billed_big = pricing.billed(book, "openai-image", "gpt-image-9", "1024x1024", "high", big)
    billed_small = pricing.billed(book, "openai-image", "gpt-image-9", "1024x1024", "high",
                                  small)
    assert billed_big == pytest.approx((20 * entry["text_in"] + 20000 * entry["out"]) / 1e6)
    assert billed_small < billed_big and billed_big > 0.5 >= billed_small
    assert pricing.billed(book, "openai-image", "gpt-image-9", None, None, {}) is None
    assert worst >= billed_small
    g_model, g_entry = pricing.stand_in("gemini-image")
    assert g_model == "gemini-3-pro-image"
    meta = {"usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2000}}
    assert pricing.billed(book, "gemini-image", "imagen-x", None, None, meta) == pytest.approx(
        (10 * g_entry["in"] + 2000 * g_entry["image_out"]) / 1e6)
