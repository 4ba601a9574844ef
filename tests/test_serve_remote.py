"""``referee serve`` with remote entrants (docs/SERVER.md, docs/REMOTE.md): the real server process
listening for remote bots with TLS from a CA and certificate the test makes, Python SDK bots connecting
as their authors would (``PYRAMID_ADDRESS``, ``PYRAMID_TOKEN_FILE``, ``PYRAMID_TLS_CA``), read through
the JSON API, the results database and ``referee export``. Small leagues with fast bots: two players, one
round, the local entrants in the referee's process."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from support.cli import referee
from support.net import free_port
from support.remote import (
    end,
    interrupt,
    issue,
    remote_env,
    served_league,
    start_bot,
    start_referee,
    wait_for,
)
from support.serve import get, stored, until

PY = sys.executable
ABSENCE = 8.0
"""Seconds after which a server that tried an absent entrant's matches would have disqualified it: three
failed starts in a row, each of :data:`support.remote.SERVED_WAIT` seconds."""


def disqualified(database: Path) -> list[str]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return [row[0] for row in connection.execute("SELECT name FROM disqualified")]


def test_a_remote_entrant_that_connects_late_is_not_disqualified_and_plays_over_tls(tmp_path, certs):
    path = served_league(tmp_path, ["far"])
    token = issue(path, "far")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}",
        "--tls-cert", certs.cert, "--tls-key", certs.key, log=log,
    )  # fmt: skip
    bot = None
    try:
        wait_for(log, f"listening for remote entrants on 127.0.0.1:{door} with TLS")
        # The match of the two local entrants is played; far's wait for its bot, which is not connected.
        until("the local match stored", lambda: len(stored(http)) == 1)
        time.sleep(ABSENCE)
        assert [m["seats"] for m in stored(http)] == [["heuristic", "random"]]
        assert get(http, "/api/v1/live")["in_play"] == []  # no match holds a table waiting for far
        assert disqualified(tmp_path / "results.sqlite") == []
        rows = {row["name"]: row for row in get(http, "/api/v1/entrants")["entrants"]}
        assert rows["far"]["kind"] == "remote"
        assert rows["far"]["connected"] is False
        assert rows["random"]["kind"] == "module"
        assert rows["random"]["connected"] is None
        # Its author starts the bot now: its matches are played.
        env = remote_env(f"localhost:{door}", token, certs.ca)
        bot = start_bot([PY, "-m", "sample_bots.random_bot"], env, tmp_path / "bot.log")
        until("far's matches stored", lambda: len(stored(http)) == 3)
        matches = stored(http)
        assert all(m["status"] == "complete" and m["faults"] == [] for m in matches), matches
        for match in matches:
            assert match["remote_entrants"] == [name for name in match["seats"] if name == "far"]
        board = {row["entrant"]: row for row in get(http, "/api/v1/leaderboard")["standings"]}
        assert board["far"]["remote"] is True
        assert board["far"]["matches"] == 2
        assert board["heuristic"]["remote"] is False
        assert board["random"]["remote"] is False
        assert get(http, "/api/v1/entrants")["entrants"][2]["connected"] is True
        index = get_text(http, "/")
        assert index.count('class="badge remote"') == 1
    finally:
        code = interrupt(served)
        if bot is not None:
            wait_for(tmp_path / "bot.log", "the referee was interrupted; reconnecting")
            end(bot)
    output = log.read_text()
    assert code == 0, output
    assert token.read_text().strip() not in output
    record = json.loads((tmp_path / "results-remote.json").read_text())
    assert record["entrants"]["far"]["round_trips_ms"]
    assert record["entrants"]["far"]["decisions_ms"]
    lines = [json.loads(line) for line in referee("export", path).stdout.splitlines()]
    assert sorted(m["match_id"] for m in lines) == sorted(m["match_id"] for m in matches)


def get_text(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as answer:
        return str(answer.read().decode())


def test_a_remote_entrant_added_to_the_league_file_plays_once_it_has_a_token(tmp_path):
    path = served_league(tmp_path, ["far"])
    far_token = issue(path, "far")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", log=log
    )
    address = f"127.0.0.1:{door}"
    bots = []
    try:
        wait_for(log, "in plaintext")
        bots.append(
            start_bot(
                [PY, "-m", "sample_bots.random_bot"],
                remote_env(address, far_token, None),
                tmp_path / "far.log",
            )
        )
        until("the first league stored", lambda: len(stored(http)) == 3)
        # The organiser adds a remote entrant, and only later issues its token.
        path.write_text(path.read_text() + "  - name: near\n    remote: true\n", encoding="utf-8")
        referee_log = tmp_path / "results-logs" / "referee.log"
        wait_for(referee_log, "near: remote entrant 'near' has no token: referee token issue")
        near_token = issue(path, "near")
        bots.append(
            start_bot(
                [PY, "-m", "sample_bots.random_bot"],
                remote_env(address, near_token, None),
                tmp_path / "near.log",
            )
        )
        until("near's matches stored", lambda: len(stored(http)) == 6)
        matches = stored(http)
        assert all(m["status"] == "complete" and m["faults"] == [] for m in matches), matches
        assert sum("near" in m["seats"] for m in matches) == 3
    finally:
        code = interrupt(served)
        for bot in bots:
            end(bot)
    assert code == 0, log.read_text()
    assert disqualified(tmp_path / "results.sqlite") == []


def test_serve_refuses_remote_entrants_without_a_door_in_one_line(tmp_path):
    path = served_league(tmp_path, ["far"])
    for options, text in (
        ((), "remote entrant(s) far: give --listen HOST:PORT"),
        (("--listen", "0.0.0.0:7443"), "is not a loopback address and has no TLS"),
        (
            ("--listen", "127.0.0.1:7443", "--tls-cert", tmp_path / "none.pem"),
            "give both --tls-cert and --tls-key",
        ),
    ):
        result = referee("serve", path, "--http", f"127.0.0.1:{free_port()}", *options, timeout=60)
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert text in lines[0], result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "results.sqlite").exists()


def test_a_second_serve_of_a_busy_league_names_the_holder_and_opens_no_door(tmp_path):
    """The door opens once the server holds the league: a second ``serve`` of it, even on the same
    ``--listen``, says who holds it (exit 5) and never listens, so no bot is admitted to a league it does
    not hold."""
    path = served_league(tmp_path, ["far"])
    issue(path, "far")
    door = free_port()
    first = start_referee(
        "serve",
        path,
        "--http",
        f"127.0.0.1:{free_port()}",
        "--listen",
        f"127.0.0.1:{door}",
        log=tmp_path / "a.log",
    )
    try:
        wait_for(tmp_path / "a.log", "in plaintext")
        for listen in (door, free_port()):
            second = referee(
                "serve",
                path,
                "--http",
                f"127.0.0.1:{free_port()}",
                "--listen",
                f"127.0.0.1:{listen}",
                timeout=60,
            )
            assert second.returncode == 5, second.stderr
            assert "is playing this league and holds its results" in second.stderr
            assert "listening for remote entrants" not in second.stderr
    finally:
        assert interrupt(first) == 0


def test_a_revoked_or_removed_remote_entrant_is_disconnected_at_once(tmp_path):
    """A token revoked, or an entrant taken out of the league file, while its bot waits between matches:
    the server ends that connection when it notices the change (within a second or two), as
    ``referee token revoke`` promises, instead of when a match next looks for the entrant."""
    path = served_league(tmp_path, ["far", "near"])
    far, near = issue(path, "far"), issue(path, "near")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", log=log
    )
    bots: list[subprocess.Popen[bytes]] = []
    try:
        wait_for(log, "in plaintext")
        address = f"127.0.0.1:{door}"
        for name, token in (("far", far), ("near", near)):
            command = [PY, "-m", "sample_bots.random_bot"]
            bots.append(start_bot(command, remote_env(address, token, None), tmp_path / f"{name}.log"))
        until("every match stored", lambda: len(stored(http)) == 6, timeout=180)
        assert referee("token", "revoke", path, "near").returncode == 0
        until("near's bot told and gone", lambda: bots[1].poll() is not None, timeout=30)
        assert "its token was revoked" in (tmp_path / "near.log").read_text(errors="replace")
        assert bots[0].poll() is None  # far plays on
        path.write_text(path.read_text().replace("  - name: far\n    remote: true\n", ""), encoding="utf-8")
        until("far's bot told and gone", lambda: bots[0].poll() is not None, timeout=30)
        assert "no longer an entrant" in (tmp_path / "far.log").read_text(errors="replace")
    finally:
        assert interrupt(served) == 0
        for bot in bots:
            end(bot)
