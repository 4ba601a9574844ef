"""The match record: everything that happened in a match, as values that serialise to JSON and back.

The record holds every hand as dealt, so it is for the referee, the store and the reports, never for a
bot during play. :meth:`pyramid_sdk.engine.Match.replay` checks a record against the rules.

It keeps what the table played: a forfeited seat's later cards and declarations, made by the referee's
autopilot, are in its deals and its total. What that seat is *credited* with is
:attr:`MatchRecord.credited_totals`, the one rule every leaderboard, crosstable, comparison and export
applies (docs/RULES.md, "Forfeits").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyramid_sdk.actions import Declare
from pyramid_sdk.cards import Card, Suit
from pyramid_sdk.observation import TalkMessage, Trick
from pyramid_sdk.rules import Rules, worst_score


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
    forfeit_deals: tuple[int, ...] = ()
    """For each seat of ``forfeits``, in the same order, the deal (from 1) in which it forfeited: from
    then on the referee played for it."""

    def __post_init__(self) -> None:
        if len(self.forfeit_deals) != len(self.forfeits) or any(deal < 1 for deal in self.forfeit_deals):
            raise ValueError(
                f"forfeit_deals {list(self.forfeit_deals)}: one deal from 1 per seat of forfeits "
                f"{list(self.forfeits)}"
            )

    @property
    def credited_totals(self) -> tuple[int, ...]:
        """Per seat, the points it is credited with: its total, except that a forfeited seat gets, for
        each of its declarations from the deal in which it forfeited on, the worst score that number
        allows instead of what the autopilot made of it. A seat that forfeits at once is credited 24,
        the lowest total; one that crashes late keeps only what it made itself.

        >>> from pyramid_sdk import Match, Phase, Rules
        >>> match = Match(Rules(players=2), seed=5)
        >>> while match.deal_number < 20:
        ...     match.play_out(until=Phase.DECLARE)
        >>> match.forfeit(1)  # its bot crashed: the referee plays for it from now on
        >>> match.play_out()
        >>> record = match.record()
        >>> record.totals, record.forfeits, record.forfeit_deals, record.credited_totals
        ((108, 102), (1,), (20,), (108, 66))
        """
        return credited_totals(self.totals, self.deals, self.forfeits, self.forfeit_deals)

    def on_autopilot(self, deal: DealRecord) -> bool:
        """Whether the referee declared or finished ``deal`` for its declarer, who had forfeited by then:
        such a declaration is no measure of the bot (it is credited at its worst)."""
        if not self.forfeits:
            return False
        return _on_autopilot(deal, dict(zip(self.forfeits, self.forfeit_deals, strict=True)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": list(self.seats),
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "deals": [deal.to_dict() for deal in self.deals],
            "totals": list(self.totals),
            "ranks": list(self.ranks),
            "forfeits": list(self.forfeits),
            "forfeit_deals": list(self.forfeit_deals),
            "complete": self.complete,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchRecord:
        """The record of ``to_dict`` (or of an export line). A record written before ``forfeit_deals``
        existed takes each forfeited seat's deal from its last fault in ``faults``, if the data has them
        (no fault is recorded for a seat after its forfeit), else deal 1."""
        try:
            forfeits = _ints(data["forfeits"])
            if "forfeit_deals" in data:
                forfeit_deals = _ints(data["forfeit_deals"])
            else:
                last = {int(fault["seat"]): int(fault["deal"]) for fault in data.get("faults", ())}
                forfeit_deals = tuple(max(1, last.get(seat, 1)) for seat in forfeits)
            return cls(
                seats=tuple(str(name) for name in data["seats"]),
                seed=int(data["seed"]),
                rules=Rules.from_dict(data["rules"]),
                deals=tuple(DealRecord.from_dict(deal) for deal in data["deals"]),
                totals=_ints(data["totals"]),
                ranks=_ints(data["ranks"]),
                forfeits=forfeits,
                complete=bool(data["complete"]),
                forfeit_deals=forfeit_deals,
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


def credited_totals(
    totals: Sequence[int],
    deals: Sequence[DealRecord],
    forfeits: Sequence[int],
    forfeit_deals: Sequence[int],
) -> tuple[int, ...]:
    """``totals`` with each forfeited seat's declarations from its forfeit deal on scored at their worst
    (:func:`~pyramid_sdk.rules.worst_score`): the engine ranks by it and every report shows it."""
    if not forfeits:
        return tuple(totals)
    since = dict(zip(forfeits, forfeit_deals, strict=True))
    credited = list(totals)
    for deal in deals:
        if _on_autopilot(deal, since):
            credited[deal.declarer] += worst_score(deal.declaration.tricks) - deal.points
    return tuple(credited)


def _on_autopilot(deal: DealRecord, since: Mapping[int, int]) -> bool:
    """Whether ``deal``'s declarer had forfeited by it (``since``: seat -> the deal it forfeited in)."""
    first = since.get(deal.declarer)
    return first is not None and deal.number >= first


def _ints(values: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(value) for value in values)
