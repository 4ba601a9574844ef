"""Entry by the author (issue #35; docs/REMOTE.md, "Entering by yourself"): the real ``referee serve
--entry`` process, invite codes from the real CLI, entries through the API (``POST /api/v1/entries``)
and the page (``/enter``, in headless Chromium), the token shown once, a Python SDK bot connecting with
it and playing; the newcomer taken into the league in play without a new pass (no build run again); and
the attacks (a replayed invite, an exhausted one, an expired one, a name taken twice at once, HTML in
every field, too many attempts), each refused with a clear status and nothing changed."""

from __future__ import annotations

import contextlib
import http.client
import json
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support import ROOT
from support.browser import browser, needs_chromium  # noqa: F401 (the fixture)
from support.cli import referee
from support.net import free_port
from support.remote import end, interrupt, remote_env, start_bot, start_referee, wait_for
from support.serve import stored, until

PY = sys.executable
LEAGUE = f"""\
# The arena: authors enter their own bots (this comment stays)
name: Entry League
seed: 6
players: 2
schedule: {{format: round-robin, rounds: 1, seating: single}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 2
database: results.sqlite
remote: {{wait: 1s}}
entrants:
  - name: heuristic    # the house bot
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
    build: echo built >> BUILDS
"""


@dataclass
class Arena:
    """A ``referee serve --entry`` of :data:`LEAGUE` in ``folder``, its web app on ``http``, its door on
    ``door`` (plaintext, loopback)."""

    folder: Path
    http: int
    door: int
    log: Path

    @property
    def league(self) -> Path:
        return self.folder / "league.yaml"

    @property
    def referee_log(self) -> Path:
        return self.folder / "results-logs" / "referee.log"

    def files(self) -> dict[str, bytes]:
        """What an entry may change: the league file, the token file and the invite file."""
        names = ("league.yaml", "results-tokens.json", "results-invites.json")
        return {name: (self.folder / name).read_bytes() for name in names if (self.folder / name).exists()}

    def invite(self, *options: str) -> str:
        result = referee("invite", "issue", self.league, *options)
        assert result.returncode == 0, result.stderr
        code = result.stdout.strip()
        assert code.startswith("pyi1_"), result.stdout
        return code

    def post(
        self,
        path: str,
        body: Any,
        source: str = "127.0.0.1",
        content_type: str = "application/json",
        origin: str | None = None,
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        """``POST path`` with ``body`` as JSON from the address ``source``: status, headers, answer."""
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.http, timeout=60, source_address=(source, 0)
        )
        headers = {"content-type": content_type}
        if origin is not None:
            headers["origin"] = origin
        try:
            connection.request("POST", path, body=json.dumps(body).encode(), headers=headers)
            answer = connection.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, json.loads(answer.read())
        finally:
            connection.close()

    def text(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http}{path}", timeout=30) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()


@contextlib.contextmanager
def arena(folder: Path, entry: str) -> Iterator[Arena]:
    """Serves :data:`LEAGUE` with ``--entry entry`` until the block ends (Ctrl-C, exit 0)."""
    (folder / "league.yaml").write_text(
        LEAGUE.replace("BUILDS", str(folder / "builds.txt")), encoding="utf-8"
    )
    http_port, door = free_port(), free_port()
    log = folder / "serve.log"
    served = start_referee(
        "serve", folder / "league.yaml", "--http", f"127.0.0.1:{http_port}",
        "--listen", f"127.0.0.1:{door}", "--entry", entry, log=log,
    )  # fmt: skip
    try:
        wait_for(log, "in plaintext")
        wait_for(log, "/enter")
        yield Arena(folder, http_port, door, log)
    finally:
        assert interrupt(served) == 0, log.read_text()


@pytest.fixture
def invite_arena(tmp_path: Path) -> Iterator[Arena]:
    with arena(tmp_path, "invite") as served:
        yield served


def test_an_author_enters_through_the_api_and_plays_without_the_league_starting_over(tmp_path):
    bot = None
    with arena(tmp_path, "open") as served:
        until("the house match stored", lambda: len(stored(served.http)) == 1)
        assert (tmp_path / "builds.txt").read_text().count("built") == 1
        status, headers, answer = served.post("/api/v1/entries", {"name": "alice-net"})
        assert status == 201, answer
        assert headers["cache-control"] == "no-store"
        token = answer["token"]
        assert token.startswith("pyr1_")
        assert answer["name"] == "alice-net"
        assert answer["address"] == f"127.0.0.1:{served.door}"
        assert answer["tls"] is False
        text = served.league.read_text()
        assert "  - name: alice-net\n    remote: true\n" in text
        assert "# The arena: authors enter their own bots (this comment stays)" in text
        assert "# the house bot" in text
        assert token not in (tmp_path / "results-tokens.json").read_text()
        (tmp_path / "alice.token").write_text(token + "\n")
        env = remote_env(f"127.0.0.1:{served.door}", tmp_path / "alice.token", None)
        bot = start_bot([PY, "-m", "sample_bots.random_bot"], env, tmp_path / "bot.log")
        until("alice-net's matches stored", lambda: len(stored(served.http)) == 3, timeout=120)
        matches = stored(served.http)
        assert all(m["status"] == "complete" and m["faults"] == [] for m in matches), matches
        assert sum("alice-net" in m["seats"] for m in matches) == 2
        # Taken in as the league played: the other entrants were neither built nor tried again.
        assert (tmp_path / "builds.txt").read_text().count("built") == 1
        assert "alice-net joined the league in play (3 matches scheduled)" in served.referee_log.read_text()
        # The token was shown once, in the answer to the entry: nowhere else.
        for path in ("/api/v1/entrants", "/api/v1/leaderboard", "/enter", "/", "/api/v1/matches"):
            assert token not in served.text(path)[1]
        rows = {row["name"]: row for row in json.loads(served.text("/api/v1/entrants")[1])["entrants"]}
        assert rows["alice-net"]["kind"] == "remote"
    assert bot is not None
    end(bot)
    for log in (tmp_path / "serve.log", tmp_path / "results-logs" / "referee.log"):
        assert token not in log.read_text()
    assert (
        "entry: alice-net entered from 127.0.0.1 by open entry"
        in (tmp_path / "results-logs" / "referee.log").read_text()
    )


def test_every_attack_on_the_entry_fails_with_a_clear_status_and_changes_nothing(invite_arena):
    served = invite_arena
    code = served.invite("--uses", "1")
    before = served.files()

    # HTML in every field (each attack from an address of its own: refusals count per address).
    for source, body, status in (
        ("127.0.0.2", {"name": "<script>alert(1)</script>", "invite": code}, 400),
        ("127.0.0.3", {"name": "mallory", "invite": '"><img src=x onerror=alert(1)>'}, 403),
        ("127.0.0.4", {"name": "<b>x</b>", "invite": "<i>y</i>"}, 400),
        ("127.0.0.5", {"name": "mallory", "invite": code, "extra": "<svg onload=alert(1)>"}, 400),
        ("127.0.0.6", {"name": "ma\u0142lory", "invite": code}, 400),  # a look-alike letter
        ("127.0.0.6", {"name": "Referee", "invite": code}, 400),
        ("127.0.0.6", ["not", "an", "object"], 400),
    ):
        got, _, answer = served.post("/api/v1/entries", body, source=source)
        assert got == status, (body, answer)
        assert "<" not in answer["error"], answer  # never repeated back
    got, _, answer = served.post(
        "/api/v1/entrants/%3Cscript%3Ealert(1)%3C%5Cscript%3E/token", {"token": "<b>"}, "127.0.0.7"
    )
    assert got == 400, answer
    got, _, answer = served.post("/api/v1/entrants/heuristic/token", {"token": "<b>"}, "127.0.0.7")
    assert got == 403, answer
    got, _, answer = served.post("/api/v1/entries", {"name": "x", "invite": code}, "127.0.0.8", "text/plain")
    assert got == 415, answer
    got, _, answer = served.post(
        "/api/v1/entries", {"name": "x", "invite": code}, "127.0.0.8", origin="http://evil.example"
    )
    assert got == 403, answer
    assert "another site" in answer["error"]
    assert served.files() == before

    # A name taken: by an entrant of the file, in any case.
    for name in ("heuristic", "HEURISTIC"):
        got, _, answer = served.post("/api/v1/entries", {"name": name, "invite": code}, "127.0.0.9")
        assert (got, answer.get("error")) == (409, "that name is taken: choose another"), answer
    assert served.files() == before

    # An unknown code, and an expired one.
    got, _, answer = served.post(
        "/api/v1/entries", {"name": "x1", "invite": "pyi1_" + "A" * 32}, "127.0.0.10"
    )
    assert (got, answer.get("error")) == (403, "unknown or revoked invite code"), answer
    expired = served.invite("--expires", "1s")
    before = served.files()
    time.sleep(1.2)
    got, _, answer = served.post("/api/v1/entries", {"name": "late", "invite": expired}, "127.0.0.10")
    assert (got, answer.get("error")) == (410, "this invite code has expired"), answer
    assert served.files() == before

    # The one use of the invite: spent once, then the same request replayed, then another name.
    got, _, answer = served.post("/api/v1/entries", {"name": "first", "invite": code}, "127.0.0.11")
    assert got == 201, answer
    after = served.files()
    got, _, answer = served.post("/api/v1/entries", {"name": "first", "invite": code}, "127.0.0.11")
    assert got == 409, answer
    got, _, answer = served.post("/api/v1/entries", {"name": "second", "invite": code}, "127.0.0.11")
    assert (got, answer.get("error")) == (410, "this invite code has been used as often as it may be"), answer
    assert served.files() == after
    assert served.league.read_text().count("name: first") == 1
    assert "second" not in served.league.read_text()

    # One name asked for twice at once, each with a code of its own: one entrant, one use spent.
    codes = [served.invite(), served.invite()]
    before = served.files()
    answers: list[tuple[int, dict[str, Any]]] = []

    def enter(invite: str, source: str) -> None:
        got, _, answer = served.post("/api/v1/entries", {"name": "twin", "invite": invite}, source)
        answers.append((got, answer))

    threads = [threading.Thread(target=enter, args=(c, f"127.0.0.{12 + n}")) for n, c in enumerate(codes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got for got, _ in answers) == [201, 409], answers
    assert served.league.read_text().count("name: twin") == 1
    listed = referee("invite", "list", served.league).stdout
    assert listed.count("0 of 1 entries left") == 2  # the code spent, and the first one's
    assert listed.count("1 of 1 entries left") == 1  # the losing twin's code is still good

    # Too many refusals from one address: shut out, even with a good code, for the rest of the minute.
    good = served.invite()
    for n in range(5):
        got, _, _ = served.post(
            "/api/v1/entries", {"name": f"g{n}", "invite": "pyi1_" + "B" * 32}, "127.0.0.20"
        )
        assert got == 403
    before = served.files()
    got, headers, answer = served.post("/api/v1/entries", {"name": "g9", "invite": good}, "127.0.0.20")
    assert got == 429, answer
    assert "try again in" in answer["error"]
    assert 1 <= int(headers["retry-after"]) <= 60
    assert served.files() == before
    got, _, answer = served.post("/api/v1/entries", {"name": "g9", "invite": good}, "127.0.0.21")
    assert got == 201, answer

    # The page escapes nothing it was sent (it shows nothing it was sent), and no token is in it.
    status, page = served.text("/enter")
    assert status == 200
    assert "alert(1)" not in page
    assert "pyr1_" not in page
    log = served.referee_log.read_text()
    assert "pyr1_" not in log
    assert code not in log
    assert good not in log
    assert "entry: refused an entry from 127.0.0.20: unknown or revoked invite code" in log


def test_an_entrant_rotates_its_own_token_with_the_current_one(invite_arena):
    served = invite_arena
    got, _, answer = served.post("/api/v1/entries", {"name": "rot", "invite": served.invite()})
    assert got == 201, answer
    old = answer["token"]
    before = served.files()
    got, _, answer = served.post("/api/v1/entrants/rot/token", {"token": old[:-1] + "x"}, "127.0.0.30")
    assert (got, answer.get("error")) == (403, "that is not this entrant's current token"), answer
    got, _, answer = served.post("/api/v1/entrants/heuristic/token", {"token": old}, "127.0.0.30")
    assert got == 403, answer  # rot's token is not heuristic's
    assert served.files() == before
    got, headers, answer = served.post("/api/v1/entrants/rot/token", {"token": old})
    assert (got, headers["cache-control"]) == (200, "no-store"), answer
    new = answer["token"]
    assert new != old
    assert new.startswith("pyr1_")
    got, _, answer = served.post("/api/v1/entrants/rot/token", {"token": old}, "127.0.0.31")
    assert got == 403, answer  # the old one is dead
    tokens = (served.folder / "results-tokens.json").read_text()
    assert old not in tokens
    assert new not in tokens
    # The new token connects: the entrant shows as connected.
    (served.folder / "rot.token").write_text(new + "\n")
    env = remote_env(f"127.0.0.1:{served.door}", served.folder / "rot.token", None)
    bot = start_bot([PY, "-m", "sample_bots.random_bot"], env, served.folder / "bot.log")
    try:
        until("rot plays", lambda: any("rot" in m["seats"] for m in stored(served.http)), timeout=120)
    finally:
        end(bot)
    assert "rotated its token" in served.referee_log.read_text()


def test_entry_is_closed_unless_asked_for_and_needs_a_door(tmp_path):
    path = tmp_path / "league.yaml"
    path.write_text(LEAGUE.replace("BUILDS", str(tmp_path / "builds.txt")), encoding="utf-8")
    for options, text in (
        (
            ("--entry", "invite"),
            "--entry: the entrants authors enter play from their machines: give --listen",
        ),
        (
            ("--entry", "open", "--http", "0.0.0.0:8000", "--listen", "127.0.0.1:7443"),
            "serves plain HTTP beyond this machine",
        ),
    ):
        result = referee(
            "serve",
            path,
            *(("--http", f"127.0.0.1:{free_port()}") if "--http" not in options else ()),
            *options,
            timeout=60,
        )
        assert result.returncode != 0
        assert text in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    log = tmp_path / "serve.log"
    http_port = free_port()
    served = start_referee("serve", path, "--http", f"127.0.0.1:{http_port}", log=log)
    try:
        until(
            "the server answers",
            lambda: bool(urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/v1/live")),
        )
        arena = Arena(tmp_path, http_port, 0, log)
        before = arena.files()
        status, page = arena.text("/enter")
        assert status == 403
        assert "Entry is closed on this server" in page
        got, _, answer = arena.post("/api/v1/entries", {"name": "alice"})
        assert got == 403, answer
        assert answer["error"].startswith("entry is closed on this server")
        assert arena.files() == before
    finally:
        assert interrupt(served) == 0


@needs_chromium
def test_an_author_enters_on_the_page_sees_the_token_once_and_plays(invite_arena, browser):  # noqa: F811
    served = invite_arena
    code = served.invite()
    browser.get(f"http://127.0.0.1:{served.http}/enter")
    browser.find_element(By.ID, "name").send_keys("bob-bot")
    browser.find_element(By.ID, "invite").send_keys(code)
    browser.find_element(By.ID, "go").click()
    WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "token").text.startswith("pyr1_"))
    token = browser.find_element(By.ID, "token").text
    assert browser.find_element(By.ID, "entered-name").text == "bob-bot"
    assert f"PYRAMID_ADDRESS=127.0.0.1:{served.door}" in browser.find_element(By.ID, "how").text
    assert not browser.find_element(By.ID, "tls-line").is_displayed()  # the door speaks plaintext
    # Once: the page's source never holds it, and a reload forgets it.
    assert token not in served.text("/enter")[1]
    browser.refresh()
    assert token not in browser.page_source
    # A second entry with the same code is told why, on the page.
    browser.find_element(By.ID, "name").send_keys("bob-again")
    browser.find_element(By.ID, "invite").send_keys(code)
    browser.find_element(By.ID, "go").click()
    WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "enter-problem").text)
    assert browser.find_element(By.ID, "enter-problem").text == (
        "this invite code has been used as often as it may be"
    )
    (served.folder / "bob.token").write_text(token + "\n")
    env = remote_env(f"127.0.0.1:{served.door}", served.folder / "bob.token", None)
    bot = start_bot([PY, "-m", "sample_bots.random_bot"], env, served.folder / "bot.log")
    try:
        until(
            "bob-bot's matches stored",
            lambda: sum("bob-bot" in m["seats"] for m in stored(served.http)) == 2,
            120,
        )
        browser.get(f"http://127.0.0.1:{served.http}/")
        WebDriverWait(browser, 30).until(lambda b: "bob-bot" in b.find_element(By.TAG_NAME, "main").text)
    finally:
        end(bot)
