"""Stress check: does a referee killed with SIGKILL while it starts bots leave a process behind?

Runs ``referee run`` on a small league (three sandboxed bot entrants, concurrency 2) again and again, kills
it with SIGKILL at a random moment of the run, waits a few seconds, and counts the processes started by
that run that are still alive (found by a mark in their environment, which every bot process and its
sandbox inherit). Prints one line per leak (pid, parent pid, name, state) and a summary::

    python benchmarks/stress_sigkill.py --kills 40 --busy 2

``--busy N`` runs N busy loops beside it for the whole time: the leak showed on a loaded machine (two
pytest-xdist workers on two cores). ``--slow-window SECONDS`` runs the referee under strace, which holds
every bubblewrap for that long at its second ``capset``: the drop of privileges right after it cloned the
sandbox's first process and before it lets that process go on, the window that a loaded machine widens
by chance (see ``referee/match/watchdog.py``). Leftovers are killed after each round, so that rounds are
independent. The figures of the fix (the referee starts after about 4 s under strace)::

    python benchmarks/stress_sigkill.py --kills 20 --seed 7 --slow-window 0.5 --min 4 --max 9
    # before the watchdog: 7 of 20 kills left 1-4 stuck bwrap processes each; with it: 0 of 20
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT
from support.cli import REFEREE
from support.leagues import PROCESS_BOTS, write_league

LEAGUE = f"""\
name: Stress
seed: 11
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 2
database: results.sqlite
entrants:
{PROCESS_BOTS}  - name: random2
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
"""


def marked(mark: str) -> list[int]:
    """Live (not zombie) processes whose environment holds ``mark``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            if mark.encode() in environ and "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text():
                found.append(int(pid))
    return found


def describe(pid: int) -> str:
    with contextlib.suppress(OSError):
        status = dict(
            line.split(":\t", 1)
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if ":\t" in line
        )
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return (
            f"pid {pid} ppid {status['PPid']} {status['Name']} state {status['State']} "
            f"wchan {wchan} children {children or 'none'}"
        )
    return f"pid {pid} (gone)"


def children(pid: int) -> set[int]:
    with contextlib.suppress(OSError):
        return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    return set()


def wait_for_a_start(process: subprocess.Popen[bytes], after: float, deadline: float) -> None:
    """Returns as soon as the referee has a child process it did not have ``after`` seconds into the
    run (a bot it is starting), or at ``deadline``."""
    time.sleep(after)
    known = children(process.pid)
    while time.monotonic() < deadline and process.poll() is None:
        if children(process.pid) - known:
            return
        time.sleep(0.001)


def wait_for_a_clone(process: subprocess.Popen[bytes], after: float, deadline: float) -> None:
    """Returns as soon as a bot process the referee started ``after`` seconds into the run or later has
    a child of its own (bubblewrap has cloned its sandbox), or at ``deadline``."""
    time.sleep(after)
    known = children(process.pid)
    while time.monotonic() < deadline and process.poll() is None:
        if any(children(child) for child in children(process.pid) - known):
            return


class Finished(Exception):
    """The run ended before the kill: the round counts for nothing."""


def one_round(
    folder: Path,
    delay: float,
    settle: float,
    on_start: float | None = None,
    on_clone: bool = False,
    slow_window: float = 0.0,
) -> list[str]:
    """One run killed after ``delay`` seconds (or, with ``on_start``, that many seconds after the first
    bot process it starts after ``delay``); the processes still alive ``settle`` seconds later."""
    shutil.rmtree(folder, ignore_errors=True)
    write_league(folder, LEAGUE)
    mark = f"PYRAMID_STRESS_RUN={uuid.uuid4().hex}"
    env = {**os.environ, "PYRAMID_STRESS_RUN": mark.split("=", 1)[1]}
    tracer = []
    if slow_window:
        delay_us = int(slow_window * 1e6)
        tracer = ["strace", "-f", "-qq", "-o", "/dev/null", "--seccomp-bpf", "-e", "trace=capset"]
        tracer += ["-e", f"inject=capset:delay_enter={delay_us}:when=2"]
    process = subprocess.Popen(
        [*tracer, REFEREE, "run", str(folder / "league.yaml")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if on_clone:
        wait_for_a_clone(process, delay, time.monotonic() + delay + 10)
    elif on_start is None:
        time.sleep(delay)
    else:
        wait_for_a_start(process, delay, time.monotonic() + delay + 10)
        time.sleep(on_start)
    referee: int | None = process.pid
    if slow_window:  # the referee, not strace: strace stays, as a debugger would, and detaches at its end
        referee = min(children(process.pid), default=None)
    if referee is None or process.poll() is not None:
        process.wait()
        raise Finished
    os.kill(referee, signal.SIGKILL)
    deadline = time.monotonic() + settle
    while [pid for pid in marked(mark) if pid != process.pid] and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in marked(mark) if pid != process.pid]  # strace's own environment has it
    lines = [describe(pid) for pid in left]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=settle)
    if process.returncode is None:  # strace, still tracing something
        process.kill()
        process.wait()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--busy", type=int, default=0, help="busy loops to run beside it")
    parser.add_argument("--min", type=float, default=0.3, help="earliest kill, seconds after start")
    parser.add_argument("--max", type=float, default=4.0, help="latest kill, seconds after start")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds the leftovers get to end")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--on-start",
        type=float,
        default=None,
        metavar="MAX",
        help="kill 0..MAX seconds after the referee starts a bot process (after the random delay)",
    )
    parser.add_argument("--slow-window", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument(
        "--on-clone", action="store_true", help="kill as soon as a bot's bubblewrap has cloned its sandbox"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    leaked = finished = 0
    try:
        with tempfile.TemporaryDirectory(prefix="stress-sigkill-") as tmp:
            for number in range(1, args.kills + 1):
                delay = rng.uniform(args.min, args.max)
                extra = None if args.on_start is None else rng.uniform(0, args.on_start)
                try:
                    lines = one_round(
                        Path(tmp) / "league", delay, args.settle, extra, args.on_clone, args.slow_window
                    )
                except Finished:
                    print(f"kill {number} at {delay:.2f}s: the run had ended already", flush=True)
                    finished += 1
                    continue
                leaked += bool(lines)
                when = f"{delay:.2f}s" + (
                    " + a clone"
                    if args.on_clone
                    else ""
                    if extra is None
                    else f" + a start + {extra * 1000:.0f}ms"
                )
                print(f"kill {number} at {when}: {len(lines)} left", flush=True)
                for line in lines:
                    print(f"    {line}", flush=True)
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    print(f"{leaked} of {args.kills - finished} kills left a process behind")


if __name__ == "__main__":
    main()
