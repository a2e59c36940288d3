"""``foilbench construct spend DIR``: what a construction folder's ledger holds, and the two
things only its user may decide (issue 40): releasing reservations left open by a killed run
(after checking the provider's dashboard for those requests) and re-pricing settled requests
with a price learnt later. Each is one call on :class:`~foilbench.construct.engine.ledger.
SpendLedger` (``open_reservations``, ``release_open``, ``reprice``)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from foilbench.display import safe_text


def _clean(text: object, limit: int = 80) -> str:
    """Ledger text for a terminal: through foilbench's one escaping function (controls and
    bidi characters shown as escapes), bounded."""
    return safe_text(text, limit)


def _ledger(folder: Path, prices: tuple[str, ...]):
    from foilbench.construct.engine.ledger import LEDGER, SpendLedger
    from foilbench.models.api.prices import PriceBook, PriceError, parse_price_option

    if not (folder / ".construct" / LEDGER).is_file():
        raise click.UsageError(f"{folder} has no spend ledger (.construct/{LEDGER}); give the "
                               "--out folder of a foilbench construct run")
    try:
        book = PriceBook(dict(parse_price_option(p) for p in prices))
    except PriceError as e:
        raise click.UsageError(str(e)) from None
    return SpendLedger(folder, 0.0, option="(no cap: this command pays nothing)", prices=book)


def open_lines(rows: list[dict]) -> list[str]:
    """One line per open reservation: id, USD, what it was for, process, age."""
    now = time.time()
    return [f"  {_clean(r['id'])}  ${r['usd']:.4f}  {_clean(r.get('what', ''), 48)}  (PID "
            f"{r.get('pid', '?')}, {max(0.0, now - float(r.get('t', now))) / 60:.0f} min ago)"
            for r in rows]


@click.command("spend", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--release", "release", multiple=True, metavar="ID",
              help="Release this open reservation (repeatable): the provider's dashboard shows "
                   "it was not billed. Recorded in the ledger.")
@click.option("--all-open", is_flag=True,
              help="Release every open reservation (of processes that are no longer running).")
@click.option("--note", default="", help="Why, kept with each release (e.g. the dashboard date).")
@click.option("--reprice", is_flag=True,
              help="Re-price settled requests from the token counts the ledger kept, at the "
                   "--price entries (else the packaged list).")
@click.option("--price", "prices", multiple=True, metavar="MODEL=IN/OUT",
              help="USD per million input/output tokens for --reprice.")
def spend(folder: Path, release: tuple[str, ...], all_open: bool, note: str, reprice: bool,
          prices: tuple[str, ...]) -> None:
    """What FOLDER's spend ledger holds: billed, requests, reservations left open by a
    killed run (each counted at its worst case until released), re-priced requests.

    \b
    Examples:
      foilbench construct spend cs
      foilbench construct spend cs --release 3f2a... --note "dashboard 2026-12-05: not billed"
      foilbench construct spend cs --reprice --price openai:my-model=1.25/10
    """
    from foilbench.construct.engine.ledger import LedgerError

    if release and all_open:
        raise click.UsageError("give --release ID... or --all-open, not both")
    if prices and not reprice:
        raise click.UsageError("--price here re-prices settled requests: add --reprice")
    led = _ledger(folder, prices)
    try:
        if release or all_open:
            gone = led.release_open(list(release) or None, note=note)
            click.echo(f"released {len(gone)} reservation(s), "
                       f"${sum(r['usd'] for r in gone):.4f}:")
            click.echo("\n".join(open_lines(gone)) or "  (none were open)")
        if reprice:
            changed = led.reprice(led.prices)
            click.echo(f"re-priced {len(changed)} settled request(s): "
                       f"${sum(c['was'] for c in changed):.4f} -> "
                       f"${sum(c['usd'] for c in changed):.4f}")
    except LedgerError as e:
        raise click.UsageError(str(e)) from None
    rows = led.open_reservations(others_only=False)
    click.echo(f"{folder}: ${led.settled:.4f} billed over {led.requests} request(s); "
               f"${led.reserved:.4f} held open by {len(rows)} reservation(s); "
               f"${led.total:.4f} committed")
    if rows:
        click.echo("open reservations (in flight now, or left by a killed run; check the "
                   "provider's dashboard, then release those it did not bill with "
                   f"foilbench construct spend {folder} --release ID or --all-open):")
        click.echo("\n".join(open_lines(rows)))
