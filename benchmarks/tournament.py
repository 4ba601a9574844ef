#!/usr/bin/env python3
"""Tournament throughput: the example league at concurrency 1 and 2, from scratch each time.

Prints one line per concurrency with ``matches_per_s`` and the number of bot processes started, then the
speed-up of 2 over 1 (target on a 2-core machine: at least 1.4):

    python benchmarks/tournament.py [LEAGUE]
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from referee.league import load_league
from referee.tournament import Tournament, open_store

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    league = load_league(sys.argv[1] if len(sys.argv) > 1 else ROOT / "tournaments/example/league.yaml")
    rates = {}
    for concurrency in (1, 2):
        folder = Path(tempfile.mkdtemp(prefix="pyramid-bench-"))
        try:
            fresh = replace(league, database=folder / "results.sqlite")
            store, fresh = open_store(fresh)
            tournament = Tournament(fresh, store, folder / "logs", concurrency)
            started = time.perf_counter()
            progress = asyncio.run(tournament.run())
            elapsed = time.perf_counter() - started
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rates[concurrency] = progress.played / elapsed
        print(
            f"tournament league={league.name!r} concurrency={concurrency} matches={progress.played} "
            f"seconds={elapsed:.1f} matches_per_s={rates[concurrency]:.3f} "
            f"processes_started={tournament.processes_started}"
        )
    print(f"tournament speedup_2_over_1={rates[2] / rates[1]:.2f}")


if __name__ == "__main__":
    main()
