"""The twin experiment of issue #14: two copies of one deterministic bot under two names in one league.

A fair schedule and rating cannot tell them apart: neither may be ahead systematically, and where the
seatings are symmetric in the two (``seating: all``) they must tie exactly. Used by tests/test_twins.py;
run it as a script for the figures in docs/LEAGUE.md ("Seatings"):

    .venv/bin/python tests/twins.py            # Monte Carlo with 4 worlds a decision: ~15 minutes
"""

from __future__ import annotations

import asyncio
import math
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.seeds import derive_seed
from referee.league import load_league
from referee.ratings import Leaderboard, rate
from referee.schedule import ScheduledMatch
from referee.store import StoredMatch
from referee.tournament import Tournament, open_store, schedule_of
from sample_bots.montecarlo import MonteCarloBot
from sample_bots.random_bot import RandomBot

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SAMPLES = 4


class FixedMonteCarlo(MonteCarloBot):
    """Monte Carlo with a fixed number of worlds and no clock: deterministic for its seat's seed (the
    leagues below give it 60 s a decision, so the time cap never cuts a search short)."""

    def __init__(self) -> None:
        super().__init__(budget=math.inf, samples=SAMPLES)


class OtherRandom(RandomBot):
    """As weak as the random bot but not a copy of it: its own stream from its seat's seed. A cheap fourth
    entrant that breaks the symmetry a second pair of copies (random, random2) would bring."""

    def match_start(self, info: MatchInfo) -> None:
        self.rng = random.Random(derive_seed(info.seed, "other"))


HEURISTIC = "sample_bots.heuristic:HeuristicBot"
RANDOM = "sample_bots.random_bot:RandomBot"
MONTECARLO = "twins:FixedMonteCarlo"
OTHER_RANDOM = "twins:OtherRandom"

ISSUE_FIELD = (("random", RANDOM), ("heuristic", HEURISTIC), ("heuristic2", HEURISTIC), ("mc", MONTECARLO))
"""The league of the issue, in its order."""


def league_text(
    seed: int, entrants: tuple[tuple[str, str], ...], seating: str, rating: str, players: int
) -> str:
    lines = [
        "name: Twins",
        f"seed: {seed}",
        f"players: {players}",
        f"schedule: {{format: round-robin, rounds: 1, seating: {seating}}}",
        f"rating: {rating}",
        "time_control: {per_action: 60s, bank: 600s}",
        "database: results.sqlite",
        "entrants:",
    ]
    for name, module in entrants:
        cwd = HERE if module.startswith("twins:") else ROOT
        lines += [f"  - name: {name}", f"    module: {module}", f"    cwd: {cwd}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Played:
    board: Leaderboard
    schedule: tuple[ScheduledMatch, ...]
    stored: dict[str, StoredMatch]

    def table_totals(self) -> dict[str, dict[str, int]]:
        """Per table id, per entrant: its points summed over the table's matches."""
        totals: dict[str, dict[str, int]] = {}
        for scheduled in self.schedule:
            table = totals.setdefault(scheduled.table_id, {})
            record = self.stored[scheduled.match_id].record
            for name, total in zip(scheduled.entrants, record.totals, strict=True):
                table[name] = table.get(name, 0) + total
        return totals


def play(
    folder: Path,
    seed: int,
    entrants: tuple[tuple[str, str], ...],
    seating: str = "balanced",
    rating: str = "duplicate",
    players: int | None = None,
    rounds: int = 1,
) -> Played:
    """Runs the league in ``folder`` (in-process bots only) to its end."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "league.yaml"
    text = league_text(seed, entrants, seating, rating, players or len(entrants))
    path.write_text(text.replace("rounds: 1", f"rounds: {rounds}"), encoding="utf-8")
    league = load_league(path)
    store, league = open_store(league)
    try:
        asyncio.run(Tournament(league, store, folder / "logs").run())
        schedule, stored = schedule_of(league), store.matches()
        board = rate([name for name, _ in entrants], schedule, stored, league.rating)
        return Played(board, schedule, stored)
    finally:
        store.close()


@dataclass(frozen=True, slots=True)
class TwinLine:
    seed: int
    mu: tuple[float, float]
    points: tuple[float, float]


def twin_lines(
    seeds: tuple[int, ...], entrants: tuple[tuple[str, str], ...], seating: str, rating: str
) -> list[TwinLine]:
    """Per seed: μ and mean points per match of ``heuristic`` and ``heuristic2``."""
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            played = play(Path(folder) / f"{seating}-{rating}-{seed}", seed, entrants, seating, rating)
            by_name = {s.entrant: s for s in played.board.standings}
            first, second = by_name["heuristic"], by_name["heuristic2"]
            lines.append(TwinLine(seed, (first.mu, second.mu), (first.mean_points, second.mean_points)))
    return lines


def main() -> None:
    seeds = (101, 202, 303, 404, 505)
    swapped = (ISSUE_FIELD[0], ISSUE_FIELD[2], ISSUE_FIELD[1], ISSUE_FIELD[3])
    configs = [
        ("cyclic", "match", ISSUE_FIELD),
        ("balanced", "duplicate", ISSUE_FIELD),
        ("balanced", "duplicate", swapped),
        ("all", "duplicate", ISSUE_FIELD),
    ]
    for seating, rating, entrants in configs:
        order = ", ".join(name for name, _ in entrants)
        print(f"\nseating: {seating}, rating: {rating}, entrants: {order}", flush=True)
        print("| seed | μ heuristic | μ heuristic2 | points heuristic | points heuristic2 |")
        print("|---:|---:|---:|---:|---:|")
        for line in twin_lines(seeds, entrants, seating, rating):
            print(
                f"| {line.seed} | {line.mu[0]:.2f} | {line.mu[1]:.2f} | "
                f"{line.points[0]:.2f} | {line.points[1]:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
