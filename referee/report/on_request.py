"""The report rendered a page at a time, when a page is asked for: ``referee serve``'s pages.

A served league's results change after every match, and its pages are read far less often than that:
rewriting the site after each change (what ``referee report`` writes once) cost a reader process a whole
core at a few thousand stored matches. Here nothing is rendered until a page is asked for, and what a
page is rendered from is kept: a match page until its match's summary, its disclosure or its analysis
changes; each seat's tally of each match (what an entrant's page adds up) until the same; the index, the
list of matches and the entrant pages until the results change. A page asked for after a new match
decodes at most that match (and the rest of its table, once its deals may be shown), never the league.
The pages are those ``referee report`` writes, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources

from referee.analysis.summary import Summary, summarise
from referee.league.config import League
from referee.report.site import (
    ASSETS,
    SiteView,
    Written,
    changed_match_pages,
    entrant_html,
    index_html,
    match_html,
    match_keys,
    matches_html,
    site_view,
)
from referee.results.reading import Standings
from referee.results.store import StoredMatch

Fetch = Callable[[Sequence[str]], Iterator[StoredMatch]]


@dataclass(slots=True)
class _Read:
    """One state of the results as the pages see it, and what is derived of it once."""

    state: Hashable
    view: SiteView
    wanted: dict[str, tuple[object, ...]]
    by_page: dict[str, str]
    """Match page name: match id."""
    by_entrant_page: dict[str, str]
    """Entrant page name: entrant."""
    losses: dict[str, Summary] | None = None
    """What the analyses kept say of each entrant, once read."""
    analysed: int = 0


@dataclass(eq=False)
class OnRequest:
    """A league's report, rendered page by page (see the module's doc). ``state`` names a state of the
    results: the caller passes a new one when they changed, and the pages rendered under an older one
    are rendered again when next asked for (the match pages only if their match changed)."""

    kept: Written = field(default_factory=Written)
    """Per match: what its page and its tallies were made from, and the tallies."""
    match_pages: dict[str, tuple[tuple[object, ...], str]] = field(default_factory=dict)
    """By match id: the key it was rendered under, and the page."""
    pages: dict[str, tuple[Hashable, str]] = field(default_factory=dict)
    """The other pages, by name: the state they were rendered in, and the page."""
    _read: _Read | None = None

    def page(self, league: League, read: Standings, state: Hashable, fetch: Fetch, name: str) -> str | None:
        """The page ``name`` of the report of ``read`` (the results in ``state``), decoding with
        ``fetch`` only the matches it needs and has not kept; ``None`` when the report has no such page."""
        if name in ASSETS:
            return (resources.files("referee.report") / "templates" / name).read_text("utf-8")
        now = self._now(league, read, state)
        if (match_id := now.by_page.get(name)) is not None:
            return self._match_page(now, match_id, fetch)
        if name in ("index.html", "matches.html") or name in now.by_entrant_page:
            kept = self.pages.get(name)
            if kept is not None and kept[0] == state:
                return kept[1]
            html = self._render(now, name, fetch)
            self.pages[name] = (state, html)
            return html
        return None

    def _now(self, league: League, read: Standings, state: Hashable) -> _Read:
        if self._read is None or self._read.state != state:
            view = site_view(league, read)
            self._read = _Read(
                state,
                view,
                match_keys(view, live=False),
                {page: match_id for match_id, page in view.match_pages.items()},
                {page: name for name, page in view.entrant_pages.items()},
            )
            for gone in set(self.match_pages) - set(self._read.wanted):
                del self.match_pages[gone]
        return self._read

    def _match_page(self, now: _Read, match_id: str, fetch: Fetch) -> str | None:
        wanted = now.wanted[match_id]
        kept = self.match_pages.get(match_id)
        if kept is not None and kept[0] == wanted:
            return kept[1]
        scheduled = next(s for s, _ in now.view.played if s.match_id == match_id)
        found = list(fetch([match_id]))
        if not found:  # deleted since the summaries were read (a new version): it has no page now
            return None
        (match,) = found
        parts = self.kept.parts.get(match_id)
        analysis = None
        if wanted[3] is not None:  # the analysis was loaded with the tallies, or is loaded now
            if parts is None or self.kept.pages.get(match_id) != wanted:
                self._keep(now, fetch, {match_id})
            analysis = self.kept.parts[match_id][1]
        html = match_html(now.view, scheduled, match, analysis)
        self.match_pages[match_id] = (wanted, html)
        return html

    def _keep(self, now: _Read, fetch: Fetch, ids: set[str] | None) -> None:
        """The tallies and analyses of the matches ``ids`` (all if ``None``) kept as they are now."""
        for _ in changed_match_pages(now.view, now.wanted, fetch, self.kept, only=ids, render=False):
            pass

    def _render(self, now: _Read, name: str, fetch: Fetch) -> str:
        view = now.view
        if name == "matches.html":
            return matches_html(view)
        analysed_ids = {match_id for match_id, key in now.wanted.items() if key[3] is not None}
        if now.losses is None:  # the analyses kept by referee analyze: read (with their match) once each
            self._keep(now, fetch, analysed_ids)
            analysed = []
            for scheduled, _ in view.played:
                analysis = (
                    self.kept.parts[scheduled.match_id][1] if scheduled.match_id in analysed_ids else None
                )
                if analysis is not None:
                    analysed.append((analysis, scheduled.entrants))
            now.losses = {summary.name: summary for summary in summarise(analysed)}
            now.analysed = len(analysed)
        if name == "index.html":
            return index_html(view, False, now.analysed, now.losses)
        entrant = now.by_entrant_page[name]
        self._keep(now, fetch, {s.match_id for s, _ in view.played if entrant in s.entrants})
        tallies, _ = self.kept.tallies(view, only={entrant})
        return entrant_html(view, entrant, tallies[entrant], now.losses)
