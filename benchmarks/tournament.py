#!/usr/bin/env python3
"""Tournament throughput.

``python benchmarks/tournament.py [LEAGUE]``: the example league at concurrency 1 and 2, from scratch each
time; one line per concurrency with ``matches_per_s`` and the bot processes started, then the speed-up of
2 over 1 (target on a 2-core machine: at least 1.4).

``python benchmarks/tournament.py --drivers [--pairs N] [--entrants E]``: a league of fast bots (E
random Python bots, default 6, each a sandboxed process, at 4-player tables: 60 matches), played
in-process at concurrency 2 and on a Dask LocalCluster of 2 worker processes, alternately, N pairs
(default 3). One line per run with ``matches_per_s``, the decisions, the seconds the cluster took to be
ready (included in the run's seconds), and CPU per decision: the referee's (in-process: this process;
Dask: the workers, where the referee's work happens) and, for Dask, the client's (this process: the
scheduler, and storing). ``referee_decisions_per_s`` is how many decisions one referee process can
drive with its CPU, one over its CPU per decision. Then each pair's ratio of Dask to in-process
matches/s (target: at least 0.9), also counting Dask's time from when the cluster was ready
(``after_setup``).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from referee.league.config import League, load_league
from referee.run.competition import Competition
from referee.run.host import Host
from referee.run.local_driver import LocalDriver

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT

FAST_LEAGUE = """\
name: Fast League
seed: 2026
players: 4
schedule: {{format: round-robin, rounds: 1, seating: cyclic}}
time_control: {{per_action: 1s, bank: 20s}}
database: results.sqlite
entrants:
{entrants}
"""


def fast_league(folder: Path, entrants: int = 5, in_process: bool = False) -> League:
    """A league of random bots at 4-player tables: command entrants (a fresh process per seat and
    match), or with ``in_process`` the same bots as ``module:`` entrants."""
    bot = (
        "module: sample_bots.random_bot:RandomBot"
        if in_process
        else "command: python sample_bots/random_bot.py"
    )
    lines = "\n".join(f"  - {{name: random{n}, {bot}, cwd: {ROOT}}}" for n in range(1, entrants + 1))
    path = folder / "league.yaml"
    path.write_text(FAST_LEAGUE.format(entrants=lines), encoding="utf-8")
    return load_league(path)


def cpu() -> float:
    """CPU seconds of this process, all its threads."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def concurrency_runs(league: League) -> None:
    rates = {}
    for concurrency in (1, 2):
        folder = Path(tempfile.mkdtemp(prefix="pyramid-bench-"))
        try:
            fresh = replace(league, database=folder / "results.sqlite")
            competition = Competition.open(fresh)
            host = Host.of(competition.league, log_dir=folder / "logs")
            started = time.perf_counter()
            report = asyncio.run(LocalDriver(competition, host, concurrency).run())
            elapsed = time.perf_counter() - started
            competition.close()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rates[concurrency] = report.progress.played / elapsed
        print(
            f"tournament league={league.name!r} concurrency={concurrency} matches={report.progress.played} "
            f"seconds={elapsed:.1f} matches_per_s={rates[concurrency]:.3f} "
            f"processes_started={report.processes_started}"
        )
    print(f"tournament speedup_2_over_1={rates[2] / rates[1]:.2f}")


def driver_run(driver: str, entrants: int) -> tuple[float, float]:
    """One run of the fast league from an empty database; prints its line and returns matches/s, over the
    whole run and over its time after the cluster was ready."""
    from referee.run.dask_driver import DaskDriver  # noqa: PLC0415

    folder = Path(tempfile.mkdtemp(prefix="pyramid-bench-"))
    try:
        competition = Competition.open(fast_league(folder, entrants))
        store, host = competition.store, Host.of(competition.league, log_dir=folder / "logs")
        local = LocalDriver(competition, host, concurrency=2)
        dask = DaskDriver(competition, host, workers=2, concurrency=2) if driver == "dask" else None
        own_before = cpu()
        started = time.perf_counter()
        report = asyncio.run(dask.run() if dask is not None else local.run())
        elapsed = time.perf_counter() - started
        own_after = cpu()
        decisions = sum(sum(match.decisions) for match in store.matches().values())
        store.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    own = own_after - own_before
    if dask is not None:
        referee_cpu, client_cpu = sum(item.cpu for item in dask.stats.values()), own
    else:
        referee_cpu, client_cpu = own, 0.0
    per_decision = referee_cpu / decisions
    progress = report.progress
    rate = progress.played / elapsed
    setup = dask.setup_seconds if dask is not None else 0.0
    print(
        f"tournament driver={driver} league='Fast League' matches={progress.played} "
        f"decisions={decisions} seconds={elapsed:.1f} setup_seconds={setup:.1f} matches_per_s={rate:.3f} "
        f"referee_cpu_us_per_decision={per_decision * 1e6:.0f} "
        f"client_cpu_us_per_decision={client_cpu / decisions * 1e6:.0f} "
        f"referee_decisions_per_s={1 / per_decision:.0f} processes_started={report.processes_started}",
        flush=True,
    )
    return rate, progress.played / (elapsed - setup)


def driver_runs(pairs: int, entrants: int) -> None:
    ratios, playing = [], []
    for _ in range(pairs):
        local, _ = driver_run("in-process", entrants)
        dask, dask_playing = driver_run("dask", entrants)
        ratios.append(dask / local)
        playing.append(dask_playing / local)
        print(f"tournament dask_over_in_process={ratios[-1]:.2f} after_setup={playing[-1]:.2f}", flush=True)
    print(
        f"tournament pairs={pairs} dask_over_in_process_median={statistics.median(ratios):.2f} "
        f"min={min(ratios):.2f} max={max(ratios):.2f} after_setup_median={statistics.median(playing):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("league", nargs="?", default=str(ROOT / "tournaments/example/league.yaml"))
    parser.add_argument("--drivers", action="store_true", help="in-process against a LocalCluster")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--entrants", type=int, default=6, help="random bots in the fast league")
    args = parser.parse_args()
    if args.drivers:
        driver_runs(args.pairs, args.entrants)
    else:
        concurrency_runs(load_league(args.league))


if __name__ == "__main__":
    main()
