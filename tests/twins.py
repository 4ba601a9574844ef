"""The twin experiment of issue #14: two copies of one deterministic bot under two names in one league.

A fair schedule and rating cannot tell them apart: neither may be ahead systematically, and where the
seatings are symmetric in the two (``seating: all``) they must tie exactly. Used by tests/test_twins.py;
run it as a script for the figures in docs/LEAGUE.md ("Seatings"), e.g.

    .venv/bin/python tests/twins.py balanced duplicate 5    # seating, rating, rounds [swapped]
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.seeds import derive_seed
from referee.league.config import load_league
from referee.league.ratings import Leaderboard, ci95
from referee.league.schedule import ScheduledMatch
from referee.results.reading import standings
from referee.results.store import StoredMatch
from referee.run.competition import Competition
from referee.run.host import Host
from referee.run.local_driver import LocalDriver
from sample_bots.montecarlo import MonteCarloBot
from sample_bots.random_bot import RandomBot
from support import ROOT

HERE = Path(__file__).resolve().parent

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
CHEAP_FIELD = (*ISSUE_FIELD[:3], ("other", OTHER_RANDOM))
"""The same with a second random stream for the Monte Carlo bot: as asymmetric, a hundred times faster."""


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
    competition = Competition.open(league)
    league, store = competition.league, competition.store
    try:
        asyncio.run(LocalDriver(competition, Host.of(league, log_dir=folder / "logs")).run())
        stored = store.matches()
        read = standings(league, competition.seed, stored)
        return Played(read.board, read.schedule, stored)
    finally:
        store.close()


def main() -> None:
    """``twins.py SEATING RATING ROUNDS [swapped] [cheap] [seeds=N]``: a Markdown table, a line per seed.

    ``cheap`` puts a second random stream in the Monte Carlo bot's place (seconds instead of an hour)."""
    seating, rating, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    options = sys.argv[4:]
    field = CHEAP_FIELD if "cheap" in options else ISSUE_FIELD
    entrants = (field[0], field[2], field[1], field[3]) if "swapped" in options else field
    count = next((int(o.split("=")[1]) for o in options if o.startswith("seeds=")), 5)
    order = ", ".join(name for name, _ in entrants)
    print(f"seating: {seating}, rating: {rating}, rounds: {rounds}, entrants: {order}", flush=True)
    print(
        "| seed | μ heuristic | μ heuristic2 | σ | points/match heuristic | heuristic2 | ±95% | tables won |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    per_match: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in (101, 202, 303, 404, 505)[:count]:
            played = play(Path(folder) / str(seed), seed, entrants, seating, rating, rounds=rounds)
            by_name = {standing.entrant: standing for standing in played.board.standings}
            one, two = by_name["heuristic"], by_name["heuristic2"]
            tables = played.table_totals().values()
            diffs = [t["heuristic"] - t["heuristic2"] for t in tables]
            per_match += [d * len(tables) / len(played.schedule) for d in diffs]
            won = f"{sum(d > 0 for d in diffs)}-{sum(d < 0 for d in diffs)}-{sum(d == 0 for d in diffs)}"
            print(
                f"| {seed} | {one.mu:.2f} | {two.mu:.2f} | {one.sigma:.2f} / {two.sigma:.2f} "
                f"| {one.mean_points:.2f} | {two.mean_points:.2f} "
                f"| {one.points_ci95:.1f} / {two.points_ci95:.1f} | {won} |",
                flush=True,
            )
    print(
        f"\nOver the {len(per_match)} tables, heuristic − heuristic2: {statistics.fmean(per_match):+.2f} "
        f"± {ci95(per_match):.2f} points per match (95%), "
        f"tables won {sum(d > 0 for d in per_match)}-{sum(d < 0 for d in per_match)}"
        f"-{sum(d == 0 for d in per_match)}"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
