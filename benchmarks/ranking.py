"""How many matches ``referee compare A B C …`` (a ranking with error control) needs, and how often it is
wrong, against a round robin, ``until: settled`` with and without a margin, and ``format: sampled``, on
a field whose true order is known by construction.

The field (``sample_bots/epsilon.py``, in-process): the heuristic bot random in a share ε of its
decisions, at ε = 0, 0.25, 0.5, 0.75, 1 (a strength ladder: more randomness only costs), plus two exact
copies of the ε = 0.5 bot under other names (``e50-twin``, ``e50-triplet``), which are equal by
construction. Seven entrants, four seats, balanced seating (12 matches a table); one round robin is
C(7, 4) = 35 tables, 420 matches.

"Wrong", for the ranking: a declared order (``>``) where the upper one is not stronger by construction
(two copies ordered count as wrong), or a declared equality (``=``) of two different ε (the ladder's
gaps, 7 to 11 points a match, are all above the margin used). For the league formats, which declare
no equality: a final leaderboard with a weaker ε above a stronger one (copies in any order).

The leagues run through the real ``referee run`` in a fresh folder (as ``benchmarks/settled.py``); the
ranking through :func:`referee.ranking_play.rank`, the function ``referee compare`` calls. Seeds 1..N
are the same for every format.

    .venv/bin/python benchmarks/ranking.py --seeds 20                 # the full run
    .venv/bin/python benchmarks/ranking.py --seeds 20 --only compare  # the ranking alone
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyramid_sdk import Rules
from referee.league.config import load_league
from referee.league.planning import schedule_of
from referee.league.ratings import rate
from referee.ranking import Method, Relation
from referee.ranking_plan import make_rank_plan
from referee.ranking_play import rank
from referee.results.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT
from support.cli import REFEREE

FIELD = {
    "e0": ("Epsilon0", 0.0),
    "e25": ("Epsilon25", 0.25),
    "e50": ("Epsilon50", 0.5),
    "e75": ("Epsilon75", 0.75),
    "e100": ("Epsilon100", 1.0),
    "e50-twin": ("Epsilon50Twin", 0.5),
    "e50-triplet": ("Epsilon50Triplet", 0.5),
}
"""Each entrant's name (as its class names itself), class in sample_bots.epsilon, and ε."""
ROUND_ROBIN = 35 * 12
MARGIN = 5.0
"""The ranking's margin, points per match: below the ladder's gaps, so the ladder must be ordered."""
SETTLED = "{until: settled, seating: balanced, confidence: 0.95, margin: %s, max_matches: %d}"
LEAGUES = {
    "round robin": "{format: round-robin, seating: balanced}",
    "settled, no margin": SETTLED % (0, ROUND_ROBIN),
    "settled, margin 5": SETTLED % (5, ROUND_ROBIN),
    "sampled T=4": "{format: sampled, tables_per_entrant: 4, seating: balanced}",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    matches: int
    wrong: bool
    decided: bool
    seconds: float


def epsilon(name: str) -> float:
    return FIELD[name][1]


def compare_outcome(seed: int) -> Outcome:
    plan = make_rank_plan(
        [f"sample_bots.epsilon:{kind}" for kind, _ in FIELD.values()],
        (),
        Rules(players=4),
        seed,
        ROUND_ROBIN // 12,
        Method(alpha=0.05, margin=MARGIN),
    )
    begun = time.perf_counter()
    result = asyncio.run(rank(plan))
    seconds = time.perf_counter() - begun
    now = result.standing
    wrong = False
    for pair, relation in zip(now.pairs, now.relations, strict=True):
        upper, lower = epsilon(pair.upper), epsilon(pair.lower)
        if relation is Relation.BETTER and upper >= lower:
            wrong = True
        if relation is Relation.EQUAL and upper != lower:
            wrong = True
    return Outcome(result.matches, wrong, now.decided, seconds)


def league_outcome(seed: int, schedule: str, folder: Path) -> Outcome:
    names = list(FIELD)
    lines = "\n".join(
        f"  - {{name: {name}, module: 'sample_bots.epsilon:{FIELD[name][0]}', cwd: {ROOT}}}" for name in names
    )
    path = folder / "league.yaml"
    path.write_text(
        f"name: ranking benchmark\nseed: {seed}\nplayers: 4\nschedule: {schedule}\nconcurrency: 1\n"
        f"entrants:\n{lines}\n",
        encoding="utf-8",
    )
    league = load_league(path)
    begun = time.perf_counter()
    done = subprocess.run([REFEREE, "run", str(path)], capture_output=True, cwd=folder, check=False)
    seconds = time.perf_counter() - begun
    if done.returncode != 0:
        raise SystemExit(f"referee run exited {done.returncode}: {done.stderr.decode()[-500:]}")
    store = Store(league.database, write=False)
    try:
        stored = store.matches()
    finally:
        store.close()
    played = schedule_of(league, league.seed, stored)
    order = [standing.entrant for standing in rate(names, list(played), stored, league.rating).standings]
    inverted = any(epsilon(upper) > epsilon(lower) for upper, lower in itertools.pairwise(order))
    stopped = "settled" not in schedule or len(played) < ROUND_ROBIN  # a settled league short of its cap
    return Outcome(len(played), inverted, stopped, seconds)


def row(name: str, outcomes: Sequence[Outcome]) -> str:
    matches = [outcome.matches for outcome in outcomes]
    mean = statistics.fmean(matches)
    return (
        f"| {name} | {mean:.0f} ({min(matches)}-{max(matches)}) | {mean / ROUND_ROBIN:.2f} | "
        f"{sum(outcome.wrong for outcome in outcomes)}/{len(outcomes)} | "
        f"{sum(outcome.decided for outcome in outcomes)}/{len(outcomes)} | "
        f"{sum(outcome.seconds for outcome in outcomes):.0f}s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 1..N, the same for every format")
    parser.add_argument("--only", default="", help="only the formats whose name contains this")
    args = parser.parse_args()
    print(f"field: {', '.join(FIELD)}; 4 seats, balanced; round robin {ROUND_ROBIN} matches")
    print("| format | matches, mean (min-max) | x round robin | wrong | stopped by itself | time |")
    print("|---|---:|---:|---:|---:|---:|")
    formats = {"compare, margin 5, alpha 0.05": None, **LEAGUES}
    for name, schedule in formats.items():
        if args.only not in name:
            continue
        outcomes = []
        for seed in range(1, args.seeds + 1):
            if schedule is None:
                outcome = compare_outcome(seed)
            else:
                with tempfile.TemporaryDirectory() as folder:
                    outcome = league_outcome(seed, schedule, Path(folder))
            outcomes.append(outcome)
            print(f"  {name} seed {seed}: {outcome}", file=sys.stderr, flush=True)
        print(row(name, outcomes), flush=True)


if __name__ == "__main__":
    main()
