"""How many matches ``schedule.until: settled`` needs to reach the correct order, against a round robin
and ``format: sampled``, on a field of sample bots of known strength.

The field: ``--copies`` copies (default 3) of the random bot and as many of the heuristic one, under
different names (r1, r2, …, h1, h2, …), four seats a table (``sample_bots/strength.py`` measured the
heuristic 34 points a match above the random bot at four seats). The correct order is every heuristic
above every random bot; copies of one bot may come in either order. The bots play in-process
(``module:`` entrants, no gRPC, no sandbox) so that a league takes seconds: what is measured is how
many matches a format asks for, not how fast they are played.

For each league seed and format it runs the real ``referee run`` in a fresh folder and reports:

- ``played``: the matches the format played (a round robin's are fixed: C(2·copies, 4) tables × the
  seating's matches, 12 for ``balanced``, 4 for ``cyclic``; ``until: settled`` is capped at that);
- ``correct``: whether the final leaderboard has the correct order;
- ``reached``: the matches after which the leaderboard, recomputed at every table boundary in schedule
  order, has the correct order and keeps it to the end (what a watcher of the live board would see).

    .venv/bin/python benchmarks/settled.py --seeds 5
    .venv/bin/python benchmarks/settled.py --seeds 2 --copies 5 --seating cyclic
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.league.config import load_league
from referee.league.planning import schedule_of
from referee.league.ratings import rate
from referee.league.schedule import ScheduledMatch, tables
from referee.results.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT
from support.cli import REFEREE

BOTS = {"r": "sample_bots.random_bot:RandomBot", "h": "sample_bots.heuristic:HeuristicBot"}
STRONG = "h"
MATCHES_PER_TABLE = {"cyclic": 4, "balanced": 12}
SETTLED = "{until: settled, seating: %s, confidence: %s, margin: %s, max_matches: %d}"


def field(copies: int) -> dict[str, str]:
    """``copies`` of each bot: r1, r2, … and h1, h2, …"""
    return {f"{kind}{number}": module for kind, module in BOTS.items() for number in range(1, copies + 1)}


def formats(copies: int, seating: str) -> dict[str, str]:
    """Each format's ``schedule:``. ``until: settled`` may play as many matches as the round robin."""
    round_robin = math.comb(2 * copies, 4) * MATCHES_PER_TABLE[seating]
    return {
        "round robin": f"{{format: round-robin, seating: {seating}}}",
        "settled c=0.95, no margin": SETTLED % (seating, 0.95, 0, round_robin),
        "settled c=0.95, margin 4": SETTLED % (seating, 0.95, 4, round_robin),
        "settled c=0.9, margin 5": SETTLED % (seating, 0.9, 5, round_robin),
        "settled c=0.9, margin 6": SETTLED % (seating, 0.9, 6, round_robin),
        "sampled T=2": f"{{format: sampled, tables_per_entrant: 2, seating: {seating}}}",
        "sampled T=4": f"{{format: sampled, tables_per_entrant: 4, seating: {seating}}}",
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    played: int
    correct: bool
    reached: int | None
    seconds: float


def correct(order: Sequence[str]) -> bool:
    """Every strong entrant above every weak one; copies of one bot in any order."""
    strong = [name.startswith(STRONG) for name in order]
    return strong == sorted(strong, reverse=True)


def league_text(seed: int, schedule: str, entrants: dict[str, str]) -> str:
    """The league file; its entrants in an order shuffled by the seed, which orders a round robin's
    tables (and so when its order becomes right), while ``until: settled`` sorts them by name."""
    names = sorted(entrants)
    random.Random(seed).shuffle(names)
    lines = "\n".join(f"  - {{name: {name}, module: '{entrants[name]}', cwd: {ROOT}}}" for name in names)
    return (
        f"name: settled benchmark\nseed: {seed}\nplayers: 4\nschedule: {schedule}\nconcurrency: 1\n"
        f"entrants:\n{lines}\n"
    )


def run(seed: int, schedule: str, entrants: dict[str, str], folder: Path) -> Outcome:
    path = folder / "league.yaml"
    path.write_text(league_text(seed, schedule, entrants), encoding="utf-8")
    league = load_league(path)
    begun = time.perf_counter()
    subprocess.run([REFEREE, "run", str(path)], check=True, capture_output=True, cwd=folder)
    seconds = time.perf_counter() - begun
    store = Store(league.database, write=False)
    try:
        stored = store.matches()
    finally:
        store.close()
    schedule_ = schedule_of(league, league.seed, stored)
    names = list(entrants)
    boards: list[tuple[int, bool]] = []
    prefix: list[ScheduledMatch] = []
    for table in tables(schedule_):
        prefix.extend(table)
        board = rate(names, prefix, stored, league.rating)
        boards.append((len(prefix), correct([s.entrant for s in board.standings])))
    reached = None
    for played, right in reversed(boards):
        if not right:
            break
        reached = played
    return Outcome(len(schedule_), boards[-1][1], reached, seconds)


def summary(outcomes: list[Outcome]) -> str:
    reached = [o.reached for o in outcomes if o.reached is not None]

    def mean(values: Sequence[float]) -> str:
        return f"{statistics.fmean(values):.0f}" if values else "-"

    return (
        f"| {mean([o.played for o in outcomes])} ({min(o.played for o in outcomes)}-"
        f"{max(o.played for o in outcomes)}) | {sum(o.correct for o in outcomes)}/{len(outcomes)} | "
        f"{mean([float(r) for r in reached])} | {sum(o.seconds for o in outcomes):.0f}s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="league seeds 1..N")
    parser.add_argument("--copies", type=int, default=3, help="copies of each bot in the field")
    parser.add_argument("--seating", choices=sorted(MATCHES_PER_TABLE), default="balanced")
    parser.add_argument("--only", default="", help="only the formats whose name contains this")
    args = parser.parse_args()
    entrants = field(args.copies)
    print(f"field: {', '.join(entrants)}; 4 seats; {args.seating} seating")
    print(
        "| format | matches played, mean (min-max) | correct at the end | matches to reach it, mean | time |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, schedule in formats(args.copies, args.seating).items():
        if args.only not in name:
            continue
        outcomes = []
        for seed in range(1, args.seeds + 1):
            with tempfile.TemporaryDirectory() as folder:
                outcome = run(seed, schedule, entrants, Path(folder))
            outcomes.append(outcome)
            print(f"  {name} seed {seed}: {outcome}", file=sys.stderr)
        print(f"| {name} " + summary(outcomes))


if __name__ == "__main__":
    main()
