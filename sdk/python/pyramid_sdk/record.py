"""The match record: everything that happened in a match, as values that serialise to JSON and back.

The record holds every hand as dealt, so it is for the referee, the store and the reports, never for a
bot during play. :meth:`pyramid_sdk.engine.Match.replay` checks a record against the rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyramid_sdk.actions import Declare
from pyramid_sdk.cards import Card, Suit
from pyramid_sdk.observation import TalkMessage, Trick
from pyramid_sdk.rules import Rules


class RecordError(ValueError):
    """A match record that cannot be read, or that breaks the rules when replayed."""


@dataclass(frozen=True, slots=True)
class DealRecord:
    """One finished deal. ``taken`` and ``points`` are the declarer's."""

    number: int
    dealer: int
    declarer: int
    hands: tuple[tuple[Card, ...], ...]
    """Every seat's six cards as dealt, in deck order."""
    declaration: Declare
    tricks: tuple[Trick, ...]
    taken: int
    points: int
    talk: tuple[TalkMessage, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "dealer": self.dealer,
            "declarer": self.declarer,
            "hands": [[card.code for card in hand] for hand in self.hands],
            "declared": self.declaration.tricks,
            "trump": self.declaration.trump.code,
            "tricks": [
                {"leader": t.leader, "cards": [card.code for card in t.cards], "winner": t.winner}
                for t in self.tricks
            ],
            "taken": self.taken,
            "points": self.points,
            "talk": [{"seat": m.seat, "trick": m.trick, "text": m.text} for m in self.talk],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DealRecord:
        return cls(
            number=int(data["number"]),
            dealer=int(data["dealer"]),
            declarer=int(data["declarer"]),
            hands=tuple(tuple(Card.parse(code) for code in hand) for hand in data["hands"]),
            declaration=Declare(int(data["declared"]), Suit.parse(data["trump"])),
            tricks=tuple(
                Trick(int(t["leader"]), tuple(Card.parse(code) for code in t["cards"]), int(t["winner"]))
                for t in data["tricks"]
            ),
            taken=int(data["taken"]),
            points=int(data["points"]),
            talk=tuple(
                TalkMessage(int(m["seat"]), int(m["trick"]), str(m["text"])) for m in data.get("talk", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A whole match. ``complete`` is false for a match that stopped before every pyramid was full."""

    seats: tuple[str, ...]
    seed: int
    rules: Rules
    deals: tuple[DealRecord, ...]
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    """Per seat, 1 = best; equal totals share a rank; forfeited seats rank below all others."""
    forfeits: tuple[int, ...]
    """Seats that forfeited, ascending."""
    complete: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": list(self.seats),
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "deals": [deal.to_dict() for deal in self.deals],
            "totals": list(self.totals),
            "ranks": list(self.ranks),
            "forfeits": list(self.forfeits),
            "complete": self.complete,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchRecord:
        try:
            return cls(
                seats=tuple(str(name) for name in data["seats"]),
                seed=int(data["seed"]),
                rules=Rules.from_dict(data["rules"]),
                deals=tuple(DealRecord.from_dict(deal) for deal in data["deals"]),
                totals=_ints(data["totals"]),
                ranks=_ints(data["ranks"]),
                forfeits=_ints(data["forfeits"]),
                complete=bool(data["complete"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"not a match record: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def from_json(cls, text: str) -> MatchRecord:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not a match record: {exc}") from exc
        return cls.from_dict(data)


def _ints(values: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(value) for value in values)
