"""What a played match comes to: its status and outcome, as values. The match runner makes them; the
store, the ratings, the reports and the drivers read them, without depending on how a match is played.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from pyramid_sdk.record import MatchRecord
from referee.match.debug import DebugLine
from referee.match.faults import Fault, RefereeInternalError


class MatchStatus(enum.StrEnum):
    COMPLETE = "complete"
    VOID = "void"


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    match_id: str
    status: MatchStatus
    record: MatchRecord
    """Complete for a complete match; as far as it went for a void one."""
    faults: tuple[Fault, ...]
    void_reason: str = ""
    latencies: tuple[tuple[float, ...], ...] = field(default=())
    """Per seat, the seconds each of its decisions took."""
    elapsed: float = 0.0
    debug: tuple[DebugLine, ...] = ()
    """The seats' debug lines, for their authors only: stored apart from the match (never in ``record``)."""


VOID_RETRIES: Final = 2
"""Times a void match is played again, from scratch with fresh bots, before it is left void."""
VOIDS_IN_A_ROW: Final = 5
"""Void matches in a row (retries included) after which a run stops with :class:`RefereeInternalError`:
by then the referee's failure is no accident, and retrying would only repeat it."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One play of a match, complete or void, and when it began (wall-clock seconds, as stored)."""

    outcome: MatchOutcome
    started: float


@dataclass(frozen=True, slots=True)
class Finished:
    """A planned match played: its attempts in order, the last one complete, or void after every retry
    (each void attempt is stored too, never rated)."""

    attempts: tuple[Attempt, ...]

    @property
    def outcome(self) -> MatchOutcome:
        return self.attempts[-1].outcome

    @property
    def complete(self) -> bool:
        return self.outcome.status is MatchStatus.COMPLETE


@dataclass(frozen=True, slots=True)
class NotStarted:
    """A planned match whose seats did not all start: not played, not a result (no forfeit is invented);
    the match stays unplayed. ``entrant`` is the first seat that failed and ``reason`` why; ``started``
    the entrants whose bots did start. ``lasting`` is a failure that repeats every time (an in-process
    bot that does not import), ``attempts`` the void plays of this match before a retry failed to start
    (they are stored, as void). ``charged``: the entrants whose failed start counts, when not just
    ``entrant`` (remote entrants not connected; none that was busy in another match)."""

    entrant: str
    reason: str
    started: tuple[str, ...] = ()
    lasting: bool = False
    attempts: tuple[Attempt, ...] = ()
    charged: tuple[str, ...] | None = None

    @property
    def failed(self) -> tuple[str, ...]:
        """The entrants whose failed start counts against them."""
        return (self.entrant,) if self.charged is None else self.charged


TableResult = Finished | NotStarted
"""What a :class:`~referee.match.arbiter.Arbiter` returns for one planned match."""


class VoidStreak:
    """Counts void matches in a row, whichever driver or command plays them; the count that reaches
    :data:`VOIDS_IN_A_ROW` raises :class:`RefereeInternalError`, naming ``what`` was void (``matches``,
    ``pairs``) and what stopped (``run``, ``comparison``)."""

    def __init__(self, what: str = "matches", stopped: str = "run") -> None:
        self.what = what
        self.stopped = stopped
        self.count = 0

    def add(self, void: bool, reason: str = "") -> None:
        if not void:
            self.count = 0
            return
        self.count += 1
        if self.count >= VOIDS_IN_A_ROW:
            raise RefereeInternalError(
                f"the referee stopped the {self.stopped}: {self.count} {self.what} in a row were void, "
                f"the last one with {reason}"
            )
