"""Remote entrants as their authors run them: a league with remote entrants, tokens issued through the
real CLI, remote bots started with ``PYRAMID_ADDRESS``, ``PYRAMID_TOKEN_FILE`` and ``PYRAMID_TLS_CA``,
and the ``referee`` process they connect to, watched through its log. The certificates are
:mod:`support.tls`'s."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from support import ROOT
from support.cli import REFEREE, referee
from support.leagues import MODULE_BOTS, remote_entrants, write_league


def league(folder: Path, remote: list[str], local: int = 1, wait: str = "60s", extra: str = "") -> Path:
    """A 2-player round robin (balanced seatings) of ``local`` random command bots and the remote
    entrants ``remote``."""
    entrants = "".join(
        f"  - name: random{n}\n    command: python sample_bots/random_bot.py\n    cwd: {ROOT}\n"
        for n in range(local)
    )
    entrants += remote_entrants(remote)
    return write_league(
        folder,
        "name: Remote League\nseed: 4\nplayers: 2\n"
        "schedule: {format: round-robin, rounds: 1, seating: balanced}\n"
        "time_control: {per_action: 2s, bank: 20s}\nconcurrency: 2\ndatabase: results.sqlite\n"
        f"remote: {{wait: {wait}}}\n{extra}entrants:\n{entrants}",
    )


SERVED_WAIT = 1.0
""":func:`served_league`'s ``remote: wait``: short, so that a server that tried an absent entrant's
matches would disqualify it (three failed starts in a row) within a few seconds."""


def served_league(folder: Path, remote: list[str]) -> Path:
    """Two in-process bots and the remote entrants ``remote``: a 2-player round robin, one round, for
    ``referee serve``."""
    entrants = MODULE_BOTS + remote_entrants(remote)
    return write_league(
        folder,
        "name: Served Remote\nseed: 5\nplayers: 2\n"
        "schedule: {format: round-robin, rounds: 1, seating: single}\n"
        "time_control: {per_action: 2s, bank: 20s}\nconcurrency: 2\ndatabase: results.sqlite\n"
        f"remote: {{wait: {SERVED_WAIT:g}s}}\nentrants:\n{entrants}",
    )


def issue(path: Path, name: str, *options: str) -> Path:
    """Issues ``name``'s token with the CLI; its file, as the bot's author keeps it."""
    result = referee("token", "issue", path, name, *options)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert token.startswith("pyr1_")
    assert "\n" not in token
    file = path.parent / f"{name}.token"
    file.write_text(token + "\n")
    return file


def remote_env(address: str, token_file: Path, ca: Path | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYRAMID_")}
    env |= {"PYRAMID_ADDRESS": address, "PYRAMID_TOKEN_FILE": str(token_file), "PYTHONUNBUFFERED": "1"}
    if ca is not None:
        env["PYRAMID_TLS_CA"] = str(ca)
    return env


def start_bot(
    command: list[str], env: dict[str, str], log: Path, prefix: tuple[str, ...] = ()
) -> subprocess.Popen[bytes]:
    """A remote bot's process, from the checkout, its output in ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen([*prefix, *command], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def start_referee(*args: object, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([REFEREE, *map(str, args)], stdout=out, stderr=subprocess.STDOUT)


def wait_for(log: Path, text: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not in {log} within {timeout}s: {log.read_text(errors='replace')}")


def stop(process: subprocess.Popen[bytes], timeout: float = 30.0) -> int:
    """The process's exit code, waiting up to ``timeout`` seconds, else killed (and the test fails)."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"process {process.args} did not end within {timeout}s") from None


def interrupt(process: subprocess.Popen[bytes]) -> int:
    """Ctrl-C, as a person stops the referee: its exit code within 30 s."""
    process.send_signal(signal.SIGINT)
    return stop(process, 30)


def end(bot: subprocess.Popen[bytes]) -> None:
    """A remote bot told CANCELLED waits for the referee to come back: its author stops it."""
    if bot.poll() is None:
        bot.send_signal(signal.SIGINT)
    stop(bot, 30)
