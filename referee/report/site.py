"""The HTML report: a static site that opens from disk with no network.

Leaderboard (sortable), crosstable, rating history, head-to-head, a page per entrant and a page per
match with a replay viewer. Charts are inline SVG. Two shared scripts add what a static page cannot
(sorting, the chart legend's toggles; the viewer, which reads the match data each match page carries
once, as JSON); nothing needs them to be read, since every page also says it all in static HTML. Jinja2
renders the pages because everything shown comes from untrusted bots (names, talk) and must be escaped
(in the JSON too: :func:`script_json`); every page is written to a temporary file and renamed into
place, so a reader never sees half a page.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from pyramid_sdk.cards import Card, Suit
from pyramid_sdk.record import MatchRecord
from pyramid_sdk.rules import QUOTAS
from referee.analysis import storage as analyses
from referee.analysis.estimate import Analysis
from referee.analysis.summary import Summary, summarise
from referee.analysis.view import page_view, viewer_view
from referee.figures import FILTERS, leaderboard_cell
from referee.files import write_atomic
from referee.league.confidence import TIE_CONFIDENCE, confidence
from referee.league.config import League
from referee.league.ratings import ENVIRONMENT, Leaderboard, RatingMode
from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary, Summarized
from referee.match.faults import Fault
from referee.match.outcome import MatchStatus
from referee.report.crosstable import crosstable
from referee.report.transcript import pyramids_of
from referee.results.disclosure import HIDDEN_NOTE, Disclosure, disclosure, mask_cards, table_key
from referee.results.reading import Standings, standings
from referee.results.store import Store, StoredMatch

PALETTE: Final = ("#1f5fbf", "#c0392b", "#1e8449", "#8e44ad", "#b9770e", "#117a8b", "#5d6d7e", "#a93226")
"""Entrant colours, each with at least 4.5:1 contrast on white."""

OTHER_COLOUR: Final = "#4a4a4a"
"""The colour of a name no longer among the league's entrants (a stored match of one that left)."""


def entrant_colours(names: Sequence[str]) -> dict[str, str]:
    """Each entrant's colour on every page: by its place in the league file, which neither the ranking
    nor a rerun changes, and an entrant added at the end leaves the others' colours as they were.

    >>> entrant_colours(["ann", "bob"])
    {'ann': '#1f5fbf', 'bob': '#c0392b'}
    """
    return {name: PALETTE[number % len(PALETTE)] for number, name in enumerate(names)}


_ENVIRONMENT: Final = Environment(
    loader=PackageLoader("referee.report", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    undefined=StrictUndefined,  # a name a template misspells, or a field renamed under it, fails loudly
)
_ENVIRONMENT.filters.update(FILTERS)  # figures rounded as the terminal prints them (referee.figures)
_ENVIRONMENT.globals["cell"] = leaderboard_cell
_ENVIRONMENT.globals["tie_confidence"] = TIE_CONFIDENCE


def forfeit_note(record: MatchRecord | MatchSummary, seat: int) -> str:
    """`` (forfeited in deal N)`` after a forfeited seat's credited points, else nothing.

    >>> from pyramid_sdk import Match, Rules
    >>> match = Match(Rules(players=2)); match.forfeit(1)
    >>> forfeit_note(match.record(), 0), forfeit_note(match.record(), 1)
    ('', ' (forfeited in deal 1)')
    """
    if seat not in record.forfeits:
        return ""
    return f" (forfeited in deal {record.forfeit_deals[record.forfeits.index(seat)]})"


_ENVIRONMENT.globals["forfeit_note"] = forfeit_note


ASSETS: Final = ("style.css", "report.js", "viewer.js")
"""Written once into the report folder and shared by its pages: the style, the script of every page
(sorting, the chart's legend) and the match viewer's script, which reads each match page's data."""


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


@dataclass(frozen=True, slots=True)
class ChartLine:
    """One entrant's rating history as SVG points: μ after each rated game, and its ±3σ band."""

    number: int
    """Its place in the legend, which the script's legend toggles address it by."""
    name: str
    colour: str
    line: str
    band: str
    last_mu: float


@dataclass(frozen=True, slots=True)
class HistoryChart:
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    lines: tuple[ChartLine, ...]
    y_ticks: tuple[tuple[float, float], ...]
    """(μ, y) of each horizontal grid line."""
    x_ticks: tuple[tuple[int, float], ...]
    """(rated games so far, x) of each vertical tick."""
    x_label: str
    banded: bool
    """Whether the bands show without hovering: on an entrant's own chart, with one line."""


def nice_step(span: float, most: int) -> float:
    """The smallest of 1, 2, 5 × 10ⁿ that cuts ``span`` in at most ``most`` parts.

    >>> nice_step(37.0, 8), nice_step(7.0, 8), nice_step(230.0, 8)
    (5.0, 1.0, 50.0)
    """
    power = math.pow(10.0, math.floor(math.log10(max(span, 1e-9) / most)))
    return next(f * power for f in (1, 2, 5, 10) if span / (f * power) <= most)


def history_chart(
    board: Leaderboard,
    colours: Mapping[str, str],
    only: Sequence[str] = (),
    width: int = 760,
    height: int = 320,
) -> HistoryChart:
    """Each entrant's μ after each of its rated games (x: rated games in schedule order, from the start
    at 25), with its ±3σ band, which only a hovered or chosen line shows: drawn for all, the wide early
    bands of every entrant would cover the chart in grey. The y range fits the μ lines, so their early
    moves read; a band is clipped to the plot. ``only`` draws just these entrants, bands shown."""
    per_entrant: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    positions = sorted({position for position, *_ in board.history})
    index = {position: i + 1 for i, position in enumerate(positions)}
    for position, _match, name, mu, sigma in board.history:
        per_entrant[name].append((index[position], mu, sigma))
    shown = [s.entrant for s in board.standings if not only or s.entrant in only]
    start = (0, float(ENVIRONMENT.mu), float(ENVIRONMENT.sigma))
    series = {name: [start, *per_entrant.get(name, [])] for name in shown}
    mus = [mu for points in series.values() for _, mu, _ in points]
    if only:
        mus += [mu + k * sigma for points in series.values() for _, mu, sigma in points[1:] for k in (-3, 3)]
    step = nice_step(max(mus) - min(mus) or 10.0, 8)
    low, high = step * math.floor(min(mus) / step), step * math.ceil(max(mus) / step)
    if high == low:
        high = low + step
    count = max(len(positions), 1)
    left, right, top, bottom = 48, 12, 10, 44

    def x(i: float) -> float:
        return left + (width - left - right) * i / count

    def y(value: float) -> float:
        return top + (height - top - bottom) * (high - value) / (high - low)

    lines = []
    for number, name in enumerate(shown):
        points = series[name]
        upper = [f"{x(i):.1f},{y(mu + 3 * s):.1f}" for i, mu, s in points]
        lower = [f"{x(i):.1f},{y(mu - 3 * s):.1f}" for i, mu, s in reversed(points)]
        lines.append(
            ChartLine(
                number,
                name,
                colours.get(name, OTHER_COLOUR),
                " ".join(f"{x(i):.1f},{y(mu):.1f}" for i, mu, _ in points),
                " ".join(upper + lower),
                points[-1][1],
            )
        )
    y_ticks = [(low + k * step, y(low + k * step)) for k in range(round((high - low) / step) + 1)]
    x_step = max(1, int(nice_step(count, 10)))
    x_ticks = [(i, x(i)) for i in range(0, count + 1, x_step)]
    games = "tables" if board.mode is RatingMode.DUPLICATE else "matches"
    return HistoryChart(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        lines=tuple(lines),
        y_ticks=tuple(y_ticks),
        x_ticks=tuple(x_ticks),
        x_label=f"rated {games} played, in schedule order ({len(positions)} in all)",
        banded=bool(only),
    )


def head_to_head(
    names: list[str], schedule: Sequence[ScheduledMatch], stored: Mapping[str, Summarized]
) -> dict[tuple[str, str], tuple[int, int, int]]:
    """For each ordered pair that shared tables: (times a finished ahead of b, behind, level)."""
    table: dict[tuple[str, str], list[int]] = {}
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None or match.summary.status is not MatchStatus.COMPLETE:
            continue
        ranks = match.summary.ranks
        for a, name_a in enumerate(scheduled.entrants):
            for b, name_b in enumerate(scheduled.entrants):
                if a != b:
                    cell = table.setdefault((name_a, name_b), [0, 0, 0])
                    cell[0 if ranks[a] < ranks[b] else 1 if ranks[a] > ranks[b] else 2] += 1
    return {pair: (w, lost, level) for pair, (w, lost, level) in table.items()}


@dataclass(slots=True)
class EntrantTally:
    """What an entrant's page shows of its matches, added up one match at a time as the report goes
    through them: pyramid accuracy per declared number, points per trump, faults (with whether their
    deal can be linked to), the list of its matches. The deals of tables not complete yet are left out,
    and their fault details masked; so are the declarations the referee made after a forfeit."""

    numbers: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"number": n, "quota": q, "declared": 0, "exact": 0, "off": 0, "points": 0}
            for n, q in enumerate(QUOTAS)
        ]
    )
    trumps: dict[Suit, dict[str, Any]] = field(
        default_factory=lambda: {suit: {"suit": suit, "deals": 0, "points": 0} for suit in Suit}
    )
    faults: list[tuple[ScheduledMatch, Fault, bool]] = field(default_factory=list)
    matches: list[tuple[ScheduledMatch, MatchSummary, int]] = field(default_factory=list)
    hidden: int = 0

    def add(self, scheduled: ScheduledMatch, match: StoredMatch, seat: int, deals_shown: bool) -> None:
        """Counts the entrant's ``seat`` of one stored match."""
        self.matches.append((scheduled, match.summary, seat))
        if not deals_shown:
            self.hidden += 1
            self.faults += [
                (scheduled, _masked(fault), False) for fault in match.faults if fault.seat == seat
            ]
            return
        for deal in match.record.deals:
            if deal.declarer != seat or match.record.on_autopilot(deal):
                continue
            row = self.numbers[deal.declaration.tricks]
            row["declared"] += 1
            row["exact"] += deal.taken == deal.declaration.tricks
            row["off"] += abs(deal.taken - deal.declaration.tricks)
            row["points"] += deal.points
            self.trumps[deal.declaration.trump]["deals"] += 1
            self.trumps[deal.declaration.trump]["points"] += deal.points
        self.faults += [(scheduled, fault, True) for fault in match.faults if fault.seat == seat]

    def merge(self, part: EntrantTally) -> None:
        """Adds what ``part`` counted (one seat of one match, kept by :class:`Written`)."""
        for row, more in zip(self.numbers, part.numbers, strict=True):
            for key in ("declared", "exact", "off", "points"):
                row[key] += more[key]
        for suit, more in part.trumps.items():
            self.trumps[suit]["deals"] += more["deals"]
            self.trumps[suit]["points"] += more["points"]
        self.faults += part.faults
        self.matches += part.matches
        self.hidden += part.hidden

    def page(self) -> dict[str, Any]:
        """The entrant page's figures."""
        for row in self.numbers:
            count = row["declared"] or 1
            row["exact_rate"] = row["exact"] / count if row["declared"] else None
            row["mean_off"] = row["off"] / count
            row["mean_points"] = row["points"] / count
            row["heat"] = _heat(row["exact_rate"])
        return {
            "numbers": self.numbers,
            "trumps": list(self.trumps.values()),
            "faults": self.faults,
            "matches": self.matches,
            "hidden_matches": self.hidden,
        }


def _masked(fault: Fault) -> Fault:
    return replace(fault, detail=mask_cards(fault.detail))


def _heat(rate: float | None) -> str:
    """A background from pale red (never exact) to pale green (always): dark text stays readable."""
    if rate is None:
        return "#f2f2f2"
    red, green = round(250 - 80 * rate), round(205 + 40 * rate)
    return f"rgb({red},{green},{round(205 - 20 * rate)})"


@dataclass(eq=False)
class Written:
    """What a writer that rewrites one report's files again and again (``referee run --report``) keeps
    of the match pages it wrote: for each match, what its page was written from, and
    what the entrants' pages and the index count of it. A rewrite decodes and writes again only the
    matches whose page would change (a new match, a table whose deals may now be shown, an analysis
    kept since, another set of entrants), so that it costs the matches that changed, not the league."""

    folder: Path | None = None
    pages: dict[str, tuple[object, ...]] = field(default_factory=dict)
    """By match id: what its page was written from."""
    parts: dict[str, tuple[dict[int, EntrantTally], Analysis | None]] = field(default_factory=dict)
    """By match id: each seat's tally of it, and its analysis."""
    decoded: int = 0
    """Matches decoded since it was made: for the tests."""

    def of(self, folder: Path) -> Written:
        """This, forgetting what it kept of another folder."""
        if self.folder != folder:
            self.folder, self.pages, self.parts = folder, {}, {}
        return self

    def tallies(
        self, view: SiteView
    ) -> tuple[dict[str, EntrantTally], list[tuple[Analysis, tuple[str, ...]]]]:
        """What the entrants' pages sum up of every played match of ``view``, from the parts kept of
        each: their tallies, and the analyses ``referee analyze`` kept of those matches."""
        tallies = {name: EntrantTally() for name in view.names}
        analysed: list[tuple[Analysis, tuple[str, ...]]] = []
        for scheduled, _ in view.played:
            parts, analysis = self.parts[scheduled.match_id]
            if analysis is not None:
                analysed.append((analysis, scheduled.entrants))
            for seat, part in parts.items():
                if (name := scheduled.entrants[seat]) in tallies:
                    tallies[name].merge(part)
        return tallies, analysed


def script_json(data: object) -> str:
    """``data`` as JSON fit to sit inside a ``<script>`` element: bot-made text (names, talk) cannot close
    the element or open a comment, because every ``<`` is written as ``\\u003c``.

    >>> script_json({"talk": "</script><!--"})
    '{"talk":"\\\\u003c/script>\\\\u003c!--"}'
    """
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def viewer_data(record: MatchRecord, colours: Sequence[str], analysis: Analysis | None = None) -> str:
    """The match as ``viewer.js`` reads it, compact because every match page carries it once: per deal
    ``[number, dealer, declarer, declared, trump, taken, points, tricks, talk]``, a trick as
    ``[leader, cards, winner]`` with the cards' codes run together in play order (``"9STSQSKS"``), a
    message as ``[seat, trick, text]``. The hands are not sent: every card of a hand is played, so the
    tricks hold them. A kept analysis comes as ``analysis`` (:func:`referee.analysis.view.viewer_view`)."""
    deals = [
        [
            deal.number,
            deal.dealer,
            deal.declarer,
            deal.declaration.tricks,
            deal.declaration.trump.code,
            deal.taken,
            deal.points,
            [[t.leader, "".join(card.code for card in t.cards), t.winner] for t in deal.tricks],
            [[m.seat, m.trick, m.text] for m in deal.talk],
        ]
        for deal in record.deals
    ]
    data: dict[str, Any] = {"seats": list(record.seats), "colours": list(colours), "deals": deals}
    if analysis is not None:
        data["analysis"] = viewer_view(analysis)
    return script_json(data)


@dataclass(frozen=True, slots=True)
class TrickLine:
    """One trick of the static deal list: its cards in play order from the leader, which one won, the
    seat that took it, and the talk said during it. The seat goes by its number, not its entrant's name,
    which would be repeated on every trick: 384 times a 4-player page, enough for long names to double
    its list of deals."""

    cards: tuple[Card, ...]
    winning: int | None
    """Position in ``cards`` of the winning card."""
    winner: str
    talk: tuple[tuple[str, str], ...]
    """(speaker, text) in the order said."""


def match_view(
    scheduled: ScheduledMatch,
    match: StoredMatch,
    deals_shown: bool = True,
    colours: Mapping[str, str] | None = None,
    analysis: Analysis | None = None,
) -> dict[str, Any]:
    """What a match page shows: everything (with its analysis, if one is kept), or without
    ``deals_shown`` the results alone (no seed, no deal, no pyramid, no viewer data, no analysis, fault
    details masked)."""
    record = match.record
    if not deals_shown:
        faults = [_masked(fault) for fault in match.faults]
        return {
            "scheduled": scheduled,
            "match": match,
            "record": record,
            "deals": [],
            "pyramids": [],
            "faults": faults,
            "hidden_note": HIDDEN_NOTE,
            "ranked": sorted((rank, seat) for seat, rank in enumerate(record.ranks)),
            "data": "",
            "analysis": None,
        }
    view = _played_view(record, match.faults, colours or {}, analysis)
    return {"scheduled": scheduled, "match": match, **view}


def _played_view(
    record: MatchRecord, faults: Sequence[Fault], colours: Mapping[str, str], analysis: Analysis | None = None
) -> dict[str, Any]:
    """What a page shows of a played match: its deals trick by trick, the pyramids, the faults and the
    viewer's data."""
    seat_colours = [colours.get(name, OTHER_COLOUR) for name in record.seats]
    players = len(record.seats)
    deals = []
    for deal in record.deals:
        tricks = []
        for number, trick in enumerate(deal.tricks, start=1):
            winning = None if trick.winner is None else (trick.winner - trick.leader) % players
            talk = tuple((record.seats[m.seat], m.text) for m in deal.talk if m.trick == number)
            winner = (
                str(trick.winner) if trick.winner is not None else "?"
            )  # a seat number: names can be long
            tricks.append(TrickLine(trick.cards, winning, winner, talk))
        deals.append({"deal": deal, "tricks": tricks})
    pyramids = []
    credited = record.credited_totals
    for seat, pyramid in enumerate(pyramids_of(record)):
        rows = []
        filled: list[list[tuple[int, int]]] = [[] for _ in QUOTAS]
        for entry in pyramid.entries:
            filled[entry.declared].append((entry.taken, entry.points))
        for number, quota in enumerate(QUOTAS):
            cells: list[tuple[int | None, int | None]] = [*filled[number]]
            cells += [(None, None)] * (quota - len(filled[number]))
            rows.append({"number": number, "cells": cells})
        pyramids.append(
            {
                "name": record.seats[seat],
                "total": credited[seat],
                "played": pyramid.total,
                "note": forfeit_note(record, seat),
                "rank": record.ranks[seat],
                "rows": rows,
            }
        )
    return {
        "record": record,
        "deals": deals,
        "pyramids": pyramids,
        "faults": list(faults),
        "hidden_note": "",
        "data": viewer_data(record, seat_colours, analysis),
        "analysis": page_view(analysis) if analysis is not None else None,
    }


def match_page(
    record: MatchRecord, faults: Sequence[Fault], status: MatchStatus, seed: int, linked: bool = False
) -> str:
    """One match on a page of its own: the report's match page, with the viewer, its script and the
    style inside the page, so that the one file opens from disk, anywhere, with nothing beside it and no
    network; or, ``linked``, with links to ``/style.css`` and ``/viewer.js`` (a page of ``referee serve``,
    whose security policy runs no inline script). Seats take the report's colours in seat order."""
    colours = entrant_colours(record.seats)
    view = _played_view(record, faults, colours)
    assets = resources.files("referee.report") / "templates"
    return _ENVIRONMENT.get_template("one_match.html").render(
        **view,
        status=status,
        seed=seed,
        colours=colours,
        other_colour=OTHER_COLOUR,
        live=False,
        linked=linked,
        style="" if linked else (assets / "style.css").read_text("utf-8"),
        viewer="" if linked else (assets / "viewer.js").read_text("utf-8").replace("</", "<\\/"),
    )


def write_match_page(
    path: Path, record: MatchRecord, faults: Sequence[Fault], status: MatchStatus, seed: int
) -> None:
    """:func:`match_page` written to ``path`` (``referee match --html``)."""
    write_atomic(path, match_page(record, faults, status, seed))


def rewrite_report(
    league: League,
    seed: int,
    folder: Path,
    store: Store,
    live: bool = False,
    read: Standings | None = None,
    written: Written | None = None,
) -> Path:
    """Rewrites the report of ``league``'s results under ``seed`` as ``store`` holds them now into
    ``folder``; returns its index page. The one way every writer of a report reads it from the database:
    ``referee report``, ``referee run --report`` (live, and at its end), ``referee analyze --all --report``
    and ``referee serve``'s pages. It reads the summaries (or takes ``read``, the standings a caller has
    already read from ``store``) and decodes each match as its page is written, so that memory does not
    grow with the league. ``written``: what the caller's earlier rewrites of ``folder`` wrote, so that
    only the match pages that change are written again. Raises what the store raises
    (:class:`~referee.results.errors.StoreError`) and :class:`OSError` when the folder cannot be
    written."""
    if read is None:
        read = standings(league, seed, store.summaries())
    return write_report(league, read, folder, live, store.stream, written)


def write_report(
    league: League,
    read: Standings,
    folder: Path,
    live: bool = False,
    load: Callable[[Sequence[str]], Iterator[StoredMatch]] | None = None,
    written: Written | None = None,
) -> Path:
    """Writes (or rewrites) the whole site of ``read`` into ``folder``; returns the index page. Its
    stored matches may be summaries only: ``load`` then decodes each match as its page is written, one at
    a time (without ``load``, they are whole matches)."""
    view = site_view(league, read)
    folder.mkdir(parents=True, exist_ok=True)
    for asset in ASSETS:  # copied as they are: no template syntax to trip over in CSS or JS
        write_atomic(
            folder / asset, (resources.files("referee.report") / "templates" / asset).read_text("utf-8")
        )
    kept = (written or Written()).of(folder)
    wanted = match_keys(view, live)
    for match_id, html in changed_match_pages(view, wanted, load or _whole(read.stored), kept):
        write_atomic(folder / view.match_pages[match_id], html)
    tallies, analysed = kept.tallies(view)
    losses: dict[str, Summary] = {summary.name: summary for summary in summarise(analysed)}
    for name in view.names:
        write_atomic(folder / view.entrant_pages[name], entrant_html(view, name, tallies[name], losses))
    write_atomic(folder / "matches.html", matches_html(view))
    index = folder / "index.html"
    write_atomic(index, index_html(view, live, len(analysed), losses))
    return index


@dataclass(frozen=True, slots=True)
class Summaries(Mapping[str, MatchSummary]):
    """The summaries of stored matches (summaries or whole matches), looked up one at a time: a view of
    the stored matches, not a dict of their summaries, which a reader would hold per stored match."""

    stored: Mapping[str, Summarized]

    def __getitem__(self, match_id: str) -> MatchSummary:
        return self.stored[match_id].summary

    def get(self, match_id: str, default: MatchSummary | None = None) -> MatchSummary | None:  # type: ignore[override]
        found = self.stored.get(match_id)
        return default if found is None else found.summary

    def __contains__(self, match_id: object) -> bool:
        return match_id in self.stored

    def __iter__(self) -> Iterator[str]:
        return iter(self.stored)

    def __len__(self) -> int:
        return len(self.stored)


@dataclass(frozen=True, slots=True)
class Played:
    """The played matches in schedule order, each with its summary, made as they are gone through: never
    a list, so that a read of the results holds no object per stored match (the pages that list every
    match go through it as they are rendered)."""

    schedule: Sequence[ScheduledMatch]
    summaries: Mapping[str, MatchSummary]

    def __iter__(self) -> Iterator[tuple[ScheduledMatch, MatchSummary]]:
        for scheduled in self.schedule:
            summary = self.summaries.get(scheduled.match_id)
            if summary is not None:
                yield scheduled, summary


@dataclass(frozen=True, slots=True)
class MatchPages(Mapping[str, str]):
    """By played match's id, its page's name (``match-0007.html``: its schedule position, from 1), said
    when asked for, not kept per match."""

    schedule: Sequence[ScheduledMatch]
    by_id: Mapping[str, ScheduledMatch]
    summaries: Mapping[str, MatchSummary]

    def __getitem__(self, match_id: str) -> str:
        if match_id not in self.summaries:
            raise KeyError(match_id)
        return match_page_name(self.by_id[match_id])

    def __iter__(self) -> Iterator[str]:
        return (match_id for match_id in self.summaries if match_id in self.by_id)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def match_of(self, page: str) -> str | None:
        """The id of the played match whose page is ``page``, if any."""
        found = _MATCH_PAGE.fullmatch(page)
        if found is None:
            return None
        position = int(found[1]) - 1
        scheduled = self.schedule[position] if 0 <= position < len(self.schedule) else None
        if scheduled is None or scheduled.position != position:  # a schedule not in its positions' order
            scheduled = next((s for s in self.schedule if s.position == position), None)
        if scheduled is not None and scheduled.match_id in self.summaries:
            return scheduled.match_id
        return None


_MATCH_PAGE: Final = re.compile(r"match-([0-9]{4,})\.html")


def match_page_name(scheduled: ScheduledMatch) -> str:
    return f"match-{scheduled.position + 1:04d}.html"


@dataclass
class _Index:
    """The last schedule indexed, by identity: a reader is given the same schedule after every match."""

    schedule: Sequence[ScheduledMatch] = ()
    by_id: dict[str, ScheduledMatch] = field(default_factory=dict)


_INDEX: Final = _Index()


def schedule_index(schedule: Sequence[ScheduledMatch]) -> Mapping[str, ScheduledMatch]:
    """The scheduled matches by id, made once per schedule (not per read of the results)."""
    if _INDEX.schedule is not schedule:
        _INDEX.schedule, _INDEX.by_id = schedule, {s.match_id: s for s in schedule}
    return _INDEX.by_id


@dataclass(frozen=True, eq=False)
class SiteView:
    """One read of a league's results as every page of its report is rendered from: the standings, the
    played matches in schedule order, what may be shown of each, and the pages' names and colours.
    Nothing in it is kept per stored match: the summaries are looked up as a page needs them."""

    league: League
    read: Standings
    summaries: Mapping[str, MatchSummary]
    names: list[str]
    """The rated entrants, as the leaderboard ranks them."""
    played: Played
    shown: Disclosure
    entrant_pages: dict[str, str]
    match_pages: MatchPages
    """By match id: its page's name."""
    common: dict[str, Any]
    """What every page's template is given."""


def site_view(league: League, read: Standings) -> SiteView:
    schedule, board = read.schedule, read.board
    summaries = Summaries(read.stored)
    names = [standing.entrant for standing in board.standings]
    pages = {name: f"entrant-{slug(name)}.html" for name in names}
    played = Played(schedule, summaries)
    match_pages = MatchPages(schedule, schedule_index(schedule), summaries)
    common = {
        "league": league,
        "entrant_pages": pages,
        "match_pages": match_pages,
        "live": False,
        "colours": entrant_colours([entrant.name for entrant in league.entrants]),
        "other_colour": OTHER_COLOUR,
    }
    shown = disclosure(schedule, summaries)
    return SiteView(league, read, summaries, names, played, shown, pages, match_pages, common)


def match_keys(view: SiteView, live: bool) -> dict[str, tuple[object, ...]]:
    """By match id, what its page is rendered from (:class:`Written` keeps them): :func:`match_key`."""
    analysed = analysed_files(view.league)
    return {s.match_id: match_key(view, s, summary, live, analysed) for s, summary in view.played}


def match_key(
    view: SiteView, scheduled: ScheduledMatch, summary: MatchSummary, live: bool, analysed: frozenset[str]
) -> tuple[object, ...]:
    """What a match's page is rendered from: its summary and place, whether its deals may be shown, its
    kept analysis's stamp (``analysed``: the names of the files kept, :func:`analysed_files`), and what
    every page shares."""
    league, colours = view.league, view.common["colours"]
    around = (live, tuple(sorted(view.names)), tuple(colours.items()), league.name)
    shows = view.shown.deals_shown(summary)
    # Kept by referee analyze; not read for the live report, rewritten every few seconds beside the
    # run's matches (a 4-player match's analysis takes a tenth of a second to read).
    analysable = not live and shows and summary.status is MatchStatus.COMPLETE
    path = analyses.analysis_path(league.database, summary.match_id)
    stamp = _stamp(path) if analysable and path.name in analysed else None
    return (summary, scheduled, shows, stamp, around)


def analysed_files(league: League) -> frozenset[str]:
    """The names of the files ``referee analyze`` kept for the league: one look at their folder, so that
    a league without analyses costs no look per match."""
    folder = analyses.analysis_path(league.database, "-").parent
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


def match_html(
    view: SiteView, scheduled: ScheduledMatch, match: StoredMatch, analysis: Analysis | None
) -> str:
    shows = view.shown.deals_shown(match.summary)
    page = match_view(scheduled, match, shows, view.common["colours"], analysis)
    return _ENVIRONMENT.get_template("match.html").render(**view.common, **page)


def entrant_html(view: SiteView, name: str, tally: EntrantTally, losses: Mapping[str, Summary]) -> str:
    board = view.read.board
    standing = next(s for s in board.standings if s.entrant == name)
    return _ENVIRONMENT.get_template("entrant.html").render(
        **view.common,
        standing=standing,
        chart=history_chart(board, view.common["colours"], only=[name]),
        analysis=losses.get(name),
        **tally.page(),
    )


def matches_html(view: SiteView) -> str:
    return _ENVIRONMENT.get_template("matches.html").render(
        **view.common, played=view.played, hidden=view.shown.pending_tables, key=table_key
    )


def index_html(view: SiteView, live: bool, analysed: int, losses: Mapping[str, Summary]) -> str:
    """The index; ``analysed``: how many of its matches have an analysis kept."""
    read, names, summaries = view.read, view.names, view.summaries
    board, schedule = read.board, read.schedule
    return _ENVIRONMENT.get_template("index.html").render(
        **{**view.common, "live": live},
        board=board,
        sure=confidence(board),
        chart=history_chart(board, view.common["colours"]),
        names=names,
        h2h=head_to_head(names, schedule, summaries),
        cross=crosstable(names, schedule, summaries, board.mode),
        done=sum(1 for _, m in view.played if m.status is MatchStatus.COMPLETE),
        analysed=analysed,
        summaries=[losses[name] for name in names if name in losses],
        total=len(schedule),
    )


def changed_match_pages(
    view: SiteView,
    wanted: dict[str, tuple[object, ...]],
    fetch: Callable[[Sequence[str]], Iterator[StoredMatch]],
    written: Written,
) -> Iterator[tuple[str, str]]:
    """The page of each played match whose page ``written`` does not hold as ``wanted`` says it would be
    now, by match id, decoding those matches one at a time; each seat's tally of each, and its analysis,
    kept in ``written``."""
    league = view.league
    for gone in set(written.pages) - set(wanted):
        del written.pages[gone]
        written.parts.pop(gone, None)
    changed = [s for s, _ in view.played if written.pages.get(s.match_id) != wanted[s.match_id]]
    by_id = {s.match_id: s for s in changed}
    for match in fetch([s.match_id for s in changed]):
        written.decoded += 1
        scheduled = by_id[match.match_id]
        shows = view.shown.deals_shown(match.summary)
        analysis = None
        if wanted[match.match_id][3] is not None:
            analysis = analyses.load(league.database, match.match_id, match.record)
        parts = {}
        for seat, name in enumerate(scheduled.entrants):
            if scheduled.entrants.index(name) == seat:
                parts[seat] = part = EntrantTally()
                part.add(scheduled, match, seat, shows)
        written.parts[match.match_id] = (parts, analysis)
        written.pages[match.match_id] = wanted[match.match_id]
        yield match.match_id, match_html(view, scheduled, match, analysis)


def _stamp(path: Path) -> tuple[int, int] | None:
    """When and how large the file at ``path`` was last written, or ``None`` when there is none."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _whole(stored: Mapping[str, Summarized]) -> Callable[[Sequence[str]], Iterator[StoredMatch]]:
    """The matches of ``stored``, which holds whole matches (a caller that passes no loader)."""

    def fetch(ids: Sequence[str]) -> Iterator[StoredMatch]:
        for match_id in ids:
            match = stored[match_id]
            if not isinstance(match, StoredMatch):
                raise TypeError(f"match {match_id} is a summary: pass a loader to read it whole")
            yield match

    return fetch
