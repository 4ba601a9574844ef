"""Stopping while a match is being seated (issue #32, item 17), with real bot processes in the real
sandbox: a start cancelled at any moment of its first milliseconds ends within a bounded time and leaves
no process behind; ``referee run`` and ``referee serve`` (each in process and on Dask workers) stopped while
a bot is at each step of its start (process spawned, sandbox up, hello pending, seated) end at once; and
``referee compare`` whose sequential test decides while the next match's bot is starting gives its
verdict at once, and one stopped with Ctrl-C while its sandboxed bot is at each step ends at once.

The first is what hung ``referee compare``: a kill of bubblewrap while it set up the sandbox left the
sandbox's first process running outside the bot's process group, holding the bot's output pipe, and
asyncio's ``Process.wait()`` waits for that pipe to close (``referee.match.launcher``)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from referee.match import watchdog
from referee.match.bots import BotSpec
from referee.match.launcher import Confinement
from referee.match.sandbox import SandboxMode, bubblewrap_problem
from referee.match.setup import open_launcher
from support import ROOT
from support.cli import REFEREE
from support.net import free_port
from support.processes import bot_processes, settle, worker_processes

NO_SANDBOX = bubblewrap_problem()
needs_sandbox = pytest.mark.skipif(
    bool(NO_SANDBOX) and not os.environ.get("CI"), reason=f"the sandbox does not work here: {NO_SANDBOX}"
)
STOP_BOUND = 10.0
"""Seconds a stopped start may take at most (a stop's own waits: 1 s, 2 s, 2 s and a 2 s sweep)."""
STALL_BOT = ROOT / "tests/bots/stall_at.py"


def _descheduled(delay: float, task: asyncio.Task[object]) -> None:
    """The event loop held up for ``delay`` seconds right after a bot's process was spawned (a loaded
    machine), and the start cancelled then: its sandbox was being set up meanwhile."""
    time.sleep(delay)
    task.cancel()


@needs_sandbox
@pytest.mark.parametrize("held_up", [False, True], ids=["on-time", "loop-held-up"])
def test_a_start_cancelled_while_its_sandbox_is_set_up_ends_in_time_and_leaves_nothing(held_up):
    async def main() -> list[str]:
        mark = watchdog.environment()[watchdog.VARIABLE]
        spec = BotSpec.parse("python -m sample_bots.random_bot", cwd=ROOT)
        problems = []
        async with open_launcher(None, Confinement(SandboxMode.REQUIRED)) as launcher:
            for step in range(16):
                delay = 0.002 * step
                starting = asyncio.create_task(launcher.start(spec))
                if held_up:
                    asyncio.get_running_loop().call_soon(_descheduled, delay, starting)
                else:
                    await asyncio.sleep(delay)
                    starting.cancel()
                began = time.monotonic()
                done, _ = await asyncio.wait({starting}, timeout=STOP_BOUND)
                if not done:
                    problems.append(f"cancelled after {1000 * delay:.0f} ms: still stopping")
                elif not starting.cancelled():
                    problems.append(f"cancelled after {1000 * delay:.0f} ms: {starting.exception()!r}")
                took = time.monotonic() - began
                if left := watchdog.marked(mark):
                    problems.append(f"cancelled after {1000 * delay:.0f} ms: {len(left)} process(es) left")
                    watchdog.sweep(mark, 5.0)
                elif took > STOP_BOUND:
                    problems.append(f"cancelled after {1000 * delay:.0f} ms: stopped in {took:.1f}s")
        return problems

    assert asyncio.run(asyncio.wait_for(main(), 300)) == []


LEAGUE = """\
name: Seated
seed: 5
players: 2
schedule: {{format: round-robin, rounds: 2, seating: balanced}}
time_control: {{per_action: 1s, bank: 10s}}
concurrency: 2
database: results.sqlite
sandbox: {sandbox}
entrants:
  - name: stall
    command: python stall_at.py
    cwd: {bot}
  - {{name: r1, module: sample_bots.random_bot:RandomBot}}
  - {{name: r2, module: sample_bots.random_bot:RandomBot}}
"""


def stored(folder: Path) -> int:
    database = folder / "results.sqlite"
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(database) as db:
            return int(db.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.OperationalError:  # not made yet
        return 0


def until(check, what: str, process: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert process.poll() is None, f"ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


def interrupted(process: subprocess.Popen[str]) -> tuple[int, float]:
    """Ctrl-C to ``process``'s group, as a terminal sends it: its exit code and the seconds it took."""
    os.killpg(process.pid, signal.SIGINT)
    began = time.monotonic()
    code = process.wait(timeout=60)
    return code, time.monotonic() - began


STEPS = {
    # (driver, step, sandbox): what is stopped
    "run-spawned": ("run", "start", "none"),
    "run-sandbox-up": ("run", "start", "required"),
    "run-hello-pending": ("run", "hello", "required"),
    "run-seated": ("run", "seated", "required"),
    "workers-spawned": ("workers", "start", "none"),
    "workers-sandbox-up": ("workers", "start", "required"),
    "workers-hello-pending": ("workers", "hello", "required"),
    "workers-seated": ("workers", "seated", "required"),
    "serve-spawned": ("serve", "start", "none"),
    "serve-sandbox-up": ("serve", "start", "required"),
    "serve-hello-pending": ("serve", "hello", "required"),
    "serve-seated": ("serve", "seated", "required"),
    "serve-workers-spawned": ("serve-workers", "start", "none"),
    "serve-workers-sandbox-up": ("serve-workers", "start", "required"),
    "serve-workers-hello-pending": ("serve-workers", "hello", "required"),
    "serve-workers-seated": ("serve-workers", "seated", "required"),
}


@pytest.mark.parametrize("case", list(STEPS))
def test_a_league_stopped_while_a_bot_is_at_each_step_of_its_start_ends_at_once(tmp_path, case):
    driver, step, sandbox = STEPS[case]
    if sandbox == "required" and NO_SANDBOX and not os.environ.get("CI"):
        pytest.skip(f"the sandbox does not work here: {NO_SANDBOX}")
    bot = tmp_path / "bot"
    bot.mkdir()
    shutil.copy(STALL_BOT, bot / "stall_at.py")
    for path in (tmp_path, bot):  # a sandboxed bot runs as a uid of its own
        path.chmod(0o755)
    league = tmp_path / "league.yaml"
    league.write_text(LEAGUE.format(sandbox=sandbox, bot=bot), encoding="utf-8")
    command = {
        "run": [REFEREE, "run", str(league)],
        "workers": [REFEREE, "run", str(league), "--workers", "1"],
        "serve": [REFEREE, "serve", str(league), "--http", f"127.0.0.1:{free_port()}"],
        "serve-workers": [
            REFEREE,
            "serve",
            str(league),
            "--http",
            f"127.0.0.1:{free_port()}",
            "--workers",
            "1",
        ],
    }[driver]
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            ["env", "--default-signal=INT", *command], stdout=stdout, stderr=stderr, text=True,
            start_new_session=True,
        )  # fmt: skip
    bot_log = tmp_path / "results-logs" / "stall.log"
    try:
        until(lambda: stored(tmp_path) >= 1, "stored a match", process)  # the preflight is behind
        (bot / "STALL").write_text(step)
        reached = f"stall_at: {step}"
        until(lambda: bot_log.exists() and reached in bot_log.read_text(), f"reached {step}", process)
        code, took = interrupted(process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = err.read_text()
    assert took < STOP_BOUND, f"stopped in {took:.1f}s: {output}"
    assert "Traceback" not in output + out.read_text()
    if driver.startswith("serve"):
        assert code == 0, output
        assert "serve: stopped; " in out.read_text()
    else:
        assert code == 130, output
        assert output.splitlines()[-1].startswith("interrupted: "), output
    assert settle(bot_processes) == [], "a bot outlived the stopped league"
    assert settle(worker_processes) == [], "a Dask worker outlived the stopped league"


def _compare(folder: Path, start: int, *options: str) -> list[str]:
    """``referee compare`` of two in-process bots with a stall bot beside them, stalling from its
    ``start``-th start on at the step written in ``folder/bot/STALL``; unsandboxed unless ``options``
    say otherwise (the last ``--sandbox`` counts)."""
    bot = folder / "bot"
    bot.mkdir(exist_ok=True)
    shutil.copy(STALL_BOT, bot / "stall_at.py")
    for made in ("starts", "starts.reached"):
        (folder / made).unlink(missing_ok=True)
    return [
        REFEREE, "compare", "sample_bots.heuristic:HeuristicBot", "sample_bots.random_bot:RandomBot",
        "--against", f"python {bot / 'stall_at.py'} {folder / 'starts'} {start}", "--players", "2",
        "--seed", "8", "--h1", "4", "--concurrency", "2", "--sandbox", "none", "--logs", str(folder / "logs"),
        *options,
    ]  # fmt: skip


def _logs(folder: Path) -> str:
    return "".join(log.read_text() for log in (folder / "logs").glob("*.log"))


@pytest.fixture(scope="module")
def decisive(tmp_path_factory) -> tuple[int, float]:
    """The pairs after which the comparison of :func:`_compare` decides, no start stalling, and the
    seconds it took."""
    folder = tmp_path_factory.mktemp("free")
    (folder / "bot").mkdir()
    began = time.monotonic()
    free = subprocess.run(
        _compare(folder, 10_000, "--json"),
        capture_output=True, text=True, timeout=300, check=False, cwd=folder / "bot",
    )  # fmt: skip
    assert free.returncode == 0, free.stderr  # A is better
    return int(json.loads(free.stdout)["pairs"]), time.monotonic() - began


@pytest.mark.parametrize("step", ["start", "hello", "seated"])
def test_a_comparison_decided_while_the_next_match_is_being_seated_gives_its_verdict_at_once(
    tmp_path, decisive, step
):
    """The matches start in order: with the stall bot stalling from the start after the decisive pair's
    (start 1 names the bots, match k is start k + 1), the test decides while the next match's bot is at
    ``step`` of its start: the issue's hang. The verdict comes within :data:`STOP_BOUND` of the time
    the same comparison takes with no start stalling (a stalled start would wait 2 × 20 s)."""
    pairs, free = decisive
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "STALL").write_text(step)
    began = time.monotonic()
    stalled = subprocess.run(
        _compare(tmp_path, 2 * pairs + 2, "--json"),
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path / "bot",
    )  # fmt: skip
    took = time.monotonic() - began
    assert stalled.returncode == 0, stalled.stderr
    assert json.loads(stalled.stdout)["pairs"] == pairs
    assert f"stall_at: {step}" in _logs(tmp_path)
    assert took < free + STOP_BOUND, f"{took:.0f}s against {free:.0f}s: it waited for the stalled start"
    assert settle(bot_processes) == [], "a bot outlived the comparison"


@needs_sandbox
@pytest.mark.parametrize("step", ["start", "hello", "seated"], ids=["sandbox-up", "hello-pending", "seated"])
def test_a_comparison_stopped_while_a_sandboxed_bot_is_at_each_step_of_its_start_ends_at_once(tmp_path, step):
    """``referee compare`` with its bots in the sandbox (which a bot cannot write out of, so every start
    of the stall bot stalls: the first match's), stopped with Ctrl-C once the bot is at ``step``: it
    ends within :data:`STOP_BOUND`, with no verdict and no process left."""
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "STALL").write_text(step)
    command = _compare(tmp_path, 1, "--sandbox", "required")
    command[command.index("--against") + 1] = f"python {bot / 'stall_at.py'}"  # no counter: it cannot write
    for path in (tmp_path, bot):  # a sandboxed bot runs as a uid of its own
        path.chmod(0o755)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            ["env", "--default-signal=INT", *command], stdout=stdout, stderr=stderr, text=True,
            start_new_session=True, cwd=bot,
        )  # fmt: skip
    try:
        reached = f"stall_at: {step}"
        until(lambda: (tmp_path / "logs").is_dir() and reached in _logs(tmp_path), f"reached {step}", process)
        code, took = interrupted(process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = err.read_text()
    assert took < STOP_BOUND, f"stopped in {took:.1f}s: {output}"
    assert "Traceback" not in output + out.read_text()
    assert code == 130, output
    assert output.splitlines()[-1].startswith("interrupted: no verdict"), output
    assert settle(bot_processes) == [], "a bot outlived the stopped comparison"
