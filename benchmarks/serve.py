"""Whether a served league costs the same per match on its two-thousandth stored match as on its
hundredth: the pace of ``referee serve`` against ``referee run`` on the same league from copies of one
database pre-filled to ``--sizes`` stored matches (default 100 and 2,000), the server's CPU per stored
match, and the time of ``/``, ``/api/v1/leaderboard`` and ``/api/v1/matches/ID`` as a client finds
them while the league plays (most requests are the first read after a new match: a match is stored
every fraction of a second).

The league (issue #34): 8 in-process entrants (sample_bots' random and heuristic bots as ``module:``
entrants: no bot process, so the play is all in the measured process), 4 seats, balanced seatings,
``rounds: 5`` (4,200 matches, so both commands have matches left to play). The pre-filled matches are
real matches of the engine between random agents, stored through the referee's own ``Store.save``
(``benchmarks/api_flood.py``'s ``build``). Each command runs ``--seconds`` (default 60) from a fresh
copy, ``run`` and ``serve`` alternating ``--rounds`` times (default 2) at each size; the figure is the
matches stored in that time (both commands start, open the database and plan before their first
match, and serve writes its first whole report meanwhile, in a reader process).

    .venv/bin/python benchmarks/serve.py
    .venv/bin/python benchmarks/serve.py --sizes 100 2000 --seconds 60 --rounds 2

``--soak MINUTES`` measures instead the server's resident memory (its own, and with its reader
processes) while it plays ``MINUTES`` on end, a league of ``rounds: SOAK_ROUNDS`` from 100 stored matches
(so that it does not run out), with one client asking for a page, the leaderboard and a stored match
every second; it prints a line a minute and the ratio of the last minute's to the fifth's::

    .venv/bin/python benchmarks/serve.py --soak 30

Not measured yet (issue #34): the pace with 200 event-stream listeners and 20 API requests a second.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from api_flood import build, copied, count, cpu, interrupted, load_average, resident, stored_ids

from support.cli import REFEREE
from support.net import free_port

ROUNDS = 5
SOAK_ROUNDS = 40
"""33,600 matches: at a few hundred a minute, more than half an hour of play."""
ROUTES = ("/", "/api/v1/leaderboard", "/api/v1/matches/ID")


def timed_get(url: str) -> float | None:
    """Seconds to the whole answer of ``url``, or ``None`` if it was not a 200."""
    begun = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            answer.read()
            ok = answer.status == 200
    except OSError:
        return None
    return time.perf_counter() - begun if ok else None


def one(command: str, base: Path, seconds: float) -> tuple[int, tuple[float, float], dict[str, list[float]]]:
    """(matches stored, CPU seconds of the process and of its children, read times by route) of one run of
    ``referee run`` or ``referee serve`` for ``seconds`` on a copy of the database in ``base``."""
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as scratch:
        folder = Path(scratch)
        database = copied(base, folder)
        before = count(database)
        ids = stored_ids(database)
        port = free_port()
        argv = [REFEREE, command, "league.yaml"]
        argv += ["--http", f"127.0.0.1:{port}"] if command == "serve" else []
        reads: dict[str, list[float]] = {route: [] for route in ROUTES}
        with (folder / "out").open("w") as out:
            process = subprocess.Popen(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
            begun = time.monotonic()
            try:
                while time.monotonic() - begun < seconds:
                    time.sleep(1.0)
                    if command == "serve":
                        for route in ROUTES:
                            path = route.replace("ID", urllib.parse.quote(random.choice(ids), safe=""))
                            took = timed_get(f"http://127.0.0.1:{port}{path}")
                            if took is not None:
                                reads[route].append(took)
                spent = cpu(process.pid)
            finally:
                interrupted(process)
        return count(database) - before, spent, reads


def soak(minutes: float) -> None:
    """The server's resident memory, a line a minute, while it plays ``minutes`` on end (see the doc)."""
    with tempfile.TemporaryDirectory(prefix="serve-soak-") as scratch:
        folder = Path(scratch)
        build(folder, 100, SOAK_ROUNDS)
        ids = stored_ids(folder / "league.sqlite")
        port = free_port()
        with (folder / "out").open("w") as out:
            argv = [REFEREE, "serve", "league.yaml", "--http", f"127.0.0.1:{port}"]
            process = subprocess.Popen(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
            begun = time.monotonic()
            samples: dict[int, tuple[float, float, int]] = {}
            try:
                while (elapsed := time.monotonic() - begun) < minutes * 60:
                    time.sleep(1.0)
                    for route in ("/", "/api/v1/leaderboard", "/api/v1/matches/ID"):
                        path = route.replace("ID", urllib.parse.quote(random.choice(ids), safe=""))
                        timed_get(f"http://127.0.0.1:{port}{path}")
                    minute = int(elapsed // 60) + 1
                    if minute not in samples and elapsed >= 60 * minute - 5:  # the end of each minute
                        own, whole = resident(process.pid)
                        samples[minute] = (own, whole, count(folder / "league.sqlite"))
                        print(
                            f"minute {minute}: server {own:.0f} MiB, with its readers {whole:.0f} MiB, "
                            f"{samples[minute][2]} stored (load {load_average()})",
                            flush=True,
                        )
            finally:
                interrupted(process)
    fifth, last = samples.get(5), samples[max(samples)]
    if fifth is not None:
        print(
            f"soak: minute {max(samples)} ÷ minute 5: server {last[0] / fifth[0]:.3f}, "
            f"with its readers {last[1] / fifth[1]:.3f}; {last[2] - fifth[2]} matches stored in between"
        )


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 2000])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--soak", type=float, metavar="MINUTES", help="the memory soak instead (see the doc)")
    args = parser.parse_args()
    if args.soak:
        soak(args.soak)
        return
    with tempfile.TemporaryDirectory(prefix="serve-bench-base-") as scratch:
        results: dict[int, dict[str, list[tuple[int, tuple[float, float], dict[str, list[float]]]]]] = {}
        for size in args.sizes:
            base = Path(scratch) / str(size)
            base.mkdir()
            build(base, size, ROUNDS)
            results[size] = {"run": [], "serve": []}
            for number in range(args.rounds):
                for command in ("run", "serve") if number % 2 == 0 else ("serve", "run"):
                    done = one(command, base, args.seconds)
                    results[size][command].append(done)
                    print(
                        f"{size} stored, {command}: {done[0]} matches in {args.seconds:g} s, "
                        f"CPU s {done[1][0]:.1f} own, {done[1][1]:.1f} children (load {load_average()})",
                        flush=True,
                    )
        print(
            "\n| stored | run, matches | serve, matches | serve ÷ run | serve's own CPU s a match | "
            + " | ".join(f"`{route}` median ms" for route in ROUTES)
            + " |"
        )
        print("|---:|---|---|---:|---:|" + "---:|" * len(ROUTES))
        for size, by in results.items():
            run = [played for played, _, _ in by["run"]]
            serve = [played for played, _, _ in by["serve"]]
            per_match = sum(spent[0] for _, spent, _ in by["serve"]) / max(1, sum(serve))
            times = [
                1000 * median([t for _, _, reads in by["serve"] for t in reads[route]]) for route in ROUTES
            ]
            print(
                f"| {size} | {', '.join(map(str, run))} | {', '.join(map(str, serve))} | "
                f"{sum(serve) / max(1, sum(run)):.2f} | {per_match:.3f} | "
                + " | ".join(f"{t:.0f}" for t in times)
                + " |"
            )


if __name__ == "__main__":
    main()
