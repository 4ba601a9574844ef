"""Faults: what a bot did wrong, as values. A fault is the bot's doing; a void match is the referee's."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

MAX_FAULTS: Final = 3
"""Faults after which a seat forfeits, unless a league or a caller says otherwise: the one default of
every match player (a league, ``referee match``, ``referee check``, :mod:`referee.api`)."""
MAX_DETAIL: Final = 300
"""Characters a fault detail keeps; a longer one is cut and ends with an ellipsis."""
_BREAKS: Final = re.compile(r"\s*[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+\s*")


def one_line(text: str, limit: int = MAX_DETAIL) -> str:
    """``text`` as one line of at most ``limit`` characters: line breaks become ``" | "``, other
    unprintable characters ``"?"``, and a cut text ends with ``…``.

    >>> one_line("Traceback:\\n  boom\\r\\n")
    'Traceback: | boom'
    >>> one_line("x" * 10, limit=5)
    'xxxx…'
    """
    flat = _BREAKS.sub(" | ", text.strip())
    flat = "".join(char if char.isprintable() else "?" for char in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class RefereeInternalError(RuntimeError):
    """The referee's own failure, kept apart from anything a bot does (as gomill keeps
    ``RingmasterInternalError``): a match that fails on the referee's side is void, and when voids keep
    coming a run stops with this error rather than retrying without end."""


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
    """One line, safe to show to anyone: it never names a card the seat may not know. Whoever makes a
    fault may pass any text: it is made one line of at most :data:`MAX_DETAIL` characters here, the one
    place that rule is kept (:func:`one_line`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", one_line(self.detail))

    def to_dict(self) -> dict[str, object]:
        return {"seat": self.seat, "deal": self.deal, "kind": str(self.kind), "detail": self.detail}


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    max_faults: int = MAX_FAULTS
    """After this many faults a seat forfeits: autopilot plays for it and it ranks last."""

    def __post_init__(self) -> None:
        if isinstance(self.max_faults, bool) or not isinstance(self.max_faults, int) or self.max_faults < 1:
            raise ValueError(f"max_faults: must be a whole number >= 1, got {self.max_faults!r}")
