"""How many matches ``schedule.until: settled`` needs to reach the correct order, against a round robin
(and ``format: sampled`` where this branch has it), on a field of sample bots of known strength.

The field: three copies of the random bot and three of the heuristic one under different names, four
seats a table (``sample_bots/strength.py`` measured the heuristic 34 points a match above the random bot
at four seats). The correct order is every heuristic above every random bot; copies of one bot may come
in either order. The bots play in-process (``module:`` entrants, no gRPC, no sandbox) so that a league
takes seconds: what is measured is how many matches a format asks for, not how fast they are played.

For each league seed and format it runs the real ``referee run`` in a fresh folder and reports:

- ``played``: the matches the format played (a round robin's are fixed: C(6,4) tables x 12 seatings);
- ``correct``: whether the final leaderboard has the correct order;
- ``reached``: the matches after which the leaderboard, recomputed at every table boundary in schedule
  order, has the correct order and keeps it to the end (what a watcher of the live board would see).

    .venv/bin/python benchmarks/settled.py --seeds 5
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

from referee.league import LeagueError, load_league
from referee.ratings import rate
from referee.schedule import ScheduledMatch, tables
from referee.store import Store
from referee.tournament import schedule_of

ROOT = Path(__file__).resolve().parent.parent
REFEREE = str(Path(sys.executable).parent / "referee")
FIELD = {
    "r1": "sample_bots.random_bot:RandomBot",
    "r2": "sample_bots.random_bot:RandomBot",
    "r3": "sample_bots.random_bot:RandomBot",
    "h1": "sample_bots.heuristic:HeuristicBot",
    "h2": "sample_bots.heuristic:HeuristicBot",
    "h3": "sample_bots.heuristic:HeuristicBot",
}
STRONG = {"h1", "h2", "h3"}
ROUND_ROBIN = math.comb(len(FIELD), 4) * 12

SETTLED = "{until: settled, confidence: %s, margin: %s, max_matches: %d}"
FORMATS: dict[str, str] = {
    "round robin": "{format: round-robin}",
    "settled c=0.95, no margin": SETTLED % (0.95, 0, ROUND_ROBIN),
    "settled c=0.95, margin 4": SETTLED % (0.95, 4, ROUND_ROBIN),
    "settled c=0.9, margin 5": SETTLED % (0.9, 5, ROUND_ROBIN),
    "settled c=0.9, margin 6": SETTLED % (0.9, 6, ROUND_ROBIN),
    # format: sampled comes from another branch of issue #16: without it this line says "n/a".
    "sampled T=4": "{format: sampled, tables_per_entrant: 4}",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    played: int
    correct: bool
    reached: int | None
    seconds: float


def correct(order: Sequence[str]) -> bool:
    """Every strong entrant above every weak one; copies of one bot in any order."""
    return set(order[: len(STRONG)]) == STRONG


def league_text(seed: int, schedule: str) -> str:
    """The league file; its entrants in an order shuffled by the seed, which orders a round robin's
    tables (and so when its order becomes right), while ``until: settled`` sorts them by name."""
    names = sorted(FIELD)
    random.Random(seed).shuffle(names)
    entrants = "\n".join(f"  - {{name: {name}, module: '{FIELD[name]}', cwd: {ROOT}}}" for name in names)
    return (
        f"name: settled benchmark\nseed: {seed}\nplayers: 4\nschedule: {schedule}\nconcurrency: 1\n"
        f"entrants:\n{entrants}\n"
    )


def run(seed: int, schedule: str, folder: Path) -> Outcome | None:
    path = folder / "league.yaml"
    path.write_text(league_text(seed, schedule), encoding="utf-8")
    try:
        league = load_league(path)
    except LeagueError:
        return None  # a format this branch does not have
    begun = time.perf_counter()
    subprocess.run([REFEREE, "run", str(path)], check=True, capture_output=True, cwd=folder)
    seconds = time.perf_counter() - begun
    store = Store(league.database, write=False)
    try:
        stored = store.matches()
    finally:
        store.close()
    schedule_ = schedule_of(league, stored)
    names = list(FIELD)
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
    args = parser.parse_args()
    print(f"field: {', '.join(FIELD)}; 4 seats; balanced seating (12 matches a table)")
    print(
        "| format | matches played, mean (min-max) | correct at the end | matches to reach it, mean | time |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, schedule in FORMATS.items():
        outcomes = []
        for seed in range(1, args.seeds + 1):
            with tempfile.TemporaryDirectory() as folder:
                outcome = run(seed, schedule, Path(folder))
            if outcome is None:
                break
            outcomes.append(outcome)
            print(f"  {name} seed {seed}: {outcome}", file=sys.stderr)
        print(f"| {name} " + (summary(outcomes) if outcomes else "| n/a: not in this branch | | | |"))


if __name__ == "__main__":
    main()
