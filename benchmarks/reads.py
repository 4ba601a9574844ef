"""What the commands that read a league's results cost as the league grows: ``leaderboard``,
``leaderboard --crosstable``, ``matches``, ``export``, ``report`` and a ``run`` that finds nothing left to
play (its preflight, then the end of a run: the leaderboard rated and stored, the forfeit check), each as
a whole process, its wall time and its peak memory (the process's maximum resident set).

The league: 8 entrants at 4-seat tables, balanced seatings, C(8, 4) = 70 tables × 12 = 840 matches
(``--tables`` fewer for a smaller one, in schedule order). Its matches are real, valid matches of the
engine between in-process random agents, each played from its scheduled seed and stored through the
referee's own ``Store.save``, as ``referee run`` stores them: what a read costs does not depend on who
played. Building it takes about a minute; ``--keep DIR`` keeps it for another run.

Each command is timed with every ``--referee`` executable given (default: this checkout's), on the same
database, so that the code before a change can be measured against the code after it in one run (a
referee from before the ``summaries`` table reads the same file: it ignores the table). Yardstick,
measured in the same run: ``../shared/bench/reference_engine.py 4 300``, whose matches per second put a
figure on how fast the machine is at that moment.

    .venv/bin/python benchmarks/reads.py
    .venv/bin/python benchmarks/reads.py --referee ../main/.venv/bin/referee --referee .venv/bin/referee
    .venv/bin/python benchmarks/reads.py --tables 15   # 180 matches
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.league.config import load_league
from referee.league.planning import league_settings, schedule_of
from referee.results.reading import open_results
from referee.results.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT
from support.cli import REFEREE
from support.playthrough import played_outcome

YARDSTICKS = [up / "shared" / "bench" / "reference_engine.py" for up in (ROOT.parent, ROOT.parent.parent)]
"""``../shared/bench`` beside the checkout, or beside the folder of worktrees it is in."""
NAMES = ("ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal")
COMMANDS = {
    "leaderboard": ["leaderboard", "{league}"],
    "leaderboard --crosstable": ["leaderboard", "{league}", "--crosstable"],
    "matches": ["matches", "{league}"],
    "export": ["export", "{league}", "-o", "{folder}/export.jsonl"],
    "report": ["report", "{league}", "-o", "{folder}/report"],
    "run (nothing left to play)": ["run", "{league}"],
}


def league_text() -> str:
    entrants = "\n".join(
        f"  - {{name: {name}, module: 'sample_bots.random_bot:RandomBot', cwd: {ROOT}}}" for name in NAMES
    )
    return (
        "name: reads benchmark\nseed: 25\nplayers: 4\nschedule: {format: round-robin, seating: balanced}\n"
        f"entrants:\n{entrants}\n"
    )


def build(folder: Path, tables: int) -> Path:
    """The league file in ``folder`` and its database with the first ``tables`` tables stored."""
    path = folder / "league.yaml"
    path.write_text(league_text(), encoding="utf-8")
    league = load_league(path)
    schedule = schedule_of(league, league.seed)[: 12 * tables]
    store = Store(league.database)
    try:
        store.bind(league.name, league_settings(league, league.seed), path)
        for scheduled in schedule:
            store.save(scheduled, played_outcome(scheduled, league.rules), time.time())
    finally:
        store.close()
    opened, _, _ = open_results(league, str(path))  # reads as every read command will
    opened.close()
    return path


def measure(command: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak resident MB) of one run of ``command`` as its own process. On a
    shared, loaded machine the CPU time is the steadier figure: the wall time includes waiting for a
    core."""
    begun = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - begun
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        error = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} failed: {error.strip()}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def yardstick() -> str:
    """The reference engine's matches per second, now."""
    found = [path for path in YARDSTICKS if path.is_file()]
    if not found:
        return "yardstick: not found"
    out = subprocess.run(
        [sys.executable, str(found[0]), "4", "300"], capture_output=True, text=True, check=True
    ).stdout
    rate = re.search(r"matches_per_s=([\d.]+)", out)
    return f"yardstick reference_engine 4 300: {rate.group(1) if rate else out.strip()} matches/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=70, help="tables stored, 12 matches each (70: all)")
    parser.add_argument("--referee", action="append", help="a referee executable to time (repeatable)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each command; medians are printed")
    parser.add_argument("--only", default="", help="only the commands whose name contains this")
    parser.add_argument("--keep", type=Path, help="build the league in this folder (or reuse it there)")
    args = parser.parse_args()
    referees = args.referee or [REFEREE]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        begun = time.perf_counter()
        league = folder / "league.yaml"
        if not (folder / "league.sqlite").exists():
            league = build(folder, args.tables)
        took = time.perf_counter() - begun
        print(f"league: {12 * args.tables} matches, 8 entrants, 4 seats (made in {took:.0f} s)")
        print(yardstick())
        print("| command | referee | wall s | CPU s | peak MB |")
        print("|---|---|---:|---:|---:|")
        for name, template in COMMANDS.items():
            if args.only not in name:
                continue
            command = [part.format(league=league, folder=folder) for part in template]
            for referee in referees:
                runs = [measure([referee, *command]) for _ in range(args.runs)]
                wall, cpu, peak = (sorted(figures)[len(runs) // 2] for figures in zip(*runs, strict=True))
                print(f"| {name} | {referee} | {wall:.2f} | {cpu:.2f} | {peak:.0f} |", flush=True)
        print(yardstick())


if __name__ == "__main__":
    main()
