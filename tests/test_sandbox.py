"""Hostile bots in real matches under the real sandbox: every attack fails or is recorded, the other seats
play on, and nothing is left running. Each bot is tests/bots/hostile.py with one attack."""

import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from referee.match.faults import FaultKind
from referee.match.launcher import Confinement
from referee.match.outcome import MatchStatus
from referee.match.sandbox import Limits, SandboxMode, SandboxPlan, bubblewrap_problem, entrant_uid
from support import ROOT
from support.arena import FAST, PY, RANDOM, play
from support.cli import REFEREE, referee
from support.processes import bot_processes, settle

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and bool(bubblewrap_problem()),
    reason=f"the sandbox cannot run here: {bubblewrap_problem()} (CI installs bubblewrap)",
)
HOSTILE = f"{PY} {ROOT}/tests/bots/hostile.py"
REQUIRED = Confinement(SandboxMode.REQUIRED)


def attempts(log: Path) -> dict[str, list[str]]:
    """What the hostile bot said of each attempt, in order, from its log."""
    seen: dict[str, list[str]] = {}
    older = log.with_name(log.name + ".1")  # a log rotates past 1 MiB
    text = (older.read_text(encoding="utf-8") if older.exists() else "") + log.read_text(encoding="utf-8")
    for line in text.splitlines():
        found = re.match(r"ATTEMPT (.*?): (.*)$", line)
        if found:
            seen.setdefault(found.group(1), []).append(found.group(2))
    assert seen, f"the hostile bot said nothing: {text[-2000:]}"
    return seen


def run_league(league: Path) -> subprocess.CompletedProcess[str]:
    return referee("run", league)


def hostile_match(tmp_path: Path, attack: str, *args: str, confinement: Confinement = REQUIRED, **kwargs):
    outcome, _ = play(
        [f"{HOSTILE} {attack} {' '.join(args)}", RANDOM, RANDOM],
        log_dir=tmp_path,
        confinement=confinement,
        **kwargs,
    )
    return outcome, attempts(tmp_path / "seat0.log")


def no_one_else_suffered(outcome) -> None:
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert [fault for fault in outcome.faults if fault.seat != 0] == []


def test_a_bot_sees_no_token_and_no_other_process(tmp_path):
    outcome, seen = hostile_match(tmp_path, "steal-token")
    no_one_else_suffered(outcome)
    assert seen["token in my environment"] == ["none"]
    assert seen["tokens of others"] == ["none"]
    visible = int(seen["other processes"][0].split()[0])
    assert visible <= 3  # bubblewrap's init, setpriv's successor (the bot) and nothing of anyone else's
    assert not [fault for fault in outcome.faults if fault.seat == 0]


def test_a_seat_cannot_be_taken_twice_and_the_attempt_is_recorded(tmp_path):
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: reuse\nseed: 3\nplayers: 2\nsandbox: required\n"
        "time_control: {per_action: 2s, bank: 20s}\nentrants:\n"
        f"  - {{name: thief, command: '{HOSTILE} reuse-token', cwd: {ROOT}}}\n"
        f"  - {{name: random, command: '{RANDOM}', cwd: {ROOT}}}\n",
        encoding="utf-8",
    )
    result = run_league(league)
    assert result.returncode == 0, result.stderr
    log = tmp_path / "league-logs" / "thief.log"
    # one per process: the preflight's and one per match
    assert attempts(log)["seat taken twice"] == ["refused UNAUTHENTICATED"] * 3
    refusals = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert len(refusals) == 3
    assert "presented the token of a seat that was already taken" in refusals[0]


def test_a_bot_can_neither_read_nor_write_the_league_its_logs_or_another_entrants_folder(tmp_path):
    """The layout of the example league: entrants run from a folder that holds the league folder."""
    tmp_path.chmod(0o755)
    home = tmp_path / "arena"
    (home / "league").mkdir(parents=True)
    (home / "other").mkdir()
    (home / "other" / "secret.txt").write_text("another entrant's weights", encoding="utf-8")
    (home / "mine").mkdir()
    (home / "mine" / "bot.py").write_text((ROOT / "tests/bots/hostile.py").read_text(), encoding="utf-8")
    for folder in (home, home / "league", home / "other", home / "mine"):
        folder.chmod(0o755)
    targets = [
        home / "league" / "league.yaml",
        home / "league" / "league.sqlite",
        home / "league" / "league-logs",
        home / "league",
        home / "other" / "secret.txt",
        home / "other",
        home / "report",
    ]
    league = home / "league" / "league.yaml"
    league.write_text(
        "name: files\nplayers: 2\nsandbox: required\ntime_control: {per_action: 2s, bank: 20s}\n"
        "entrants:\n"
        f"  - {{name: spy, command: 'python mine/bot.py files {' '.join(map(str, targets))}', cwd: ..}}\n"
        f"  - {{name: other, command: 'python {ROOT}/sample_bots/random_bot.py', cwd: ../other}}\n",
        encoding="utf-8",
    )
    result = referee("run", league, "--report", home / "report")
    assert result.returncode == 0, result.stderr
    seen = attempts(home / "league" / "league-logs" / "spy.log")
    got = {what: results for what, results in seen.items() if any("GOT" in r for r in results)}
    assert got == {}, got
    assert len(seen) == 3 * len(targets)
    assert not list(home.rglob("planted"))
    assert (home / "other" / "secret.txt").read_text(encoding="utf-8") == "another entrant's weights"


def test_a_bot_cannot_signal_the_referee(tmp_path):
    outcome, seen = hostile_match(tmp_path, "signal", str(os.getpid()), "1")
    no_one_else_suffered(outcome)
    assert seen[f"signal {os.getpid()}"] == ["ProcessLookupError"]  # no such process in its namespace
    assert seen["signal 1"] == ["PermissionError"]  # its namespace's init is not its own


def test_a_bot_has_no_network_at_all(tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        outcome, seen = hostile_match(tmp_path, "network", f"127.0.0.1:{port}", "10.255.255.1:80")
    finally:
        with pytest.raises(BlockingIOError):
            listener.accept()
        listener.close()
    no_one_else_suffered(outcome)
    assert seen[f"connect 127.0.0.1:{port}"][0] in ("ConnectionRefusedError", "OSError")
    assert seen["connect 10.255.255.1:80"][0] != "GOT"


def marked(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and "\nState:\tZ" not in status:
            found.append(pid)
    return found


def test_a_daemon_a_bot_leaves_behind_dies_with_the_match(tmp_path):
    marker = f"daemon-{os.getpid()}-{time.monotonic_ns()}"
    outcome, seen = hostile_match(tmp_path, "daemon", marker)
    no_one_else_suffered(outcome)
    assert seen["daemon"] == ["started"]
    assert settle(lambda: marked(marker), 5) == []  # killed with its sandbox, which takes a moment


def test_a_daemon_dies_even_when_the_referee_is_killed(tmp_path):
    marker = f"daemon-{os.getpid()}-{time.monotonic_ns()}"
    referee = subprocess.Popen(
        [REFEREE, "match", f"{HOSTILE} daemon {marker}", RANDOM, "--sandbox", "required"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked(marker), "the daemon never started"
    referee.kill()
    referee.wait()
    deadline = time.monotonic() + 10
    while (marked(marker) or bot_processes()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked(marker) == []
    assert bot_processes() == []


def processes_of(uid: int) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if re.search(rf"^Uid:\s+{uid}\s", status, re.MULTILINE) and "\nState:\tZ" not in status:
            found.append(pid)
    return found


def test_a_fork_bomb_stops_at_the_process_limit(tmp_path):
    """The bomb stops at the limit (so it cannot starve the machine), the bot's own clock runs out, the
    others play on, and every process of the bomb dies with the bot's sandbox."""
    confinement = Confinement(SandboxMode.REQUIRED, Limits(processes=64))
    outcome, _ = play(
        [f"{HOSTILE} fork-bomb", RANDOM, RANDOM],
        log_dir=tmp_path,
        confinement=confinement,
        time_control=FAST,
        absent_ok=True,
    )
    no_one_else_suffered(outcome)
    log = (tmp_path / "seat0.log").read_text(encoding="utf-8")
    counted = re.search(r"ATTEMPT fork bomb: (\d+) processes", log)
    if counted:  # the bot may itself be starved of threads before it can say anything
        assert int(counted.group(1)) <= 64 + 2
    deadline = time.monotonic() + 10  # the kernel tears a PID namespace down asynchronously
    while processes_of(entrant_uid("seat0")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(entrant_uid("seat0")) == []


def test_a_bot_over_its_memory_limit_is_a_fault_that_names_the_limit(tmp_path):
    confinement = Confinement(SandboxMode.REQUIRED, Limits(memory=256 * 1024**2))
    outcome, seen = hostile_match(tmp_path, "memory", "1024", confinement=confinement, time_control=FAST)
    no_one_else_suffered(outcome)
    assert seen["memory"] == ["asking for 1024 MiB"]
    faults = [fault for fault in outcome.faults if fault.seat == 0]
    assert faults[0].kind is FaultKind.DISCONNECT
    assert "the memory limit of 256 MiB" in faults[0].detail


def test_a_bot_over_its_file_size_limit_is_killed_and_the_fault_names_the_limit(tmp_path):
    confinement = Confinement(SandboxMode.REQUIRED, Limits(file_size=8 * 1024**2))
    outcome, seen = hostile_match(tmp_path, "big-file", "20", confinement=confinement, time_control=FAST)
    no_one_else_suffered(outcome)
    assert seen["big file"] == ["writing 20 MiB"]
    fault = next(fault for fault in outcome.faults if fault.seat == 0)
    assert fault.kind is FaultKind.DISCONNECT
    assert "exited with code 1, having hit the file size limit of 8 MiB" in fault.detail


def test_a_bot_keeps_nothing_from_one_match_to_the_next(tmp_path):
    """Two matches of a table in one run: the second starts a fresh process with a fresh /tmp and HOME."""
    tmp_path.chmod(0o755)
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: memory\nseed: 5\nplayers: 2\nsandbox: required\n"
        "time_control: {per_action: 2s, bank: 20s}\nentrants:\n"
        f"  - {{name: hoarder, command: '{HOSTILE} remember', cwd: {ROOT}}}\n"
        f"  - {{name: random, command: '{RANDOM}', cwd: {ROOT}}}\n",
        encoding="utf-8",
    )
    result = run_league(league)
    assert result.returncode == 0, result.stderr
    seen = attempts(tmp_path / "league-logs" / "hoarder.log")
    assert seen["notes from an earlier match"] == ["none"] * 3  # the preflight's process, then a match's
    assert seen["write notes in my folder"] == ["OSError"] * 3 or all(
        "Error" in result for result in seen["write notes in my folder"]
    )
    assert not (ROOT / "notes").exists()


def test_a_bot_cannot_predict_its_hand_from_what_it_receives(tmp_path):
    for match in range(2):
        result = referee("match", f"{HOSTILE} predict", RANDOM, "--logs", tmp_path / str(match))
        assert result.returncode == 0, result.stderr
        seen = attempts(tmp_path / str(match) / "hostile.log")
        assert seen["predict my first hand"][0].startswith("none of"), seen


@pytest.mark.quick
def test_the_sandbox_masks_what_lies_inside_a_bots_view(tmp_path):
    """The plan as a value: the league folder inside the entrant folder is replaced by an empty one, a
    secret file beside the bot by /dev/null, and a folder holding the bot's own is not masked whole."""
    (tmp_path / "league").mkdir()
    (tmp_path / "secret.sqlite").write_bytes(b"x")
    plan = SandboxPlan(
        command=("python", "bot.py"),
        cwd=tmp_path,
        socket=tmp_path / "referee.sock",
        hidden=(tmp_path / "league", tmp_path / "secret.sqlite", tmp_path, Path("/nowhere")),
        uid=2_000_001,
    )
    argv = " ".join(plan.argv())
    assert f"--tmpfs {tmp_path / 'league'}" in argv
    assert f"--ro-bind /dev/null {tmp_path / 'secret.sqlite'}" in argv
    assert f"--tmpfs {tmp_path} " not in argv
    assert "/nowhere" not in argv
    for namespace in ("--unshare-net", "--unshare-pid", "--die-with-parent"):
        assert namespace in argv
    assert argv.index("setpriv --reuid=2000001") > argv.index(" -- ")
