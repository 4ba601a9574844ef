"""Ctrl-C (issue #24, item 6) as a terminal sends it: SIGINT to the whole process group of a real
``referee run``, in process and on a LocalCluster of two Dask workers. One tidy line, the database whole,
every bot of a match cut short told CANCELLED, and a second run that finishes the league."""

import asyncio
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen
from typing import Any

import psutil
import pytest

from referee.match.bots import BotSpec
from referee.match.sessions import INTERRUPTED
from referee.match.setup import open_launcher
from support import ROOT
from support.arena import PY
from support.cli import REFEREE, export, referee
from support.leagues import complete_matches
from support.processes import bot_processes, settle, worker_processes

LEAGUE = f"""\
name: Interrupted
seed: 3
players: 2
schedule: {{format: round-robin, rounds: 2, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 1
database: results.sqlite
entrants:
  - name: status
    command: python tests/bots/status.py 0.02   # about 5 s a match; says how its stream ended
    cwd: {ROOT}
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
"""
CANCELLED = f"STATUS CANCELLED: {INTERRUPTED}; "
HAS_NODE = shutil.which("node") is not None and (ROOT / "sdk/node/node_modules").is_dir()


def lines_of(log: Path, start: str) -> list[str]:
    if not log.exists():
        return []
    return [line for line in log.read_text(encoding="utf-8").splitlines() if line.startswith(start)]


def ctrl_c(
    command: list[str], ready: Callable[[Popen[str]], bool], after: float = 0.5, **options: Any
) -> Popen[str]:
    """Starts ``command`` in a process group of its own and, ``after`` seconds once ``ready(process)`` holds,
    sends the whole group SIGINT, as a terminal's Ctrl-C does; returns the process, to be waited for.

    The command starts with SIGINT's default action, as a terminal's foreground job does, whatever this
    test process has: a suite started as a background job of a script (``pytest ... &``) inherits SIGINT
    *ignored*, Python keeps an ignored SIGINT ignored, and so would a Python script started from here,
    playing its match to the end after the Ctrl-C (this failed the Python API's test in suite runs)."""
    run = subprocess.Popen(
        ["env", "--default-signal=INT", *command],  # env execs the command: run.pid is the command's
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **options,
    )
    deadline = time.monotonic() + 180
    while not ready(run):
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "never ready"
        time.sleep(0.05)
    time.sleep(after)
    os.killpg(run.pid, signal.SIGINT)
    return run


@pytest.mark.parametrize("driver", [[], ["--workers", "2"]], ids=["in-process", "workers"])
def test_ctrl_c_is_one_line_keeps_the_database_and_tells_the_bots(tmp_path, driver):
    # In process, one match at a time: one round (2 matches) has a match stored and one under way to
    # cut, and the run again plays one status match (5 s), not three. Workers play matches side by side:
    # two rounds, so that the second match is not done by the time the first is stored.
    total = 4 if driver else 2
    path = tmp_path / "league.yaml"
    path.write_text(LEAGUE if driver else LEAGUE.replace("rounds: 2", "rounds: 1"), encoding="utf-8")
    database = tmp_path / "results.sqlite"
    status_log = tmp_path / "results-logs" / "status.log"

    def under_way(_: Popen[str]) -> bool:  # a match is under way after one has been stored
        started = len(lines_of(status_log, "PLAYING ")) - 1  # less the preflight's
        return 1 <= complete_matches(database) < started

    run = ctrl_c([REFEREE, "run", str(path), *driver], under_way)  # half a second into it
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    lines = err.splitlines()
    assert len(lines) == (2 if driver else 1), err  # with workers, the line saying the cluster started
    assert lines[-1].startswith("interrupted: ")
    assert lines[-1].endswith("matches are stored; run again to resume")
    assert "Traceback" not in err
    assert 1 <= complete_matches(database) < total
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert settle(bot_processes) == [], "a bot outlived the interrupted run"
    assert settle(worker_processes) == [], "a Dask worker outlived the interrupted run"
    # The bot of the match cut short saw its stream end with CANCELLED (not OK, as before), with no
    # match end; the preflight's short stream and the finished matches ended with OK.
    seen = lines_of(status_log, "STATUS ")
    cut = [line for line in seen if line.startswith(CANCELLED)]
    assert any(not line.startswith(f"{CANCELLED}0 requests") for line in cut), seen
    assert all(line.endswith("match_end no") for line in cut), seen
    finished = [line for line in seen if line.startswith("STATUS OK")]
    assert finished[0] == "STATUS OK: ; 1 requests, match_end no"  # the preflight
    assert all(line.endswith("match_end yes") for line in finished[1:]), seen
    assert len(seen) == len(cut) + len(finished)
    # The SDK bot of that match says so in its log, and returned from run().
    told = lines_of(tmp_path / "results-logs" / "random.log", "random: the referee cancelled the stream")
    assert told
    assert all(line.endswith(INTERRUPTED) for line in told)
    # Run again: the league is finished, every match once.
    again = referee("run", path, *driver, check=True)
    assert f"{total}/{total} matches" in again.stdout
    assert len(export(path)) == total


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(f"{PY} sample_bots/random_bot.py", id="python"),
        pytest.param(
            "node sample_bots/node/heuristic.js",
            id="node",
            marks=pytest.mark.skipif(not HAS_NODE and not os.environ.get("CI"), reason="no Node.js"),
        ),
    ],
)
def test_an_sdk_bot_exits_0_with_one_line_when_its_stream_is_cancelled(tmp_path, command):
    async def cancel() -> int | None:
        async with open_launcher(tmp_path) as launcher:
            process = await launcher.start(BotSpec.parse(command, name="bot", cwd=ROOT))
            child = process.process
            assert child is not None
            await launcher.stop(process, interrupted=True)
            return child.returncode

    assert asyncio.run(cancel()) == 0  # it left by itself within its second of grace, with code 0
    last = (tmp_path / "bot.log").read_text(encoding="utf-8").splitlines()[-1]
    assert last.endswith(f": the referee cancelled the stream: {INTERRUPTED}")


def test_a_run_with_as_many_matches_left_as_workers_plays_them(tmp_path):
    """What a run resumed after Ctrl-C often has left: two matches for two workers. The driver gave
    the first worker both (one to follow the other) and then failed to find a match for the second."""
    path = tmp_path / "league.yaml"
    text = LEAGUE.replace("rounds: 2", "rounds: 1")
    path.write_text(text.replace("python tests/bots/status.py 0.02", "python sample_bots/heuristic.py"))
    result = referee("run", path, "--workers", "2", check=True)
    assert "2/2 matches" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("command", "line"),
    [
        ("match", r"interrupted: the match was not finished; seed (\d+) \(--seed \1 plays it again\)"),
        ("compare", r"interrupted: no verdict; seed (\d+) \(--seed \1 plays the same deals\)"),
    ],
)
def test_ctrl_c_stops_match_and_compare_with_one_line_and_cancelled_streams(tmp_path, command, line):
    status = "python tests/bots/status.py 0.02"
    run = ctrl_c(
        [REFEREE, command, status, "python sample_bots/random_bot.py", "--logs", str(tmp_path)],
        lambda _: bool(lines_of(tmp_path / "status.log", "PLAYING ")),
        cwd=ROOT,
    )
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert re.fullmatch(line, err.strip()), err
    statuses = [status.split(";")[0] for status in lines_of(tmp_path / "status.log", "STATUS ")]
    if command == "compare":  # its bots are started once before the first match, to learn their names
        assert statuses[0].startswith("STATUS OK")
        statuses = statuses[1:]
    assert statuses == [f"STATUS CANCELLED: {INTERRUPTED}"]
    if command == "match":  # compare plays the two candidates' matches one after the other here
        assert lines_of(tmp_path / "random_bot.log", "random: ") == [
            f"random: the referee cancelled the stream: {INTERRUPTED}"
        ]


def test_ctrl_c_while_the_sandbox_is_probed_is_no_sandbox_failure(tmp_path):
    """The referee tries bubblewrap once before the first bot starts; a Ctrl-C then used to kill the
    probe too and print that bubblewrap did not work. This bubblewrap takes 3 s to answer."""
    slow = tmp_path / "bin" / "bwrap"
    slow.parent.mkdir()
    slow.write_text("#!/bin/sh\nsleep 3\nexit 0\n", encoding="utf-8")
    slow.chmod(0o755)

    def probing(run: Popen[str]) -> bool:
        children = psutil.Process(run.pid).children()
        return any("bwrap" in " ".join(child.cmdline()) for child in children)

    run = ctrl_c(
        [REFEREE, "match", "python sample_bots/random_bot.py", "sample_bots.random_bot:RandomBot"],
        probing,
        after=0,
        cwd=ROOT,
        env={**os.environ, "PATH": f"{slow.parent}{os.pathsep}{os.environ['PATH']}"},
    )
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert err.startswith("interrupted: the match was not finished"), err
    assert "bubblewrap" not in err


def test_ctrl_c_in_a_script_of_the_python_api_cancels_the_bots_streams(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "from referee import api\n"
        "try:\n"
        "    bots = ['python tests/bots/status.py 0.02', 'python sample_bots/random_bot.py']\n"
        f"    api.match(bots, logs={str(tmp_path)!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n",
        encoding="utf-8",
    )
    run = ctrl_c([PY, str(script)], lambda _: bool(lines_of(tmp_path / "status.log", "PLAYING ")), cwd=ROOT)
    out, err = run.communicate(timeout=60)
    assert out == "interrupted\n", err
    [status] = lines_of(tmp_path / "status.log", "STATUS ")
    assert status.startswith(CANCELLED)
