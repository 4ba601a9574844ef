"""The bots' debug lines of one match: what each seat sent about its own decisions, kept for its author.

A bot may attach a debug text to each answer (``ActionReply.debug``, docs/PROTOCOL.md "Debug lines").
It is for the bot's author and the organiser only: the match runner takes it beside the action and never
gives it to the engine, another seat or the match record; the store keeps it in a table of its own that
no export, report or web page reads. What is kept is bounded per answer and per seat and match
(:data:`~pyramid_sdk.debugging.MAX_DEBUG_BYTES`, :data:`~pyramid_sdk.debugging.MAX_DEBUG_PER_MATCH`): a
text over either is not kept, whole (a cut line could mislead), which costs the bot no fault, since its
debugging must never change its play; its row says so, and the bot is told in a notice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from pyramid_sdk.debugging import MAX_DEBUG_BYTES, MAX_DEBUG_PER_MATCH
from pyramid_sdk.observation import Observation

MAX_DEBUG_NOTICES: Final = 5
"""Notices about debug texts not kept that one seat is sent per match: the first few tell the pattern."""


class DebugFate(enum.StrEnum):
    """What became of one answer's debug text."""

    KEPT = "kept"
    TOO_LONG = "too-long"
    """Over :data:`MAX_DEBUG_BYTES`: not kept."""
    MATCH_FULL = "match-full"
    """Within the cap, but the seat's texts of the match would pass :data:`MAX_DEBUG_PER_MATCH`."""


@dataclass(frozen=True, slots=True)
class DebugLine:
    """One answer's debug text: the seat, the deal (from 1) and the step of the deal it answered (see
    :func:`step_of`), what became of it, its size in bytes of UTF-8 as sent, and the text when kept."""

    seat: int
    deal: int
    step: int
    fate: DebugFate
    size: int
    text: str = ""


def step_of(obs: Observation) -> int:
    """The place of the decision ``obs`` asks for in its deal: 1 is the declaration, 2 the first card
    led, and so on to ``1 + 6 * players``, the last card: the order in which a replay shows them.

    >>> from pyramid_sdk import Match, Rules
    >>> match = Match(Rules(players=2), seed=1)
    >>> step_of(match.observation(match.to_act))
    1
    >>> match.apply(match.default_action()); step_of(match.observation(match.to_act))
    2
    """
    played = sum(len(trick.cards) for trick in obs.tricks) + len(obs.current_trick.cards)
    return 1 + (obs.declaration is not None) + played


class DebugBook:
    """The debug lines of one match, as its runner takes them: what each seat has kept so far counts
    against its :data:`MAX_DEBUG_PER_MATCH`."""

    def __init__(self, players: int) -> None:
        self.lines: list[DebugLine] = []
        self._kept = [0] * players
        self._told = [0] * players

    def take(self, seat: int, deal: int, step: int, text: str) -> str | None:
        """Records ``text``, the debug text of ``seat``'s answer at ``step`` of ``deal`` (valid Unicode:
        protobuf checks the wire's, :func:`pyramid_sdk.debugging.take_lines` an in-process bot's); the
        notice to send the seat when it is not kept, or ``None``."""
        size = len(text.encode("utf-8"))
        if size > MAX_DEBUG_BYTES:
            fate, why = DebugFate.TOO_LONG, f"over the limit of {MAX_DEBUG_BYTES} bytes per answer"
        elif self._kept[seat] + size > MAX_DEBUG_PER_MATCH:
            fate = DebugFate.MATCH_FULL
            why = f"this seat's debug texts in this match would pass {MAX_DEBUG_PER_MATCH} bytes"
        else:
            self._kept[seat] += size
            self.lines.append(DebugLine(seat, deal, step, DebugFate.KEPT, size, text))
            return None
        self.lines.append(DebugLine(seat, deal, step, fate, size))
        self._told[seat] += 1
        if self._told[seat] > MAX_DEBUG_NOTICES:
            return None
        more = "" if self._told[seat] < MAX_DEBUG_NOTICES else "; further ones this match are not told"
        return (
            f"debug text of deal {deal}, step {step} not kept ({size} bytes): {why}; the action counts{more}"
        )
