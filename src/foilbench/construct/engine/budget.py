"""The spend bound printed before a construction run (and all that ``--dry-run`` does).

Each pipeline states the most calls each stage may make per role (``plan(config)`` returns
``{stage: {role: calls}}``, stage names as the run's log and call counters name them); each
backend states the most one call can cost (``cost_per_call_usd``: 0 for local models, templates
and the world; for API backends the same worst-case rule the ledger reserves with, including
the one longer retry of a cut reply, at the largest request the pipelines send). The product
is an upper bound per stage and backend; its sum is the run's bound, and the per-role totals
are the sums over stages.

A plan entry may be a :class:`Calls` (issue 40): the count and what bounds one call of that
stage, its own output budget (``max_tokens``), its prompt's size and its images; a backend with
``call_bound(calls)`` then bounds the stage's calls from those instead of from the one
``cost_per_call_usd`` sized for the largest request any pipeline sends (16k input tokens and
6,000 output tokens, which made the bound 4x to 517x the bill).

Two lines close the table: the bound (the guaranteed worst case; what the ledger's
reservations add up to at most) and an estimate. The bound must hold for every provider
without its tokenizer, so it counts one input token per prompt byte and every reply at its
full output budget; a typical English prompt is nearer 4 bytes a token and a typical reply
far shorter, so for a method whose cost is mostly prompt text the bound is 4x or more above
the bill however tight the plan. The estimate (backends with ``call_estimate(calls)``; the
rule is printed with it) is a guide to plan with, never what the cap reserves.

With ``count_tokens`` (``--dry-run --count-tokens``) a token-priced backend asks its
provider's free count endpoint for the input tokens of each stage's fixed prompt part
(:class:`FixedPrompt`) and bounds only the variable fields by their bytes; a field whose texts
the plan knows (:attr:`Calls.known`: SugarCrepe's captions, Auto-Comp's concepts,
questions and choices) is counted too, in one more request, and bounds the stage's sum.
A stage whose calls differ in what bounds them (COMPASS's realisations, per graph and level)
gives its groups (:attr:`Calls.parts`), and is bounded by the sum of theirs.

The cap itself is held by the output folder's ledger (:mod:`.ledger`), per paid request.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

from foilbench.construct.backends.base import Backend

#: bytes a token, for the fields a plan bounds by the output budget of the step that wrote
#: them (a generous average for English and JSON text; a planning assumption, not a bound)
BYTES_PER_TOKEN = 4

#: tokens added per joint between a counted fixed prompt part and a field bounded by its
#: bytes. Why a margin at all: BPE tokenizers pre-split text at word, whitespace and
#: punctuation boundaries and merge only inside a piece, so filling a field changes how the
#: template is cut only in the piece that touches it on each side; those pieces were counted
#: in the fixed part and the field's own bytes are counted one token a byte, but a piece cut
#: apart at the joint can take a few more tokens than it did whole. Our templates put a field
#: next to a space, a colon, a quote or a newline, pieces of at most a few bytes, so 4 tokens
#: a joint (two joints a field) is above what such a piece can gain; a field's bytes at one
#: token a byte are a large overcount already (English is nearer 4 bytes a token).
JOINT_TOKENS = 4

#: the stage name a flat ``{role: calls}`` plan is filed under
ALL_STAGES = "(all stages)"


@dataclass(frozen=True)
class FixedPrompt:
    """A stage's prompt with its fields empty (``system`` and ``user``: what a provider can
    count once) and what the fields add at most: ``field_bytes`` (their bytes at their most,
    every occurrence) and ``fields`` (how many occurrences, two joints each); ``known`` of
    those occurrences are of the field whose texts the plan knows (:attr:`Calls.known`),
    ``known_bytes`` of ``field_bytes`` are theirs."""

    system: str
    user: str
    field_bytes: int
    fields: int
    known: int = 0
    known_bytes: int = 0

    def bound(self, counted: int) -> int:
        """Most input tokens of a request, given the provider's ``counted`` tokens of the
        fixed part (:data:`JOINT_TOKENS`).

        >>> FixedPrompt("s", "u", field_bytes=40, fields=2).bound(100)
        156
        """
        return counted + self.field_bytes + 2 * JOINT_TOKENS * self.fields


def fixed_prompt(name: str, most: dict[str, int], known: str = "",
                 fill: dict[str, str] | None = None) -> FixedPrompt:
    """Packaged prompt ``name`` with every field of ``most`` in its user part empty, and
    ``most``'s bytes for each occurrence of each field; ``known`` names the field whose
    texts the plan knows (:attr:`Calls.known`); ``fill`` gives the fields every request
    fills with the same text (CompoSET's taxonomy), put in the fixed part, so the provider
    counts them as they are sent.

    >>> f = fixed_prompt("compass.propose", {"kind": 9, "word": 12})
    >>> "$word" in f.user, f.field_bytes, f.fields
    (False, 21, 2)
    """
    from string import Template

    from foilbench.construct.engine.prompts import load_prompt

    p = load_prompt(name)
    n = {f: p.user.count(f"${f}") + p.user.count(f"${{{f}}}") for f in most}
    user = Template(p.user).safe_substitute({**{f: "" for f in most}, **(fill or {})})
    # the system prompt is sent as written (:meth:`.stages.Context.text_request`)
    k = n.get(known, 0)
    return FixedPrompt(p.system, user, sum(n[f] * most[f] for f in most), sum(n.values()),
                       k, k * most.get(known, 0))


class Calls(int):
    """Most calls of one (stage, role), with what bounds one of them: ``max_tokens`` (the
    answer's output budget), ``prompt_bytes`` (system and user text, fields filled in),
    ``images`` sent with a text request, ``image_side`` (their side, or an image request's)
    ``edit`` (an image request edits an input image) and ``fixed`` (the stage's prompts with
    their fields empty, :class:`FixedPrompt`, for ``--count-tokens``; the call is bounded by
    the largest), ``known`` (the texts of a field known at plan time, SugarCrepe's captions,
    each sent in at most ``known_uses`` of the calls: ``--count-tokens`` counts them too and
    bounds the stage's sum, :meth:`~foilbench.construct.backends.api_tokens.TokenPricedAPI.
    counted_stage_bound`), ``parts`` (groups of these calls, each with its own smaller
    bounds, their counts summing to this one's: the stage is bounded by the sum of the
    groups' bounds; COMPASS's realisations per graph and level). Arithmetic gives a plain
    int.

    >>> c = Calls(3, max_tokens=512, prompt_bytes=900)
    >>> c + 0, c.max_tokens, c.prompt_bytes
    (3, 512, 900)
    """

    max_tokens: int | None
    prompt_bytes: int | None
    images: int
    image_side: int | None
    edit: bool
    fixed: tuple[FixedPrompt, ...]
    known: tuple[str, ...]
    known_uses: int
    parts: tuple[Calls, ...]

    def __new__(cls, n: int, *, max_tokens: int | None = None, prompt_bytes: int | None = None,
                images: int = 0, image_side: int | None = None, edit: bool = False,
                fixed: tuple[FixedPrompt, ...] = (), known: tuple[str, ...] = (),
                known_uses: int = 0, parts: tuple[Calls, ...] = ()) -> Calls:
        if parts and sum(map(int, parts)) != int(n):
            raise ValueError(f"the parts' calls sum to {sum(map(int, parts))}, not {int(n)}")
        obj = super().__new__(cls, int(n))
        obj.parts = tuple(parts)
        obj.max_tokens, obj.prompt_bytes, obj.fixed = max_tokens, prompt_bytes, tuple(fixed)
        obj.known, obj.known_uses = tuple(known), int(known_uses)
        obj.images, obj.image_side, obj.edit = int(images), image_side, bool(edit)
        return obj


@dataclass(frozen=True)
class Row:
    """One (stage, role) line of the bound: most calls, their price bound, the backend, and
    the estimate of the same calls (:func:`estimate`)."""

    stage: str
    role: str
    calls: int
    usd: float
    backend: str
    estimate_usd: float = math.nan


@dataclass
class Estimate:
    """Upper bound of calls per (stage, role) and their price (NaN: a backend with no price)."""

    rows: list[Row] = field(default_factory=list)
    #: what the folder's ledger already holds (billed + open reservations)
    committed_usd: float = 0.0
    #: the rule of each backend's estimate, by backend spec
    rules: dict[str, str] = field(default_factory=dict)
    #: ``--count-tokens``: None when not asked, else whether some stage's fixed prompt
    #: was counted by its provider (a plan or backend that cannot leaves the byte bound)
    counted: bool | None = None

    @property
    def calls(self) -> dict[str, int]:
        """Most calls per role (summed over stages)."""
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.role] = out.get(r.role, 0) + r.calls
        return out

    @property
    def usd(self) -> dict[str, float]:
        """Price bound per role (summed over stages)."""
        out: dict[str, float] = {}
        for r in self.rows:
            out[r.role] = out.get(r.role, 0.0) + r.usd
        return out

    @property
    def backend(self) -> dict[str, str]:
        return {r.role: r.backend for r in self.rows}

    @property
    def stage_usd(self) -> dict[str, float]:
        """Price bound per stage (summed over its roles)."""
        out: dict[str, float] = {}
        for r in self.rows:
            out[r.stage] = out.get(r.stage, 0.0) + r.usd
        return out

    @property
    def total_usd(self) -> float:
        return sum(r.usd for r in self.rows)

    @property
    def total_estimate_usd(self) -> float:
        """The estimate: rows without one count at their bound."""
        return sum(r.usd if math.isnan(r.estimate_usd) else r.estimate_usd for r in self.rows)

    @property
    def estimate_rules(self) -> list[str]:
        return sorted({r for r in self.rules.values() if r})

    @property
    def total_calls(self) -> int:
        return sum(r.calls for r in self.rows)

    def lines(self) -> list[str]:
        """The per-stage table, then one line per role and backend, then the total."""
        def usd(v: float) -> str:
            return "unpriced" if math.isnan(v) else f"${v:.4f}"

        width = max([len(r.stage) for r in self.rows] + [5])
        out = [f"  {'stage':<{width}}  {'role':<9} {'calls':>7}  {'at most':>10}  backend"]
        out += [f"  {r.stage:<{width}}  {r.role:<9} {r.calls:>7}  {usd(r.usd):>10}  {r.backend}"
                for r in self.rows]
        out.append("  per role and backend:")
        out += [f"  {role:<9} at most {n:>6} calls  at most {usd(self.usd[role])}  "
                f"({self.backend.get(role, '')})" for role, n in self.calls.items()]
        out.append(f"  total     at most {self.total_calls:>6} calls  at most "
                   f"{usd(self.total_usd)} (cached calls are free)")
        if self.counted:
            out.append("  input     each stage's fixed prompt counted by its provider "
                       "(--count-tokens);")
            out.append("            its fields at one token a byte (texts the plan "
                       "knows, counted too),")
            out.append(f"            +{JOINT_TOKENS} tokens a joint")
        elif self.counted is not None:
            out.append("  input     no stage here names a prompt its provider can count "
                       "(--count-tokens):")
            out.append("            one token a prompt byte")
        if self.estimate_rules:
            text = (f"about {usd(self.total_estimate_usd)}: a guide, not a bound (the cap "
                    "reserves each request's worst case: one token a prompt byte, every reply "
                    "at its full budget); token-priced calls: " + "; ".join(self.estimate_rules)
                    + "; other calls at their bound")
            wrapped = textwrap.wrap(text, 66)
            out.append(f"  estimate  {wrapped[0]}")
            out += [f"            {line}" for line in wrapped[1:]]
        if self.committed_usd:
            out.append(f"  already committed into this folder: ${self.committed_usd:.4f}")
        return out


def estimate(plan: dict, backends: dict[str, Backend], count_tokens: bool = False) -> Estimate:
    """``plan`` maps a stage to ``{role: most calls}`` (a flat ``{role: calls}`` counts as one
    stage, :data:`ALL_STAGES`); stages and roles with no backend or no call are left out.
    With ``count_tokens`` a backend that can (``counts_tokens``) bounds a :class:`Calls` with
    :class:`FixedPrompt` parts from its provider's count of them (free, never billed).

    >>> class B:
    ...     cost_per_call_usd, spec = 0.25, "api:x:y"
    >>> est = estimate({"a": {"text": 10, "image": 3}, "b": {"text": 2}}, {"text": B()})
    >>> est.usd, est.stage_usd
    ({'text': 3.0}, {'a': 2.5, 'b': 0.5})
    """
    if plan and all(isinstance(v, int) for v in plan.values()):
        plan = {ALL_STAGES: plan}
    est = Estimate(counted=False if count_tokens else None)
    for stage, roles in plan.items():
        for role, n in roles.items():
            if role not in backends or n <= 0:
                continue
            b = backends[role]
            spec = str(getattr(b, "spec", "") or getattr(b, "fingerprint", ""))
            total, typical, counted = _bounded(b, n, count_tokens)
            if counted:
                est.counted = True
            if isinstance(n, Calls) and callable(getattr(b, "call_estimate", None)):
                est.rules[spec] = str(getattr(b, "estimate_rule", ""))
            est.rows.append(Row(stage, role, int(n), total, spec, typical))
    return est


def _bounded(b: Backend, n: int, count_tokens: bool) -> tuple[float, float, bool]:
    """(bound, estimate, whether a provider counted a fixed prompt) of ``n`` calls of one
    stage on backend ``b``: the sum over :attr:`Calls.parts` where the plan gives them."""
    if isinstance(n, Calls) and n.parts:
        got = [_bounded(b, part, count_tokens) for part in n.parts]
        return (sum(g[0] for g in got), sum(g[1] for g in got), any(g[2] for g in got))
    bound = getattr(b, "call_bound", None)
    counting = count_tokens and getattr(b, "counts_tokens", False)
    stage_bound = getattr(b, "counted_stage_bound", None)
    total, counted = None, False
    if isinstance(n, Calls) and callable(bound):
        per = float(bound(n, count_tokens=True) if counting else bound(n))
        if counting and n.fixed:
            counted = True
            if n.known and callable(stage_bound):
                total = min(float(stage_bound(n)), int(n) * per)
    else:
        per = float(b.cost_per_call_usd)
    guess = getattr(b, "call_estimate", None)
    typical = float(guess(n)) if isinstance(n, Calls) and callable(guess) else per
    return (int(n) * per if total is None else total), int(n) * typical, counted
