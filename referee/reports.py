"""Leaderboards, replays and exports as text: table, JSON, CSV, Markdown, JSON Lines."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from pyramid_sdk.cards import format_cards
from referee.disclosure import HIDDEN_NOTE, disclosure, mask_cards
from referee.faults import Fault
from referee.league import League
from referee.ratings import Leaderboard, Standing
from referee.schedule import ScheduledMatch
from referee.store import StoredMatch
from referee.transcript import deal_line, ending, standings

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


def _cell(key: str, standing: Standing) -> str:
    value = standing.to_dict()[key]
    if key in ("mu", "sigma", "conservative"):
        return f"{value:.2f}"
    if key == "mean_points":
        return f"{value:.1f}"
    if key == "points_ci95":
        return "—" if value is None else f"{value:.1f}"
    if key == "exact_rate":
        return f"{100 * float(str(value)):.0f}%"
    return str(value)


def leaderboard_table(board: Leaderboard, title: str = "") -> str:
    table = Table(title=title or None, box=box.SIMPLE_HEAVY)
    for key, header in COLUMNS:
        table.add_column(header, justify="left" if key == "entrant" else "right")
    for standing in board.standings:
        table.add_row(*(_cell(key, standing) for key, _ in COLUMNS))
    buffer = io.StringIO()
    Console(width=140, file=buffer, color_system=None, force_terminal=False).print(table)
    return buffer.getvalue().rstrip() + "\n"


def leaderboard_json(board: Leaderboard) -> str:
    return (
        json.dumps([standing.to_dict() for standing in board.standings], indent=2, ensure_ascii=False) + "\n"
    )


def leaderboard_csv(board: Leaderboard) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[key for key, _ in COLUMNS], lineterminator="\n")
    writer.writeheader()
    for standing in board.standings:
        row = standing.to_dict()
        writer.writerow({key: "" if row[key] is None else row[key] for key, _ in COLUMNS})
    return out.getvalue()


def leaderboard_markdown(board: Leaderboard) -> str:
    lines = ["| " + " | ".join(header for _, header in COLUMNS) + " |"]
    lines.append("|" + "|".join("---:" if key != "entrant" else "---" for key, _ in COLUMNS) + "|")
    for standing in board.standings:
        lines.append("| " + " | ".join(_cell(key, standing) for key, _ in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


FORMATS = {
    "table": leaderboard_table,
    "json": leaderboard_json,
    "csv": leaderboard_csv,
    "markdown": leaderboard_markdown,
}


def export_lines(
    league: League, schedule: Sequence[ScheduledMatch], stored: dict[str, StoredMatch]
) -> Iterator[str]:
    """One JSON object per stored match of the schedule, in schedule order (docs/FORMATS.md). A match
    of a table not complete yet has no seed and no deals, only its results (``referee.disclosure``)."""
    shown = disclosure(schedule, stored).deals_shown
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None:
            continue
        record = match.record
        visible = shown(match)
        yield json.dumps(
            {
                "match_id": match.match_id,
                "league": league.name,
                "round": match.round,
                "table": match.table,
                "rotation": match.rotation,
                "seed": match.seed if visible else None,
                "players": record.rules.players,
                "rules": {"trick_winner": str(record.rules.trick_winner), "talk": str(record.rules.talk)},
                "seats": list(record.seats),
                "status": str(match.status),
                "deals_hidden": not visible,
                "deals": [
                    {key: value for key, value in deal.to_dict().items() if key != "talk"}
                    for deal in (record.deals if visible else ())
                ],
                "totals": list(record.totals),
                "ranks": list(record.ranks),
                "forfeits": list(record.forfeits),
                "faults": [_fault_dict(fault, visible) for fault in match.faults],
            },
            ensure_ascii=False,
        )


def _fault_dict(fault: Fault, visible: bool) -> dict[str, object]:
    return fault.to_dict() if visible else {**fault.to_dict(), "detail": mask_cards(fault.detail)}


def replay_text(match: StoredMatch, deals_shown: bool = True) -> str:
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
    for deal in record.deals:
        lines += ["", deal_line(deal, seats)]
        for seat, hand in enumerate(deal.hands):
            lines.append(f"    {seats[seat]:>12}: {format_cards(hand, human=True)}")
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


def eta_text(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
