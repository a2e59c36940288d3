"""Exception types shared across layers, so the CLI can print them without a traceback."""


class FoilbenchError(Exception):
    """Base class for errors a user can act on; the CLI prints the message and exits 2."""


class UnknownNameError(FoilbenchError, KeyError):
    """A registry lookup failed; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class BenchmarkError(FoilbenchError):
    """A benchmark folder or table is malformed; the message names the item and field."""


class ModelError(FoilbenchError):
    """A model spec could not be resolved or loaded."""


class SpendCapReached(FoilbenchError):
    """A paid call was refused because it would pass a spend cap.

    The one base class every cap error derives from (the construction budget, the API spend
    tracker, the spend ledger), so the construction engine stops a run, and writes what it
    has, on any of them without knowing which layer refused."""

    #: set by the construction runner when a run stops at the cap: the candidates given
    #: "not reached: spend cap", the survival table and the drop causes
    not_reached: int | None = None
    survival: list[dict] | None = None
    drop_causes: list[dict] | None = None
