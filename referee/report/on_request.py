"""The report rendered a page at a time, when a page is asked for: ``referee serve``'s pages.

A served league's results change after every match, and its pages are read far less often than that:
rewriting the site after each change (what ``referee report`` writes once) cost a reader process a whole
core at a few thousand stored matches. Here nothing is rendered until a page is asked for, and what is
kept does not grow with the matches stored: the index until the results change; the last few match pages
asked for, each until its match's summary, its disclosure or its analysis changes; and per entrant the
sums of its page's pyramid and trumps over the matches whose deals are shown, with a mark per schedule
position of what they counted (an array of the schedule's length), so that a page asked for after a new
match decodes at most that match (and the rest of its table, once its deals may be shown), never the
league. The pages that list matches (the list of matches, an entrant's) go through the stored summaries
as they are rendered. The pages are those ``referee report`` writes, byte for byte.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Final

from referee.analysis import storage as analyses
from referee.analysis.estimate import Analysis
from referee.analysis.summary import Summary, summarise
from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary
from referee.report.site import (
    ASSETS,
    EntrantTally,
    SiteView,
    analysed_files,
    entrant_html,
    index_html,
    match_html,
    match_key,
    matches_html,
    site_view,
)
from referee.results.reading import Standings
from referee.results.store import StoredMatch

Fetch = Callable[[Sequence[str]], Iterator[StoredMatch]]

DECODED_KEPT: Final = 8
"""Decoded matches kept for the state they were decoded in: the match page and the entrant pages asked
for after a match decode it once (a decoded match takes about 0.2 MB)."""
KEPT_PAGES: Final = 32
"""Match pages kept rendered (the last asked for): enough for a match's viewers, and a crawler that asks
for every match page keeps no more than these."""


@dataclass(slots=True)
class _Read:
    """One state of the results as the pages see it, and what is derived of it once."""

    state: Hashable
    view: SiteView
    analysed: frozenset[str]
    """The names of the files ``referee analyze`` kept (:func:`~referee.report.site.analysed_files`)."""
    losses: dict[str, Summary] | None = None
    """What the analyses kept say of each entrant, once read."""
    analysed_count: int = 0
    decoded: OrderedDict[str, StoredMatch] = field(default_factory=OrderedDict)
    """The last :data:`DECODED_KEPT` matches decoded in this state."""


@dataclass(eq=False)
class _Sums:
    """One entrant's sums over the matches whose deals are shown: what its page's pyramid, trumps and
    faults add up, and by schedule position a mark (the summary's hash, 0 for none) of each match
    counted, so that a counted match that changed (deleted for a new version, replayed) is seen."""

    tally: EntrantTally
    counted: array[int]
    count: int = 0
    hidden: dict[str, tuple[int, EntrantTally]] = field(default_factory=dict)
    """By match id, of the matches of tables still played that have a fault of the entrant's: its mark
    and its tally (its faults, masked). As many as such matches, which end as their tables do."""


@dataclass(eq=False)
class OnRequest:
    """A league's report, rendered page by page (see the module's doc). ``state`` names a state of the
    results: the caller passes a new one when they changed, and the pages rendered under an older one
    are rendered again when next asked for (the match pages only if their match changed)."""

    match_pages: OrderedDict[str, tuple[tuple[object, ...], str]] = field(default_factory=OrderedDict)
    """By match id, the last :data:`KEPT_PAGES` asked for: the key it was rendered under, and the page."""
    index: tuple[Hashable, str] | None = None
    """The index, and the state it was rendered in."""
    sums: dict[str, _Sums] = field(default_factory=dict)
    """By entrant (:class:`_Sums`), of the schedule :attr:`summed`."""
    summed: Sequence[ScheduledMatch] = ()
    kept_analyses: dict[str, tuple[tuple[object, ...], Analysis | None]] = field(default_factory=dict)
    """By match id, the analysis ``referee analyze`` kept of it, with the key it was read under: one per
    analysed match (they grow with the analyses run, not with the matches stored)."""
    decoded: int = 0
    """Matches decoded: for the tests."""
    _read: _Read | None = None

    def page(self, league: League, read: Standings, state: Hashable, fetch: Fetch, name: str) -> str | None:
        """The page ``name`` of the report of ``read`` (the results in ``state``), decoding with
        ``fetch`` only the matches it needs and has not kept; ``None`` when the report has no such page."""
        if name in ASSETS:
            return (resources.files("referee.report") / "templates" / name).read_text("utf-8")
        now = self._now(league, read, state)
        if (match_id := now.view.match_pages.match_of(name)) is not None:
            return self._match_page(now, match_id, fetch)
        if name == "index.html":
            if self.index is None or self.index[0] != state:
                self._losses(now, fetch)
                self.index = (state, index_html(now.view, False, now.analysed_count, now.losses or {}))
            return self.index[1]
        if name == "matches.html":
            return matches_html(now.view)
        for entrant, page in now.view.entrant_pages.items():
            if page == name:
                self._losses(now, fetch)
                return entrant_html(now.view, entrant, self._tally(now, entrant, fetch), now.losses or {})
        return None

    def _now(self, league: League, read: Standings, state: Hashable) -> _Read:
        if self._read is None or self._read.state != state:
            self._read = _Read(state, (view := site_view(league, read)), analysed_files(view.league))
        return self._read

    def _key(self, now: _Read, match_id: str) -> tuple[object, ...]:
        view = now.view
        return match_key(
            view, view.match_pages.by_id[match_id], view.summaries[match_id], False, now.analysed
        )

    def _fetch(self, now: _Read, fetch: Fetch, ids: Sequence[str]) -> Iterator[StoredMatch]:
        """The matches ``ids`` decoded (those decoded last in this state taken as they are), in order."""
        kept = {match_id: now.decoded[match_id] for match_id in ids if match_id in now.decoded}
        fresh = fetch([match_id for match_id in ids if match_id not in kept])
        for match_id in ids:
            match = kept.get(match_id)
            if match is None:
                match = next(fresh, None)
                if match is None:
                    return
                self.decoded += 1
                now.decoded[match_id] = match
                while len(now.decoded) > DECODED_KEPT:
                    now.decoded.popitem(last=False)
            yield match

    def _match_page(self, now: _Read, match_id: str, fetch: Fetch) -> str | None:
        wanted = self._key(now, match_id)
        kept = self.match_pages.get(match_id)
        if kept is not None and kept[0] == wanted:
            self.match_pages.move_to_end(match_id)
            return kept[1]
        found = list(self._fetch(now, fetch, [match_id]))
        if not found:  # deleted since the summaries were read (a new version): it has no page now
            return None
        (match,) = found
        analysis = self._analysis(now.view, wanted, match)
        html = match_html(now.view, now.view.match_pages.by_id[match_id], match, analysis)
        self.match_pages[match_id] = (wanted, html)
        self.match_pages.move_to_end(match_id)
        while len(self.match_pages) > KEPT_PAGES:
            self.match_pages.popitem(last=False)
        return html

    def _analysis(self, view: SiteView, wanted: tuple[object, ...], match: StoredMatch) -> Analysis | None:
        """The kept analysis of ``match`` (whose page key is ``wanted``), read once per change of it."""
        if wanted[3] is None:
            self.kept_analyses.pop(match.match_id, None)
            return None
        kept = self.kept_analyses.get(match.match_id)
        if kept is None or kept[0] != wanted:
            kept = self.kept_analyses[match.match_id] = (
                wanted,
                analyses.load(view.league.database, match.match_id, match.record),
            )
        return kept[1]

    def _losses(self, now: _Read, fetch: Fetch) -> None:
        """What the analyses kept say of each entrant (the index's and the entrant pages' table), read
        with their matches once per change of an analysis."""
        if now.losses is not None:
            return
        view, analysed = now.view, []
        if now.analysed:  # none kept: no look per match
            wanted = {}
            for scheduled, summary in view.played:
                key = match_key(view, scheduled, summary, False, now.analysed)
                if key[3] is not None:
                    wanted[scheduled.match_id] = (scheduled, key)
            due = [i for i, (_, key) in wanted.items() if self.kept_analyses.get(i, (None,))[0] != key]
            for match in self._fetch(now, fetch, due):
                self._analysis(view, wanted[match.match_id][1], match)
            for gone in set(self.kept_analyses) - set(wanted):
                del self.kept_analyses[gone]
            for match_id, (scheduled, _) in wanted.items():
                if (analysis := self.kept_analyses[match_id][1]) is not None:
                    analysed.append((analysis, scheduled.entrants))
        now.losses = {summary.name: summary for summary in summarise(analysed)}
        now.analysed_count = len(analysed)

    def _tally(self, now: _Read, entrant: str, fetch: Fetch) -> EntrantTally:
        """What ``entrant``'s page adds up: its sums (:class:`_Sums`) brought up to date, decoding only
        the matches shown since they were last brought up to date, and the matches of tables still
        played (their results, and their faults masked) as they are now."""
        view = now.view
        schedule = view.read.schedule
        if self.summed is not schedule:  # another schedule: other positions
            self.summed, self.sums = schedule, {}
        mine = [
            (scheduled, summary, scheduled.entrants.index(entrant))
            for scheduled, summary in view.played
            if entrant in scheduled.entrants
        ]
        sums = self.sums.get(entrant)
        if sums is None or not _still(sums, view, mine):
            sums = self.sums[entrant] = _Sums(EntrantTally(), array("q", bytes(8 * len(schedule))))
        due, faulty = {}, set()
        for scheduled, summary, seat in mine:
            if view.shown.deals_shown(summary):
                if sums.counted[scheduled.position] != _mark(summary):
                    due[scheduled.match_id] = (scheduled, seat, True)
            elif seat in summary.fault_seats:
                faulty.add(scheduled.match_id)
                if sums.hidden.get(scheduled.match_id, (0,))[0] != _mark(summary):
                    due[scheduled.match_id] = (scheduled, seat, False)
        for gone in set(sums.hidden) - faulty:
            del sums.hidden[gone]
        for match in self._fetch(now, fetch, list(due)):
            scheduled, seat, shows = due[match.match_id]
            part = EntrantTally()
            part.add(scheduled, match, seat, shows)
            part.matches = []
            if shows:
                sums.tally.merge(part)
                sums.counted[scheduled.position] = _mark(match.summary)
                sums.count += 1
            else:
                sums.hidden[match.match_id] = (_mark(match.summary), part)
        page = EntrantTally(sums.tally.numbers, sums.tally.trumps)
        page.matches = [(scheduled, summary, seat) for scheduled, summary, seat in mine]
        faults = list(sums.tally.faults)
        for scheduled, summary, _ in mine:
            if not view.shown.deals_shown(summary):
                page.hidden += 1
                if (kept := sums.hidden.get(scheduled.match_id)) is not None:
                    faults += kept[1].faults
        page.faults = sorted(faults, key=lambda fault: fault[0].position)  # stable: in recorded order
        return page


def _mark(summary: MatchSummary) -> int:
    """What :class:`_Sums` marks a counted match with: never 0, which marks none."""
    return hash(summary) or 1


def _still(sums: _Sums, view: SiteView, mine: list[tuple[ScheduledMatch, MatchSummary, int]]) -> bool:
    """Whether every match ``sums`` counted is still stored as it was, its deals shown."""
    same = 0
    for scheduled, summary, _ in mine:
        mark = sums.counted[scheduled.position]
        if mark == 0:
            continue
        if mark != _mark(summary) or not view.shown.deals_shown(summary):
            return False
        same += 1
    return same == sums.count
