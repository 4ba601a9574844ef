"""Faults: what a bot did wrong, as values. A fault is the bot's doing; a void match is the referee's."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class FaultKind(enum.StrEnum):
    TIMEOUT = "timeout"
    """No answer within the per-action limit plus what was left in the bank."""
    ILLEGAL_ACTION = "illegal_action"
    """An action the rules do not allow now (or an in-process bot that raised)."""
    MALFORMED = "malformed"
    """A message the referee cannot use: undecodable bytes, wrong request id, out of order, no action,
    oversized."""
    DISCONNECT = "disconnect"
    """The connection closed or the process died; the seat forfeits at once."""
    TALK = "talk"
    """Table talk the rules do not allow; the card still counts."""


@dataclass(frozen=True, slots=True)
class Fault:
    seat: int
    deal: int
    kind: FaultKind
    detail: str
    """One line, safe to show to anyone: it never names a card the seat may not know."""

    def to_dict(self) -> dict[str, object]:
        return {"seat": self.seat, "deal": self.deal, "kind": str(self.kind), "detail": self.detail}


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    max_faults: int = 3
    """After this many faults a seat forfeits: autopilot plays for it and it ranks last."""

    def __post_init__(self) -> None:
        if isinstance(self.max_faults, bool) or not isinstance(self.max_faults, int) or self.max_faults < 1:
            raise ValueError(f"max_faults: must be a whole number >= 1, got {self.max_faults!r}")
