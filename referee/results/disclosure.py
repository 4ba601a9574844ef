"""What the referee may publish while a league runs: a table's deals stay hidden until all its matches
are played.

Every seating of a table replays the same deals (the duplicate format), so the hands, the cards played,
the match seed and the deal records of one finished seating tell whoever reads them the cards of the
seatings still to come. Until every scheduled match of the table is stored complete, reports, replays
and exports show only its results: totals, ranks, forfeits and faults (their details with card codes
masked).

Matches replay the same deals exactly when they share a match seed, so a table is keyed on the
scheduled match's seed, whatever the schedule's seatings look like: :func:`table_key` is the one place
that says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary, Summarized
from referee.match.outcome import MatchStatus
from referee.results.store import StoredMatch

HIDDEN_NOTE: Final = "deals hidden until every match of this table is played"

_CARD_CODE: Final = re.compile(r"(?<![A-Za-z0-9])[9TJQKA][SHDC](?![A-Za-z0-9])")
_CARD_SYMBOL: Final = re.compile(r"(?:10|[9JQKA])[♠♥♦♣]")


def table_key(match: ScheduledMatch | MatchSummary | StoredMatch) -> int:
    """The deals a match plays: matches with equal keys share every hand, seat by seat."""
    return match.seed


@dataclass(frozen=True, slots=True)
class Disclosure:
    """Which stored matches may have their deals shown."""

    pending_tables: frozenset[int]
    """Keys of tables with a scheduled match not stored complete yet (void counts as not played)."""

    def deals_shown(self, match: ScheduledMatch | MatchSummary | StoredMatch) -> bool:
        return table_key(match) not in self.pending_tables


def disclosure(schedule: Iterable[ScheduledMatch], stored: Mapping[str, Summarized]) -> Disclosure:
    """The league's disclosure now. A stored match whose table is no longer scheduled (an entrant left
    the league) has no match to come that replays its deals, so it is shown.

    >>> disclosure([], {}).deals_shown(ScheduledMatch(0, "r1:a,b", 1, 1, 0, 7, ("a", "b"), "r1:{a,b}"))
    True
    """
    pending = set()
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None or match.summary.status is not MatchStatus.COMPLETE:
            pending.add(table_key(scheduled))
    return Disclosure(frozenset(pending))


def mask_cards(text: str) -> str:
    """A fault detail fit for a match whose deals are hidden: card codes and symbols become ``??``.

    >>> mask_cards("seat 0 cannot play KS: it is not in the seat's hand; it said 'K♠ 10♥'")
    "seat 0 cannot play ??: it is not in the seat's hand; it said '?? ??'"
    """
    return _CARD_SYMBOL.sub("??", _CARD_CODE.sub("??", text))
