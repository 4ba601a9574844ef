"""What a played match comes to: its status and outcome, as values. The match runner makes them; the
store, the ratings, the reports and the executors read them, without depending on how a match is played.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from pyramid_sdk.record import MatchRecord
from referee.match.faults import Fault


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
