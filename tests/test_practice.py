"""Practice on demand (docs/SERVER.md, "Practice matches"): a remote entrant's author asks the real
server for a match now with the entrant's token, against a league entrant and a sample bot at a table
size the league does not play; it is played with the author's connected SDK bot, unrated, stored apart,
replayable by its key; the quota, a wrong token and bad requests are refused with a clear status."""

from __future__ import annotations

import json
import sqlite3
import sys
import urllib.error
import urllib.request
from typing import Any

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


def ask(port: int, body: Any, token: str | None) -> tuple[int, dict[str, Any]]:
    """``POST /api/v1/practice``: (status, JSON answer)."""
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/practice", json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def status_of(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_an_author_asks_for_a_practice_match_plays_it_with_their_bot_and_replays_it(tmp_path):
    path = served_league(tmp_path, ["far"])
    token_file = issue(path, "far")
    token = token_file.read_text().strip()
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", log=log
    )  # fmt: skip
    bot = None
    try:
        wait_for(log, "in plaintext")
        # Refused before the bot even connects: no token, a wrong one, a token in the body.
        assert ask(http, {"opponents": ["random"]}, None)[0] == 401
        status, answer = ask(http, {"opponents": ["random"]}, "pyr1_" + "x" * 40)
        assert status == 401
        assert "pyr1_" not in json.dumps(answer)
        bot = start_bot(
            [sys.executable, "-m", "sample_bots.random_bot"],
            remote_env(f"127.0.0.1:{door}", token_file, None),
            tmp_path / "bot.log",
        )
        until("the league stored", lambda: len(stored(http)) == 3)
        samples = "sample:heuristic, sample:random"
        error = {"error": f"no entrant 'nobody' in Served Remote (or a sample bot: {samples})"}
        assert ask(http, {"opponents": ["nobody"]}, token) == (400, error)
        status, answer = ask(http, {"opponents": ["random"] * 4}, token)  # five players
        assert status == 400, answer
        assert "5 players" in answer["error"]
        assert ask(http, {"opponents": "random"}, token)[0] == 400
        # Three players, where the league plays two: an entrant of the league and a sample bot.
        status, asked = ask(http, {"opponents": ["random", "sample:heuristic"]}, token)
        assert status == 202, asked
        assert asked["seats"] == ["far", "random", "heuristic"]
        assert asked["seed"] is None  # not before it is over
        status, answer = ask(http, {"opponents": ["random"]}, token)
        assert status == 429, answer  # one at a time
        practice = f"/api/v1/practice/{asked['key']}"
        until("the practice match over", lambda: get(http, practice)["state"] in ("over", "failed"))
        over = get(http, practice)
        assert over["state"] == "over", over
        assert len(over["totals"]) == 3
        assert int(over["seed"]) > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{http}{over['replay']}", timeout=30) as page:
            html = page.read().decode()
        assert all(name in html for name in ("far", "random", "heuristic"))
        # Unrated, stored apart: the league's matches, leaderboard and export are unchanged.
        assert len(stored(http)) == 3
        board = {row["entrant"]: row["matches"] for row in get(http, "/api/v1/leaderboard")["standings"]}
        assert board["far"] == 2
        assert status_of(http, "/practice/not-a-key") == 404
        assert status_of(http, "/api/v1/practice/not-a-key") == 404
    finally:
        code = interrupt(served)
        if bot is not None:
            end(bot)
    output = log.read_text()
    assert code == 0, output
    assert token not in output
    with sqlite3.connect(tmp_path / "results-practice.sqlite") as db:
        assert db.execute("SELECT entrant, line FROM practice_matches").fetchall()[0][0] == "far"
    exported = referee("export", path).stdout
    assert "practice" not in exported
    assert len(exported.splitlines()) == 3
