"""A stored match's results without its deals: what the leaderboard, the crosstable, the match list and a
settled league's plan read.

Decoding a match record means every card of every deal: at 840 matches the leaderboard spent 5.9 s and
151 MB on it, to use a few numbers per seat. So each result is stored with its summary (the ``summaries``
table, written in the same transaction as the match), and readers that need no deal read summaries only,
at a cost that stays flat however long the matches were. A match stored without one (by a referee from
before summaries, or one whose summary does not decode) is summarized from its record when read, and a
run that opens the database for writing fills the missing ones in: nothing is ever lost, only recomputed.

Both a :class:`MatchSummary` and a decoded :class:`referee.results.store.StoredMatch` are
:class:`Summarized`: the readers take either, so tests and callers that hold whole matches still work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from pyramid_sdk.record import MatchRecord
from referee.match.faults import Fault
from referee.match.outcome import MatchStatus

FORMAT: Final = 1
"""The summary's JSON layout. A stored summary of another format is recomputed from its record: change
this when a field is added, and old databases keep reading right."""


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """One stored match's results, per seat in seat order (points are credited ones, as everywhere)."""

    match_id: str
    round: int
    table: int
    rotation: int
    seed: int
    status: MatchStatus
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    credited: tuple[int, ...]
    """:attr:`pyramid_sdk.record.MatchRecord.credited_totals`."""
    ranks: tuple[int, ...]
    forfeits: tuple[int, ...]
    forfeit_deals: tuple[int, ...]
    """The deal in which each seat of :attr:`forfeits` forfeited."""
    declarations: tuple[int, ...]
    """Declarations each seat's bot made itself (not those of the referee's autopilot after a forfeit)."""
    exact: tuple[int, ...]
    """How many of :attr:`declarations` took exactly the tricks declared."""
    fault_seats: tuple[int, ...]
    """The seat of each recorded fault, in the order recorded."""

    @property
    def summary(self) -> MatchSummary:
        return self

    def to_json(self, record_chars: int) -> str:
        """What the ``summaries`` table holds: the results, and the length of the stored record they
        summarize (``record_chars``, in characters as SQLite's ``length`` counts them). The place
        (round, table, seed…) and the status are the ``matches`` row's own."""
        data = {key: list(getattr(self, key)) for key in ("seats", *_INT_FIELDS)}
        return json.dumps({"format": FORMAT, "record": record_chars, **data}, separators=(",", ":"))


class Summarized(Protocol):
    """A stored match as a reader of results takes it: a summary, or a whole decoded match."""

    @property
    def summary(self) -> MatchSummary: ...


def summarize(
    place: tuple[str, int, int, int, int], status: MatchStatus, record: MatchRecord, faults: Sequence[Fault]
) -> MatchSummary:
    """The summary of a match from its record; ``place`` is (match id, round, table, rotation, seed)."""
    players = len(record.seats)
    declarations, exact = [0] * players, [0] * players
    for deal in record.deals:
        if record.on_autopilot(deal):
            continue  # the referee's declaration, not the bot's
        declarations[deal.declarer] += 1
        exact[deal.declarer] += deal.taken == deal.declaration.tricks
    return MatchSummary(
        *place,
        status,
        tuple(record.seats),
        tuple(record.totals),
        tuple(record.credited_totals),
        tuple(record.ranks),
        tuple(record.forfeits),
        tuple(record.forfeit_deals),
        tuple(declarations),
        tuple(exact),
        tuple(fault.seat for fault in faults),
    )


def from_json(
    place: tuple[str, int, int, int, int], status: MatchStatus, text: str, record_chars: int
) -> MatchSummary | None:
    """A stored summary, or ``None`` when it is of another :data:`FORMAT`, does not decode, or was made
    from a record of another length than the one stored now (``record_chars``): a record changed or
    damaged since is decoded instead, and a damaged one reported as before summaries.

    >>> summary = from_json(("m", 1, 1, 0, 7), MatchStatus.COMPLETE, '{"format": 0}', 10)
    >>> summary is None
    True
    """
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("record") != record_chars:
            return None
        seats = tuple(str(name) for name in data["seats"])
        totals, credited, ranks, forfeits, forfeit_deals, declarations, exact, fault_seats = (
            tuple(int(value) for value in data[key]) for key in _INT_FIELDS
        )
    except (ValueError, TypeError, KeyError):
        return None
    return MatchSummary(
        *place,
        status,
        seats,
        totals,
        credited,
        ranks,
        forfeits,
        forfeit_deals,
        declarations,
        exact,
        fault_seats,
    )


_INT_FIELDS: Final = (
    "totals",
    "credited",
    "ranks",
    "forfeits",
    "forfeit_deals",
    "declarations",
    "exact",
    "fault_seats",
)
