"""The remote door through the real CLI (issue #32, items 3, 4, 5 and 16): the league file's TLS keys
kept when ``--listen`` comes from the command line, under ``referee run`` and ``referee serve``; the
connection record read by ``referee leaderboard`` and ``referee token list`` beside a running server;
gRPC's own lines kept off the referee's output unless ``--log-level debug``."""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from referee.remote.front import DESCRIPTOR_RESERVE, DESCRIPTORS_PER_CONNECTION
from support.cli import REFEREE, referee
from support.net import free_port
from support.remote import (
    end,
    interrupt,
    issue,
    league,
    remote_env,
    served_league,
    start_bot,
    start_referee,
    wait_for,
)
from support.serve import stored, until

PY = sys.executable
GRPC_LINE = "ssl_transport_security"
"""What gRPC's C-core prints for a failed TLS handshake (``I1201 … ssl_transport_security.cc:2563]
Handshake failed …``)."""


def tls_in_file(path: Path, certs) -> None:
    """Gives the league file ``remote: tls_cert/tls_key``, as paths from its own folder."""
    folder = path.parent / "tls"
    folder.mkdir()
    shutil.copy(certs.cert, folder / "server.pem")
    shutil.copy(certs.key, folder / "server.key")
    text = path.read_text()
    start = text.index("remote: {") + len("remote: {")
    path.write_text(text[:start] + "tls_cert: tls/server.pem, tls_key: tls/server.key, " + text[start:])


def garbage(port: int, times: int = 3) -> None:
    """Connections that send bytes that are no TLS: each a failed handshake at the door."""
    for _ in range(times):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(b"GET / HTTP/1.0\r\n\r\n")
            connection.settimeout(5)
            with contextlib.suppress(OSError):
                connection.recv(100)


def test_run_keeps_the_league_files_tls_when_listen_comes_from_the_command_line(tmp_path, certs):
    path = league(tmp_path, ["far"])
    tls_in_file(path, certs)
    token = issue(path, "far")
    # Off loopback, the file's TLS is what makes the address acceptable: the run goes as far as binding.
    refused = referee("run", path, "--listen", "10.232.0.1:7443")
    assert "has no TLS" not in refused.stderr, refused.stderr
    assert "--listen 10.232.0.1:7443: cannot listen there" in refused.stderr, refused.stderr
    port = free_port()
    bot = start_bot(
        [PY, "-m", "sample_bots.random_bot"],
        remote_env(f"localhost:{port}", token, certs.ca),
        tmp_path / "bot.log",
    )
    try:
        result = referee("run", path, "--listen", f"127.0.0.1:{port}")
    finally:
        end(bot)
    assert result.returncode == 0, result.stderr
    assert f"listening for remote entrants on 127.0.0.1:{port} with TLS" in result.stderr
    assert "the league is over" in (tmp_path / "bot.log").read_text()


def test_beside_a_running_server_the_record_shows_what_the_remote_bot_played(tmp_path, certs):
    """``referee serve`` with TLS from the league file and ``--listen`` from the command line: the remote
    bot plays over TLS, and ``referee leaderboard`` and ``referee token list`` run beside the server
    show its round trip and its decisions, not "never connected". Garbage at the door leaves no gRPC
    line in the server's output."""
    path = served_league(tmp_path, ["far"])
    tls_in_file(path, certs)
    token = issue(path, "far")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", log=log
    )
    bot = None
    try:
        wait_for(log, f"listening for remote entrants on 127.0.0.1:{door} with TLS")
        garbage(door)
        bot = start_bot(
            [PY, "-m", "sample_bots.random_bot"],
            remote_env(f"localhost:{door}", token, certs.ca),
            tmp_path / "bot.log",
        )
        until("far's matches stored", lambda: sum("far" in m["seats"] for m in stored(http)) == 2)
        time.sleep(1.5)  # the record is written within a second of a match
        board = referee("leaderboard", path)
        tokens = referee("token", "list", path)
        for output in (board.stdout, tokens.stdout):
            line = next(line for line in output.splitlines() if line.startswith("remote: far"))
            assert "never connected" not in line, line
            assert "round trip" in line, line
            assert "decisions: median" in line, line
    finally:
        code = interrupt(served)
        if bot is not None:
            end(bot)
    output = log.read_text()
    assert code == 0, output
    assert GRPC_LINE not in output, output
    # Without the record (deleted, or never written: a full disk), both count the matches stored instead.
    (tmp_path / "results-remote.json").unlink()
    for output in (referee("leaderboard", path).stdout, referee("token", "list", path).stdout):
        line = next(line for line in output.splitlines() if line.startswith("remote: far"))
        assert re.search(r"\d+ matches stored; no latency record", line), line


def test_with_log_level_debug_grpcs_own_lines_are_shown(tmp_path, certs):
    path = served_league(tmp_path, ["far"])
    tls_in_file(path, certs)
    issue(path, "far")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve",
        path,
        "--http",
        f"127.0.0.1:{http}",
        "--listen",
        f"127.0.0.1:{door}",
        "--log-level",
        "debug",
        log=log,
    )
    try:
        wait_for(log, "listening for remote entrants")
        garbage(door)
        wait_for(log, GRPC_LINE, timeout=10)
    finally:
        interrupt(served)


def test_the_referee_raises_its_open_file_limit_and_warns_when_the_door_gets_too_few(tmp_path):
    """At start the referee raises its soft open-file limit to the hard one; with a hard limit too low
    to keep 256 descriptors for itself and 256 connections for the door, the door says so in one line."""
    script = (
        "import resource, referee.cli\n"
        "referee.cli.main(['token', '--help'], standalone_mode=False)\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    raised = subprocess.run(
        ["prlimit", "--nofile=512:4096", "--", PY, "-c", script],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert raised.stdout.split()[-1] == "4096", raised.stdout
    path = league(tmp_path, ["far"], wait="1s")
    issue(path, "far")
    result = subprocess.run(
        ["prlimit", "--nofile=400:400", "--", REFEREE, "run", path, "--listen", f"127.0.0.1:{free_port()}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    room = (400 - DESCRIPTOR_RESERVE) // DESCRIPTORS_PER_CONNECTION
    assert f"may open too few files for the remote door to hold more than {room} connections" in result.stderr
    assert "Traceback" not in result.stderr, result.stderr
