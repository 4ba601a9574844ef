"""Leaderboards, replays and exports as text: table, JSON, CSV, Markdown, JSON Lines."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol, TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from pyramid_sdk.cards import format_cards
from pyramid_sdk.record import MatchRecord
from referee.figures import difference, interval, leaderboard_cell, likelihood, probability
from referee.league.confidence import Confidence, Fragility, confidence
from referee.league.config import League
from referee.league.ratings import Leaderboard, Standing
from referee.league.schedule import ScheduledMatch
from referee.league.summary import Summarized
from referee.match.faults import Fault
from referee.match.outcome import MatchStatus
from referee.report.crosstable import Crosstable
from referee.report.transcript import deal_line, ending, standings
from referee.results.disclosure import HIDDEN_NOTE, disclosure, mask_cards
from referee.results.store import StoredMatch

COLUMNS = (
    ("rank", "#"),
    ("entrant", "entrant"),
    ("mu", "μ"),
    ("sigma", "σ"),
    ("conservative", "μ−3σ"),
    ("tables", "tables"),
    ("matches", "matches"),
    ("wins", "wins"),
    ("mean_points", "points/match"),
    ("points_ci95", "±95%"),
    ("exact_rate", "exact"),
    ("faults", "faults"),
    ("forfeits", "forfeits"),
)


def _remote(league: League | None) -> list[str]:
    """The league's remote entrants (docs/REMOTE.md), which the outputs mark: not sandboxed."""
    return league.remote_names if league is not None else []


def leaderboard_table(
    board: Leaderboard, league: League | None = None, title: str = "", fragile: Fragility | None = None
) -> str:
    """The terminal's leaderboard, titled with the league's name (or ``title``), with each entrant's
    probability of its rank (``P(rank)``), and its format below; then the tied groups, and the league's
    ``fragile``-ity when the caller computed it (:func:`referee.league.confidence.fragility`)."""
    remote = _remote(league)
    marked = f"\nremote (plays from its own machine, not sandboxed): {', '.join(remote)}" if remote else ""
    sure = confidence(board)
    below = [*sure.lines(), *([fragile.text()] if fragile is not None else [])]
    table = Table(
        title=title or (league.name if league else None),
        caption=f"format: {league.schedule_label}{marked}" if league else None,
        box=box.SIMPLE_HEAVY,
    )
    for key, header in COLUMNS:
        table.add_column(header, justify="left" if key == "entrant" else "right")
    table.add_column("P(rank)", justify="right")
    for standing in board.standings:
        cells = [leaderboard_cell(key, standing) for key, _ in COLUMNS]
        table.add_row(*cells, probability(sure.own(standing.entrant)))
    buffer = io.StringIO()
    Console(width=150, file=buffer, color_system=None, force_terminal=False).print(table)
    return "\n".join([buffer.getvalue().rstrip(), *below]) + "\n"


def _format(league: League | None) -> dict[str, str]:
    """The key that says which format produced a JSON or CSV leaderboard's row: ``format: sampled``."""
    return {"format": str(league.design.format)} if league else {}


CONFIDENCE_KEYS: Final = ("p_rank", "rank_probabilities", "tied_with")
"""The rank confidence's keys of a JSON or CSV row (docs/LEAGUE.md, "Rank confidence"), after the others."""


def _row(standing: Standing, league: League | None, sure: Confidence) -> dict[str, Any]:
    """A JSON or CSV leaderboard's row; with a ``remote`` column when the league has remote entrants,
    then the rank confidence: P(its rank), P(each rank) from rank 1, and the others of its tied group."""
    remote = _remote(league)
    marked = {"remote": standing.entrant in remote} if remote else {}
    name = standing.entrant
    ranks = [round(p, 4) for p in sure.of(name)]
    shown = {
        "p_rank": round(sure.own(name), 4),
        "rank_probabilities": ranks,
        "tied_with": list(sure.tied_with(name)),
    }
    return {**standing.to_dict(), **_format(league), **marked, **shown}


def leaderboard_json(board: Leaderboard, league: League | None = None) -> str:
    sure = confidence(board)
    rows = [_row(standing, league, sure) for standing in board.standings]
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def leaderboard_csv(board: Leaderboard, league: League | None = None) -> str:
    """The leaderboard as CSV; the lists of the rank confidence as space-separated values (an
    entrant's name holds no space)."""
    out = io.StringIO()
    keys = [key for key, _ in COLUMNS] + list(_format(league)) + (["remote"] if (_remote(league)) else [])
    keys += CONFIDENCE_KEYS
    writer = csv.DictWriter(out, fieldnames=keys, lineterminator="\n")
    writer.writeheader()
    sure = confidence(board)
    for standing in board.standings:
        row = _row(standing, league, sure)
        writer.writerow({key: _csv_cell(row[key]) for key in keys})
    return out.getvalue()


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return value


def leaderboard_markdown(board: Leaderboard, league: League | None = None) -> str:
    """A Markdown table, after a line naming the league's format when there is a league; its last
    column is each entrant's probability of its rank, as on the terminal and the report."""
    caption = [f"Format: {league.schedule_label}", ""] if league else []
    sure = confidence(board)
    lines = [*caption, "| " + " | ".join([*(header for _, header in COLUMNS), "P(rank)"]) + " |"]
    lines.append("|" + "|".join("---:" if key != "entrant" else "---" for key, _ in COLUMNS) + "|---:|")
    for standing in board.standings:
        cells = [
            *(leaderboard_cell(key, standing) for key, _ in COLUMNS),
            probability(sure.own(standing.entrant)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def crosstable_text(cross: Crosstable) -> str:
    """The crosstable for a terminal, figures as the report shows them: row − column, the mean points
    difference per shared match ± its 95% interval, ``*`` where the interval excludes 0; then each
    entrant's likelihood of superiority over the next one down (docs/LEAGUE.md, "The crosstable")."""
    table = Table(title="row − column: points per shared match ± 95% (* significant)", box=box.SIMPLE_HEAVY)
    table.add_column("")
    for name in cross.names:
        table.add_column(name, justify="right")
    for first in cross.names:
        cells = []
        for second in cross.names:
            pair = cross.pairs.get((first, second))
            if first == second or pair is None:
                cells.append("—" if first == second else "·")
            else:
                mark = " *" if pair.significant else ""
                cells.append(f"{difference(pair.mean)} ± {interval(pair.ci95)}{mark}")
        table.add_row(first, *cells)
    buffer = io.StringIO()
    Console(width=200, file=buffer, color_system=None, force_terminal=False).print(table)
    lines = [buffer.getvalue().rstrip(), "", "likelihood of superiority over the next one down:"]
    for first, second, pair in cross.neighbours():
        los = likelihood(pair.los) if pair else "no shared match"
        lines.append(f"  {first} > {second}: {los}")
    return "\n".join(lines) + "\n"


FORMATS = {
    "table": leaderboard_table,
    "json": leaderboard_json,
    "csv": leaderboard_csv,
    "markdown": leaderboard_markdown,
}


def export_lines(
    league: League,
    schedule: Sequence[ScheduledMatch],
    stored: Mapping[str, Summarized],
    load: Callable[[Sequence[str]], Iterator[StoredMatch]],
    only: Collection[str] | None = None,
) -> Iterator[str]:
    """One JSON object per stored match of the schedule, in schedule order (docs/FORMATS.md). A match
    of a table not complete yet has no seed and no deals, only its results (``referee.results.disclosure``).
    ``load`` decodes the matches as their lines are made (:meth:`referee.results.store.Store.stream`), so
    memory does not grow with the league: ``stored`` need hold only summaries. ``only``: the lines of
    these matches alone (what is disclosed still depends on every stored match)."""
    shown = disclosure(schedule, stored).deals_shown
    remote = _remote(league)
    present = [
        scheduled
        for scheduled in schedule
        if scheduled.match_id in stored and (only is None or scheduled.match_id in only)
    ]
    for scheduled, match in zip(present, load([s.match_id for s in present]), strict=True):
        place = {
            "league": league.name,
            "round": match.round,
            "table": match.table,
            "table_id": scheduled.table_id,
            "rotation": match.rotation,
        }
        if remote:  # which seats played from their own machines, unsandboxed (docs/SECURITY.md)
            place["remote_entrants"] = [name for name in match.record.seats if name in remote]
        yield match_line(
            match.match_id, place, match.seed, match.status, match.record, match.faults, shown(match)
        )


def write_lines(path: Path, lines: Iterable[str]) -> int:
    """Writes ``lines`` to ``path`` as they come, one a line, and returns how many (an export to a file:
    memory holds one line at a time). A regular file, or a new one, is written under a temporary name
    beside it and renamed once complete, so a failure half-way leaves the old file as it was and no half
    one; anything else (a pipe, ``/dev/stdout``) is written in place."""
    if path.exists() and not path.is_file():
        with path.open("w", encoding="utf-8") as out:
            return _write_each(out, lines)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            count = _write_each(out, lines)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count


def _write_each(out: TextIO, lines: Iterable[str]) -> int:
    count = 0
    for line in lines:
        out.write(line + "\n")
        count += 1
    return count


ONE_MATCH: Final = {"league": None, "round": None, "table": None, "table_id": None, "rotation": None}
"""The league fields of a match played on its own (``referee match --record``): it has none."""


def match_line(
    match_id: str,
    place: Mapping[str, object],
    seed: int,
    status: MatchStatus,
    record: MatchRecord,
    faults: Sequence[Fault],
    visible: bool = True,
) -> str:
    """One match as a line of JSON (docs/FORMATS.md), ``place`` its league fields (league, round, table,
    table_id, rotation: :data:`ONE_MATCH` outside a league). Without ``visible`` (its table is not
    complete), no seed and no deals, and card codes masked in fault details."""
    return json.dumps(
        {
            "match_id": match_id,
            **place,
            "seed": seed if visible else None,
            "players": record.rules.players,
            "rules": {"trick_winner": str(record.rules.trick_winner), "talk": str(record.rules.talk)},
            "seats": list(record.seats),
            "status": str(status),
            "deals_hidden": not visible,
            "deals": [
                {key: value for key, value in deal.to_dict().items() if key != "talk"}
                for deal in (record.deals if visible else ())
            ],
            "totals": list(record.totals),
            "credited": list(record.credited_totals),
            "ranks": list(record.ranks),
            "forfeits": list(record.forfeits),
            "forfeit_deals": list(record.forfeit_deals),
            "faults": [_fault_dict(fault, visible) for fault in faults],
        },
        ensure_ascii=False,
    )


def _fault_dict(fault: Fault, visible: bool) -> dict[str, object]:
    return fault.to_dict() if visible else {**fault.to_dict(), "detail": mask_cards(fault.detail)}


class Replayable(Protocol):
    """A match as ``referee replay`` shows it: stored in a league, or read from a records file."""

    @property
    def match_id(self) -> str: ...
    @property
    def status(self) -> MatchStatus: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def record(self) -> MatchRecord: ...
    @property
    def faults(self) -> tuple[Fault, ...]: ...


def replay_text(match: Replayable, deals_shown: bool = True) -> str:
    """The match deal by deal for a person, ending with every pyramid as drawn on paper; without
    ``deals_shown`` (its table is not complete), only its results."""
    record = match.record
    seats = record.seats
    lines = [
        f"match {match.match_id}  ({match.status})" + (f"  seed {match.seed}" if deals_shown else ""),
        "seats: " + ", ".join(f"{seat}={name}" for seat, name in enumerate(seats)),
        f"rules: trick_winner={record.rules.trick_winner} talk={record.rules.talk}",
    ]
    if not deals_shown:
        lines += ["", f"{HIDDEN_NOTE}: {len(record.deals)} deals played"]
        for fault in match.faults:
            lines.append(
                f"fault: {seats[fault.seat]} deal {fault.deal} {fault.kind}: {mask_cards(fault.detail)}"
            )
        return "\n".join(lines + standings(record)) + "\n"
    width = max(12, *map(len, seats))  # long names keep the hands aligned
    for deal in record.deals:
        lines += ["", deal_line(deal, seats)]
        for seat, hand in enumerate(deal.hands):
            lines.append(f"    {seats[seat]:>{width}}: {format_cards(hand, human=True)}")
        for number, trick in enumerate(deal.tricks, start=1):
            plays = "  ".join(
                f"{seats[trick.seat_of(i, len(seats))]} {card.human}" for i, card in enumerate(trick.cards)
            )
            winner = seats[trick.winner] if trick.winner is not None else "?"
            lines.append(f"    trick {number}: {plays}  → {winner}")
        for message in deal.talk:
            lines.append(f"    talk (trick {message.trick}) {seats[message.seat]}: {message.text}")
    for fault in match.faults:
        lines.append(f"fault: {seats[fault.seat]} deal {fault.deal} {fault.kind}: {fault.detail}")
    return "\n".join(lines + ending(record)) + "\n"


def matches_text(
    schedule: Sequence[ScheduledMatch],
    stored: Mapping[str, Summarized],
    entrant: str | None = None,
    status: str | None = None,
) -> str:
    """The stored matches, one line each in schedule order: position, id, status, each seat's entrant
    and credited points (a forfeit marked with its deal), and the faults per entrant. Results only, never
    a deal, so a table still being played gives nothing away (``referee.results.disclosure``). ``entrant``
    and ``status`` filter.
    A stored match no longer in the schedule (its entrant left the league) comes last, as ``-``."""
    position = {scheduled.match_id: scheduled.position + 1 for scheduled in schedule}
    summaries = [match.summary for match in stored.values()]
    order = sorted(summaries, key=lambda m: (position.get(m.match_id, len(position) + 1), m.match_id))
    rows = [("#", "match", "status", "points", "faults")]
    for match in order:
        if entrant is not None and entrant not in match.seats:
            continue
        if status is not None and str(match.status) != status:
            continue
        void = match.status is not MatchStatus.COMPLETE
        forfeited = dict(zip(match.forfeits, match.forfeit_deals, strict=True))
        points = "  ".join(
            f"{name} {'—' if void else match.credited[seat]}"
            + (f" (forfeit in deal {forfeited[seat]})" if seat in forfeited else "")
            for seat, name in enumerate(match.seats)
        )
        counts: dict[str, int] = {}
        for seat in match.fault_seats:
            counts[match.seats[seat]] = counts.get(match.seats[seat], 0) + 1
        faults = "  ".join(f"{name} {count}" for name, count in counts.items()) or "—"
        number = str(position.get(match.match_id, "-"))
        rows.append((number, match.match_id, str(match.status), points, faults))
    w = [max(len(row[column]) for row in rows) for column in range(4)]
    lines = [f"{a:>{w[0]}}  {b:<{w[1]}}  {c:<{w[2]}}  {d:<{w[3]}}  {e}" for a, b, c, d, e in rows]
    complete = sum(m.status is MatchStatus.COMPLETE for m in summaries)
    in_schedule = sum(match_id in position for match_id in stored)
    summary = (
        f"{in_schedule} of {len(schedule)} scheduled matches stored: "
        f"{complete} complete, {len(stored) - complete} void"
    )
    shown = len(rows) - 1
    if entrant is not None or status is not None:
        summary += f"; {shown} shown"
    return "\n".join([*lines, summary]) + "\n" if shown else summary + "\n"


PROGRESS_WIDTH = 80
"""Columns a progress line may take: it fits a classic terminal."""


def progress_line(
    done: int,
    total: int,
    durations: Sequence[float],
    workers: int,
    void: int = 0,
    leader: tuple[str, float] | None = None,
    width: int = PROGRESS_WIDTH,
    wall: float | None = None,
) -> str:
    """One line of a league's progress, at most ``width`` columns (a long leader's name is shortened).

    The speed comes from the matches played *in this run* only: a resumed run's stored matches say
    nothing of its speed, and the builds before its first match are no match time. ``durations`` are
    the seconds each of them took, ``workers`` how many run at once, ``wall`` the seconds since this
    run's first match started. Until every worker has finished a match the speed is ``workers`` matches
    per mean duration; then it is the matches played over ``wall``, which counts every overhead.

    >>> progress_line(16, 20, [30.0, 34.0], workers=4, leader=("montecarlo", 115.04))
    '16/20 matches  0.12/s  ETA 32s  leader: montecarlo (115.0 points/match)'
    >>> progress_line(16, 20, [30.0, 34.0], workers=2, wall=40.0)
    '16/20 matches  0.05/s  ETA 1m20s'
    >>> progress_line(5, 6, [0.5], 1, leader=("an-entrant-with-a-long-name", 110.0), width=63)
    '5/6 matches  2.00/s  ETA 0s  leader: an-entrant-… (110.0/match)'
    >>> len(progress_line(1, 20, [8.0], 1, void=2, leader=("x" * 64, 99.0)))
    80
    """
    played, spent = len(durations), sum(durations)
    if wall is not None and wall > 0 and played >= workers:
        rate = played / wall
    else:
        rate = workers * played / spent if played and spent > 0 else 0.0
    eta = (total - done) / rate if rate else math.inf
    from referee.run.timing import eta_text  # noqa: PLC0415 (timing loads the launcher: a run has it)

    text = f"{done}/{total} matches  {rate:.2f}/s  ETA {eta_text(eta)}" + (f"  void {void}" if void else "")
    if leader is None:
        return text[:width]
    name, mean = leader
    tail = f" ({mean:.1f} points/match)"
    room = width - len(text) - len("  leader: ") - len(tail)
    if room < min(len(name), 12):  # a tight fit: the name matters more than the word
        tail = f" ({mean:.1f}/match)"
        room = width - len(text) - len("  leader: ") - len(tail)
    if room < 4:
        return text[:width]
    if len(name) > room:
        name = name[: room - 1] + "…"
    return f"{text}  leader: {name}{tail}"


def forfeited_lines(
    league: League,
    schedule: Sequence[ScheduledMatch],
    stored: Mapping[str, Summarized],
    load: Callable[[Sequence[str]], Iterator[StoredMatch]],
    exit_code: int,
) -> list[str]:
    """A line for each entrant of ``league`` that forfeited every complete match of it in ``stored`` (at
    least one), with the fault that cost it the last of them, its cards masked while the deals of its
    table are secret. The summaries say who forfeited; only that last match is decoded (``load``)."""
    played: dict[str, int] = {}
    forfeited: dict[str, int] = {}
    last: dict[str, tuple[str, int]] = {}
    for scheduled in schedule:
        found = stored.get(scheduled.match_id)
        match = found.summary if found is not None else None
        if match is None or match.status is not MatchStatus.COMPLETE:
            continue
        for seat, name in enumerate(scheduled.entrants):
            played[name] = played.get(name, 0) + 1
            if seat in match.forfeits:
                forfeited[name] = forfeited.get(name, 0) + 1
                if seat in match.fault_seats:
                    last[name] = (match.match_id, seat)
    shown = disclosure(schedule, stored).deals_shown
    lines = []
    for entrant in league.entrants:
        count = played.get(entrant.name, 0)
        if not count or forfeited.get(entrant.name, 0) != count:
            continue
        cause = ""
        if entrant.name in last:
            match_id, seat = last[entrant.name]
            decoded = next(load([match_id]))
            fault = [fault for fault in decoded.faults if fault.seat == seat][-1]
            detail = fault.detail if shown(decoded) else mask_cards(fault.detail)
            cause = f"; the last one in deal {fault.deal}, {fault.kind}: {detail}"
        lines.append(
            f"forfeited: {entrant.name} forfeited every match it played ({count} of {count}){cause} "
            f"(exit {exit_code})"
        )
    return lines
