#!/usr/bin/env python3
"""A Python bot's start-up: every match starts fresh bot processes, so it is paid four times a match.

``python benchmarks/startup.py imports [--runs N]``: ``python -c 'import pyramid_sdk.client'`` against
``python -c 'import grpc'``, whole processes in turn, N pairs (default 20); prints each one's median CPU
and wall seconds and the median of the pairs' ratios.

``python benchmarks/startup.py cli [--runs N]``: the ``referee`` command's start, ``referee --help`` and
``referee X --help`` for a few commands (the program as its console script runs it), each against
``python -c 'import grpc'``, in turn, N pairs (default 20); prints the medians and the median ratio.

``python benchmarks/startup.py hello [--runs N]``: the wall time of a random bot process
(``sample_bots/random_bot.py``) from its start to its hello at a real referee server, against
``python -c 'import grpc'`` run to its end, in turn; prints the medians and the median ratio.

``python benchmarks/startup.py league [--pairs N] [--entrants E]``: the fast league of
``benchmarks/tournament.py`` (E random bots, default 5, at 4-player tables, seated cyclically: 20
matches) played once with the bots as command entrants, a fresh sandboxed process per seat and match,
and once in-process (``module:``), in turn, N pairs (default 2), at concurrency 2; prints matches/s of
each and the ratio.

Run it with another checkout's interpreter (``/path/.venv/bin/python benchmarks/startup.py …``) to
measure that checkout's code: the script imports only what both have.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tournament import fast_league  # benchmarks/tournament.py

import sample_bots
from referee.run.competition import Competition
from referee.run.host import Host
from referee.run.local_driver import LocalDriver

BOTS = Path(sample_bots.__file__).resolve().parent
"""The sample bots of the checkout whose code this interpreter runs."""


def whole_process(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def summary(name: str, figures: list[tuple[float, float]]) -> str:
    cpu, wall = zip(*figures, strict=True)
    return f"{name}: cpu_s={statistics.median(cpu):.3f} wall_s={statistics.median(wall):.3f}"


def ratios(mine: list[tuple[float, float]], yardstick: list[tuple[float, float]]) -> str:
    cpu = statistics.median(a[0] / b[0] for a, b in zip(mine, yardstick, strict=True))
    wall = statistics.median(a[1] / b[1] for a, b in zip(mine, yardstick, strict=True))
    return f"ratio (median of pairs): cpu={cpu:.2f} wall={wall:.2f}"


GRPC = [sys.executable, "-c", "import grpc"]


def imports(runs: int) -> None:
    client = [sys.executable, "-c", "import pyramid_sdk.client"]
    whole_process(client), whole_process(GRPC)  # warm the file cache
    mine, yardstick = [], []
    for _ in range(runs):
        mine.append(whole_process(client))
        yardstick.append(whole_process(GRPC))
    print(summary("import pyramid_sdk.client", mine))
    print(summary("import grpc", yardstick))
    print(ratios(mine, yardstick))


CLI_STARTS = (
    ("--help",),
    ("run", "--help"),
    ("leaderboard", "--help"),
    ("match", "--help"),
    ("compare", "--help"),
)
"""The command lines whose start ``cli`` times: the group's help loads every command's module."""


def cli(runs: int) -> None:
    for args in CLI_STARTS:
        program = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())", *args]
        whole_process(program), whole_process(GRPC)  # warm the file cache
        mine, yardstick = [], []
        for _ in range(runs):
            mine.append(whole_process(program))
            yardstick.append(whole_process(GRPC))
        print(
            summary(f"referee {' '.join(args)}", mine),
            "|",
            summary("import grpc", yardstick),
            "|",
            ratios(mine, yardstick),
            flush=True,
        )


async def _hello_pairs(runs: int) -> list[tuple[float, float]]:
    """Per run, wall seconds of a random bot process from its start to the referee's receipt of its
    hello, and of ``python -c 'import grpc'`` from its start to its end, one after the other, on one
    referee server (gRPC's asyncio API wants one event loop a process)."""
    from pyramid_sdk.client import ENV_ADDRESS, ENV_TOKEN  # noqa: PLC0415
    from referee.match.server import create_server  # noqa: PLC0415
    from referee.match.sessions import SessionRegistry  # noqa: PLC0415

    registry = SessionRegistry()
    server, port = await create_server(registry)
    pairs = []
    try:
        for _ in range(runs + 1):  # the first pair warms the file cache
            token = secrets.token_urlsafe(24)
            waiting = registry.expect(token)
            env = {**os.environ, ENV_ADDRESS: f"127.0.0.1:{port}", ENV_TOKEN: token}
            started = time.perf_counter()
            bot = await asyncio.create_subprocess_exec(
                sys.executable, str(BOTS / "random_bot.py"), env=env, stderr=subprocess.DEVNULL
            )
            await asyncio.wait_for(waiting, 60)
            hello = time.perf_counter() - started
            bot.kill()
            await bot.wait()
            started = time.perf_counter()
            yardstick = await asyncio.create_subprocess_exec(*GRPC)
            await yardstick.wait()
            pairs.append((hello, time.perf_counter() - started))
    finally:
        await server.stop(None)
    return pairs[1:]


def hello(runs: int) -> None:
    mine, yardstick = zip(*asyncio.run(_hello_pairs(runs)), strict=True)
    print(f"random bot, start to hello: wall_s={statistics.median(mine):.3f}")
    print(f"import grpc: wall_s={statistics.median(yardstick):.3f}")
    pairs = [a / b for a, b in zip(mine, yardstick, strict=True)]
    print(f"ratio (median of pairs): wall={statistics.median(pairs):.2f}")


def league_run(entrants: int, in_process: bool) -> float:
    """matches/s of the fast league from an empty database, at concurrency 2."""
    folder = Path(tempfile.mkdtemp(prefix="pyramid-bench-"))
    try:
        competition = Competition.open(fast_league(folder, entrants, in_process))
        host = Host.of(competition.league, log_dir=folder / "logs")
        started = time.perf_counter()
        report = asyncio.run(LocalDriver(competition, host, concurrency=2).run())
        elapsed = time.perf_counter() - started
        competition.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    kind = "in-process" if in_process else "command"
    rate = report.progress.played / elapsed
    print(
        f"league bots={kind} matches={report.progress.played} seconds={elapsed:.1f} matches_per_s={rate:.3f} "
        f"processes_started={report.processes_started}",
        flush=True,
    )
    return rate


def leagues(pairs: int, entrants: int) -> None:
    found = []
    for _ in range(pairs):
        command = league_run(entrants, in_process=False)
        found.append(command / league_run(entrants, in_process=True))
        print(f"league command_over_in_process={found[-1]:.2f}", flush=True)
    print(f"league pairs={pairs} command_over_in_process_median={statistics.median(found):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["imports", "cli", "hello", "league"])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--entrants", type=int, default=5)
    args = parser.parse_args()
    if args.what == "imports":
        imports(args.runs)
    elif args.what == "cli":
        cli(args.runs)
    elif args.what == "hello":
        hello(args.runs)
    else:
        leagues(args.pairs, args.entrants)


if __name__ == "__main__":
    main()
