"""Paired A/B comparison of two bots (``referee compare A B``, docs/COMPARE.md).

A and B never meet. Each plays the same deals from the same seat against the same opponents: for every
deal seed and every seat, one match with A in that seat and one with B, everything else identical (the
opponents and their seats, the match seed, so every hand and every opponent's own seed). Whatever the
cards do to one of them they do to the other, so the difference of their totals in such a *pair* is
their skill, with the luck of the deal taken out (the duplicate format of bridge and of ACPC). Totals
are credited ones, as in a league: a candidate that forfeits keeps only what it made itself
(:attr:`pyramid_sdk.record.MatchRecord.credited_totals`).

A *round* is one deal seed with the candidate's seat rotated over every seat: ``players`` pairs,
``2 × players`` matches. The sample unit is the pair: its difference, A's points minus B's. Pairs of one
round share deals but not hands; measured on the sample bots their differences are uncorrelated (the
round means vary no more than independent pairs' would), so the pairs are treated as independent.

Every match has fresh bot processes, as everywhere in the referee: no bot remembers the deals of A's
match when it plays B's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.seeds import derive_seed
from referee.match.bots import BotSpec
from referee.match.faults import MAX_FAULTS
from referee.match.outcome import MatchOutcome
from referee.stats import Z95, Estimate, Sprt, Verdict

SPRT_MIN_PAIRS: Final = 16
"""Pairs before the sequential test may stop: its variance is estimated from the data, and a handful of
pairs can make it look far smaller than it is."""
OPPONENT: Final = "sample_bots.heuristic:HeuristicBot"
"""Who fills the other seats unless ``--against`` says."""
MATCH_ID: Final = "compare"
"""The id every bot of a comparison is told: the same in both matches of a pair, and nothing of the seed."""


class CompareError(Exception):
    """A comparison that cannot be run as asked: a bad option. The message says which (a bad hypothesis
    is :class:`referee.stats.HypothesisError`)."""


EXIT_UNUSABLE: Final = 4
"""``referee compare``'s exit code when it gives no verdict: a bad option, a bot that does not load or
start, no sandbox where one is required, a referee that keeps failing. Never 0, 1 or 2, which a CI gate
reads as a verdict."""


@dataclass(frozen=True, slots=True)
class Side:
    """One candidate's match of a pair, as the comparison counts it."""

    points: int
    """Its credited total: for a forfeited match, what it made itself before the forfeit, and the
    worst score of each declaration after it (24 for a bot that forfeits at once)."""
    faults: int = 0
    forfeit: bool = False

    @classmethod
    def of(cls, outcome: MatchOutcome, seat: int) -> Side:
        """The candidate in ``seat`` of ``outcome``. A bot that crashes never gains by the referee's
        autopilot finishing its match: the rule of every league (docs/RULES.md, "Forfeits")."""
        record = outcome.record
        return cls(
            record.credited_totals[seat],
            sum(fault.seat == seat for fault in outcome.faults),
            seat in record.forfeits,
        )


@dataclass(frozen=True, slots=True)
class Pair:
    """A and B in the same seat of the same deals."""

    round: int
    seat: int
    a: Side
    b: Side

    @property
    def difference(self) -> int:
        return self.a.points - self.b.points

    def to_dict(self) -> dict[str, object]:
        return {
            "round": self.round + 1,
            "seat": self.seat,
            "a": self.a.points,
            "b": self.b.points,
            "difference": self.difference,
            "a_faults": self.a.faults,
            "b_faults": self.b.faults,
            "a_forfeit": self.a.forfeit,
            "b_forfeit": self.b.forfeit,
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """What to compare and how: the candidates, their opponents, the table and the limits."""

    a: BotSpec
    b: BotSpec
    opponents: tuple[BotSpec, ...]
    """The seats beside the candidate, clockwise from its left: ``players - 1`` bots."""
    rules: Rules
    seed: int
    rounds: int
    sprt: Sprt | None = None
    time_control: TimeControl = field(default_factory=TimeControl)
    max_faults: int = MAX_FAULTS
    concurrency: int = 1

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def pairs(self) -> int:
        """Pairs at most (each is two matches)."""
        return self.rounds * self.players

    def lineup(self, candidate: BotSpec, seat: int) -> list[BotSpec]:
        """The table with ``candidate`` in ``seat``: the opponents follow it clockwise in their order, so
        each sits in the same place relative to the candidate whichever seat it has.

        >>> from referee.match.bots import BotSpec
        >>> a, x, y, z = (BotSpec.parse(f"m:{name}") for name in "AXYZ")
        >>> plan = Plan(a, a, (x, y, z), Rules(players=4), seed=1, rounds=1)
        >>> [spec.name for spec in plan.lineup(a, 1)]
        ['Z', 'A', 'X', 'Y']
        """
        others = self.opponents
        return [
            candidate if place == seat else others[(place - seat - 1) % self.players]
            for place in range(self.players)
        ]

    def deals(self, round_number: int) -> int:
        """The match seed of ``round_number`` (from 0): every seat of the round plays these deals."""
        return derive_seed(self.seed, "compare", round_number)


def make_plan(
    a: str,
    b: str,
    against: Sequence[str],
    rules: Rules,
    seed: int,
    matches: int,
    sprt: Sprt | None = None,
    time_control: TimeControl | None = None,
    max_faults: int = MAX_FAULTS,
    concurrency: int = 1,
    paths: tuple[Path, ...] = (),
) -> Plan:
    """A plan from bot specs as ``referee match`` takes them (a command line, or ``module:Class``).

    The ``against`` bots fill the ``players - 1`` seats beside the candidate in their order, repeated if
    fewer are given (default: :data:`OPPONENT`). Every bot is checked (its program, script or module
    exists; an in-process class loads) and named uniquely at the table: a repeated name gets ``#2``, ``#3``
    …, the candidates first. Raises :class:`BotSpecError` or :class:`CompareError`.

    >>> plan = make_plan("sample_bots.random_bot:RandomBot", "sample_bots.random_bot:RandomBot", (),
    ...                  Rules(players=3), seed=1, matches=60)
    >>> plan.a.name, plan.b.name, [spec.name for spec in plan.opponents], plan.rounds
    ('RandomBot', 'RandomBot#2', ['HeuristicBot', 'HeuristicBot#2'], 10)
    """
    seats = rules.players - 1
    if len(against) > seats:
        raise CompareError(
            f"--against given {len(against)} times, but a {rules.players}-player table has {seats} seat(s) "
            "beside the candidate"
        )
    chosen = list(against) or [OPPONENT]
    texts = [a, b, *(chosen[index % len(chosen)] for index in range(seats))]
    specs, taken = [], set()
    for text in texts:
        spec = BotSpec.parse(text)
        spec.check()
        name, number = spec.name, 1
        while name in taken:
            number += 1
            name = f"{spec.name}#{number}"
        taken.add(name)
        specs.append(replace(spec, name=name, paths=paths))
    return Plan(
        a=specs[0],
        b=specs[1],
        opponents=tuple(specs[2:]),
        rules=rules,
        seed=seed,
        rounds=rounds_for(matches, rules.players),
        sprt=sprt,
        time_control=time_control or TimeControl(),
        max_faults=max_faults,
        concurrency=concurrency,
    )


def rounds_for(matches: int, players: int) -> int:
    """Whole rounds in at most ``matches`` matches (a round is ``2 × players`` matches: A and B at every
    seat), so every seat is played equally often.

    >>> rounds_for(400, 4), rounds_for(400, 3), rounds_for(9, 4)
    (50, 66, 1)
    >>> rounds_for(7, 4)
    Traceback (most recent call last):
    ...
    referee.compare.CompareError: --matches 7: less than one round (8 matches at 4 seats)
    """
    per_round = 2 * players
    if matches < per_round:
        raise CompareError(
            f"--matches {matches}: less than one round ({per_round} matches at {players} seats)"
        )
    return matches // per_round


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Where a comparison stands, after each pair: what the progress display shows."""

    done: int
    """Pairs played, void ones included."""
    total: int
    """Pairs at most."""
    estimate: Estimate
    llr: float | None
    """The sequential test's log-likelihood ratio, if there is a test."""
    void: int = 0


@dataclass(frozen=True, slots=True)
class Comparison:
    """A finished comparison: every pair, the estimate, the verdict and why."""

    plan: Plan
    pairs: tuple[Pair, ...]
    verdict: Verdict
    void: int = 0
    """Pairs left out because a match of theirs was void (the referee's failure, not a bot's)."""

    @property
    def estimate(self) -> Estimate:
        return Estimate.of([pair.difference for pair in self.pairs])

    @property
    def llr(self) -> float | None:
        return None if self.plan.sprt is None else self.plan.sprt.llr(self.estimate)

    @property
    def tally(self) -> dict[str, dict[str, int]]:
        """Each candidate's faults and forfeited matches over every pair, ``{"a": {...}, "b": {...}}``."""
        sides = {"a": [pair.a for pair in self.pairs], "b": [pair.b for pair in self.pairs]}
        return {
            which: {"faults": sum(side.faults for side in own), "forfeits": sum(side.forfeit for side in own)}
            for which, own in sides.items()
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; docs/COMPARE.md lists the keys."""
        estimate, plan, test = self.estimate, self.plan, self.plan.sprt
        low, high = estimate.ci95
        return {
            "a": plan.a.name,
            "b": plan.b.name,
            "against": [spec.name for spec in plan.opponents],
            "players": plan.players,
            "seed": plan.seed,
            "pairs": estimate.pairs,
            "matches": 2 * estimate.pairs,
            "void_pairs": self.void,
            "mean": estimate.mean,
            "stdev": estimate.stdev,
            "ci95": [low, high] if estimate.known else None,
            "los": estimate.los,
            "sprt": None
            if test is None
            else {
                "h0": test.h0,
                "h1": test.h1,
                "alpha": test.alpha,
                "beta": test.beta,
                "llr": self.llr,
                "lower": test.lower,
                "upper": test.upper,
            },
            "faults": self.tally,
            "verdict": self.verdict.name.lower(),
            "exit_code": int(self.verdict),
            "differences": [pair.to_dict() for pair in self.pairs],
        }

    def lines(self) -> list[str]:
        """The summary a bot author reads."""
        plan, estimate = self.plan, self.estimate
        opponents = ", ".join(spec.name for spec in plan.opponents)
        lines = [
            f"A = {plan.a.name}, B = {plan.b.name}; against {opponents} at {plan.players}-player tables",
            f"{estimate.pairs} pairs ({2 * estimate.pairs} matches)"
            + (f", {self.void} void pair(s) left out" if self.void else ""),
        ]
        if estimate.known:
            low, high = estimate.ci95
            lines.append(
                f"A - B = {signed(estimate.mean)} points per match, 95% CI [{signed(low)}, "
                f"{signed(high)}], LOS {100 * estimate.los:.1f}%"
            )
        else:
            lines.append("too few pairs for an interval")
        test = plan.sprt
        if test is not None:
            lines.append(
                f"SPRT: H0 {number(test.h0, 'g')} vs H1 {number(test.h1, 'g')} points per match "
                f"(alpha {test.alpha:g}, beta {test.beta:g})"
            )
        for which, spec in (("a", plan.a), ("b", plan.b)):
            tally = self.tally[which]
            if tally["faults"]:
                lines.append(
                    f"{which.upper()} ({spec.name}): {tally['faults']} fault(s), "
                    f"{tally['forfeits']} forfeited match(es)"
                )
        lines.append(f"verdict: {self.verdict.words}: {self.reason} (exit {int(self.verdict)})")
        return lines

    @property
    def reason(self) -> str:
        """Why the verdict: the sequential test's LLR against its bounds, or where the interval lies."""
        estimate, test = self.estimate, self.plan.sprt
        if test is not None:
            llr = test.llr(estimate)
            bounds = f"LLR {number(llr)}, bounds [{number(test.lower)}, {number(test.upper)}]"
            if self.verdict is Verdict.UNDECIDED:
                if len(self.pairs) < SPRT_MIN_PAIRS:
                    return f"{bounds}; fewer than the {SPRT_MIN_PAIRS} pairs the test needs"
                return f"{bounds}; neither crossed within {2 * self.plan.pairs} matches"
            return bounds
        if not estimate.known:
            return "fewer than 2 pairs, no interval"
        return {
            Verdict.BETTER: "the 95% CI lies above 0",
            Verdict.NOT_BETTER: "the 95% CI reaches no higher than 0",
            Verdict.UNDECIDED: "the 95% CI straddles 0",
        }[self.verdict]


def number(value: float, spec: str = ".2f") -> str:
    """``value`` for people, negative with the true minus sign (U+2212), as the HTML report writes
    it; infinite as ∞. ``--json`` gives plain numbers.

    >>> number(-9.534), number(2.944), number(-math.inf), number(-0.001), number(-1.5, "g")
    ('−9.53', '2.94', '−∞', '0.00', '−1.5')
    """
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    text = format(value, spec)
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text.replace("-", "−")


def signed(value: float) -> str:
    """``value`` with its sign always written: ``+3.50``, ``−3.50``.

    >>> signed(3.5), signed(-3.5), signed(0.0)
    ('+3.50', '−3.50', '+0.00')
    """
    text = number(value)
    return text if text.startswith("−") else "+" + text


def progress_text(snapshot: Snapshot) -> str:
    """One line of a running comparison.

    >>> progress_text(Snapshot(12, 200, Estimate(12, 3.5, 4.0), llr=1.234, void=1))
    '24/400 matches  A-B +3.50 ± 2.26  LOS 99.9%  LLR 1.23  void 1'
    >>> progress_text(Snapshot(18, 200, Estimate(18, -4.0, 4.0), llr=-9.534))
    '36/400 matches  A-B −4.00 ± 1.85  LOS 0.0%  LLR −9.53'
    >>> progress_text(Snapshot(1, 200, Estimate(1, 3.0, 0.0), llr=None))
    '2/400 matches  A-B +3.00'
    """
    estimate = snapshot.estimate
    text = f"{2 * snapshot.done}/{2 * snapshot.total} matches  A-B {signed(estimate.mean)}"
    if estimate.known:
        text += f" ± {Z95 * estimate.se:.2f}  LOS {100 * estimate.los:.1f}%"
    if snapshot.llr is not None:
        text += f"  LLR {number(snapshot.llr)}"
    if snapshot.void:
        text += f"  void {snapshot.void}"
    return text
