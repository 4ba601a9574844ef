"""The stored summaries a long-lived reader keeps (``referee serve``'s reader processes), packed.

A :class:`~referee.league.summary.MatchSummary` as an object takes about 2.2 KB (its id, its seats'
names and eight tuples of ints, each an object of its own): a reader that kept one per stored match grew
by that much with every match, 97 MiB over a 30-minute soak with two readers. Here a match of the
league's schedule is one ``bytes`` of its per-seat figures (about 130 bytes for four seats), kept at its
schedule position: its id, place, seed and seats are the scheduled match's own, held once by the schedule
whatever is stored. A summary is made again when it is read, and dropped after. A stored match that is
not the scheduled one it claims to be (another place, seed or seating: an entrant left the league) is
kept whole.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary
from referee.match.outcome import MatchStatus

_STATUSES: Final = tuple(MatchStatus)


def pack(summary: MatchSummary) -> bytes:
    """A summary's figures as 32-bit ints: status, the lengths of its three uneven fields, then the
    seven per-seat fields and the three uneven ones run together."""
    values = [
        _STATUSES.index(summary.status),
        len(summary.forfeits),
        len(summary.fault_seats),
        *summary.totals,
        *summary.credited,
        *summary.ranks,
        *summary.declarations,
        *summary.exact,
        *summary.forfeits,
        *summary.forfeit_deals,
        *summary.fault_seats,
    ]
    return array("i", values).tobytes()


def unpack(scheduled: ScheduledMatch, packed: bytes) -> MatchSummary:
    """The summary :func:`pack` packed, of the match ``scheduled``.

    >>> from referee.league.schedule import ScheduledMatch
    >>> s = ScheduledMatch(0, "r1:a,b", 1, 1, 0, 7, ("a", "b"), "r1:{a,b}")
    >>> m = MatchSummary("r1:a,b", 1, 1, 0, 7, MatchStatus.COMPLETE, ("a", "b"), (3, -2), (3, -2),
    ...                  (1, 2), (1,), (9,), (16, 8), (5, 2), (1, 1))
    >>> unpack(s, pack(m)) == m
    True
    """
    values = array("i")
    values.frombytes(packed)
    players = len(scheduled.entrants)
    forfeits, faults = values[1], values[2]

    def field(number: int) -> tuple[int, ...]:
        start = 3 + number * players
        return tuple(values[start : start + players])

    rest = 3 + 5 * players
    return MatchSummary(
        scheduled.match_id,
        scheduled.round,
        scheduled.table,
        scheduled.rotation,
        scheduled.seed,
        _STATUSES[values[0]],
        scheduled.entrants,
        field(0),
        field(1),
        field(2),
        tuple(values[rest : rest + forfeits]),
        tuple(values[rest + forfeits : rest + 2 * forfeits]),
        field(3),
        field(4),
        tuple(values[rest + 2 * forfeits : rest + 2 * forfeits + faults]),
    )


def fits(scheduled: ScheduledMatch, summary: MatchSummary) -> bool:
    """Whether ``summary`` is of the match ``scheduled`` (so that packing it loses nothing)."""
    return (
        summary.match_id == scheduled.match_id
        and (summary.round, summary.table, summary.rotation)
        == (scheduled.round, scheduled.table, scheduled.rotation)
        and summary.seed == scheduled.seed
        and summary.seats == scheduled.entrants
        and len(summary.declarations) == len(summary.exact) == len(scheduled.entrants)
    )


class PackedSummaries(Mapping[str, MatchSummary]):
    """Stored summaries by match id, those of ``schedule``'s matches packed at their positions (see the
    module's doc); others (or all, with an empty schedule) kept whole. :meth:`copy` shares the packed
    rows, which never change: a snapshot costs a list of the schedule's length, not the summaries."""

    __slots__ = ("_count", "_positions", "_rows", "_schedule", "_whole")

    def __init__(self, schedule: Sequence[ScheduledMatch] = (), positions: Mapping[str, int] | None = None):
        self._schedule = schedule
        self._positions: Mapping[str, int] = (
            positions if positions is not None else {s.match_id: s.position for s in schedule}
        )
        self._rows: list[bytes | None] = [None] * len(schedule)
        self._whole: dict[str, MatchSummary] = {}
        self._count = 0

    def copy(self) -> PackedSummaries:
        other = PackedSummaries.__new__(PackedSummaries)
        other._schedule, other._positions = self._schedule, self._positions
        other._rows, other._whole, other._count = list(self._rows), dict(self._whole), self._count
        return other

    def repacked(self, schedule: Sequence[ScheduledMatch]) -> PackedSummaries:
        """The same summaries, packed against another schedule (the league's changed)."""
        other = PackedSummaries(schedule)
        for summary in self.values():
            other[summary.match_id] = summary
        return other

    @property
    def schedule(self) -> Sequence[ScheduledMatch]:
        """What the summaries are packed against."""
        return self._schedule

    def __getitem__(self, match_id: str) -> MatchSummary:
        position = self._positions.get(match_id)
        if position is not None and (row := self._rows[position]) is not None:
            return unpack(self._schedule[position], row)
        return self._whole[match_id]

    def get(self, match_id: str, default: MatchSummary | None = None) -> MatchSummary | None:  # type: ignore[override]
        """As a dict's: without the exception a miss costs ``Mapping.get`` (most of a schedule is
        unplayed, and the pages go through all of it)."""
        position = self._positions.get(match_id)
        if position is not None and (row := self._rows[position]) is not None:
            return unpack(self._schedule[position], row)
        return self._whole.get(match_id, default)

    def __contains__(self, match_id: object) -> bool:
        if not isinstance(match_id, str):
            return False
        position = self._positions.get(match_id)
        if position is not None and self._rows[position] is not None:
            return True
        return match_id in self._whole

    def __iter__(self) -> Iterator[str]:
        """The ids in schedule order, then the others."""
        for position, row in enumerate(self._rows):
            if row is not None:
                yield self._schedule[position].match_id
        yield from self._whole

    def __len__(self) -> int:
        return self._count

    def __setitem__(self, match_id: str, summary: MatchSummary) -> None:
        self.pop(match_id)
        position = self._positions.get(match_id)
        if position is not None and fits(self._schedule[position], summary):
            self._rows[position] = pack(summary)
        else:
            self._whole[match_id] = summary
        self._count += 1

    def pop(self, match_id: str) -> None:
        """Forgets ``match_id`` (nothing if it is not kept)."""
        position = self._positions.get(match_id)
        if position is not None and self._rows[position] is not None:
            self._rows[position] = None
            self._count -= 1
        elif self._whole.pop(match_id, None) is not None:
            self._count -= 1

    def clear(self) -> None:
        self._rows = [None] * len(self._schedule)
        self._whole.clear()
        self._count = 0
