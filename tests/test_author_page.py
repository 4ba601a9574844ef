"""The author's own page (docs/SERVER.md, "Your own page"): a remote entrant's author reads, with its
token alone, its bot's debug lines, faults, connections, versions and practice matches, through
``/api/v1/me`` and the ``/me`` page in a real browser; another author's token shows that author's bot
only, and no token shows nothing. The real server with its door, SDK bots connecting as their authors'
would (one writing debug lines, tests/bots/debugger.py)."""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import ROOT
from support.browser import browser, needs_chromium  # noqa: F401 (the fixture)
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

MARKER = "dbg-7f3a9c-only-for-the-author"  # as tests/bots/debugger.py writes it


def me(port: int, token: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/me", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@needs_chromium
def test_an_author_reads_their_own_bot_and_nobody_elses(tmp_path, browser):  # noqa: F811
    path = served_league(tmp_path, ["far", "near"])
    far_file, near_file = issue(path, "far"), issue(path, "near")
    far, near = far_file.read_text().strip(), near_file.read_text().strip()
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", log=log
    )  # fmt: skip
    address = f"127.0.0.1:{door}"
    bots = []
    try:
        wait_for(log, "in plaintext")
        bots.append(
            start_bot(
                [sys.executable, str(ROOT / "tests/bots/debugger.py"), "lines"],
                remote_env(address, far_file, None),
                tmp_path / "far.log",
            )
        )
        bots.append(
            start_bot(
                [sys.executable, "-m", "sample_bots.random_bot"],
                remote_env(address, near_file, None),
                tmp_path / "near.log",
            )
        )
        until("the league stored", lambda: len(stored(http)) == 6)
        assert me(http, None)[0] == 401
        assert me(http, "pyr1_" + "y" * 40)[0] == 401
        status, mine = me(http, far)
        assert status == 200, mine
        assert mine["name"] == "far"
        assert mine["connected"] is True
        assert mine["presence"][-1][1] is True
        assert "round trip" in mine["connection"]
        assert mine["versions"][0]["matches"] == 3
        assert mine["versions"][0]["mu"] is not None
        assert mine["debug"], mine  # every table complete: shown
        assert all(MARKER in line["text"] for line in mine["debug"] if line["fate"] == "kept")
        assert mine["debug_held_back"] == 0
        status, theirs = me(http, near)
        assert status == 200
        assert theirs["name"] == "near"
        assert theirs["debug"] == []  # near's bot writes none, and far's are not near's to read
        assert MARKER not in json.dumps(theirs)
        # The page: the token pasted, never in the address; the lines set as text.
        browser.get(f"http://127.0.0.1:{http}/me")
        browser.find_element(By.ID, "token").send_keys(far)
        browser.find_element(By.CSS_SELECTOR, "#sign-in button").click()
        deadline = time.monotonic() + 30
        while not browser.find_elements(By.CSS_SELECTOR, "#me-debug tbody tr"):
            assert time.monotonic() < deadline, browser.find_element(By.TAG_NAME, "main").text
            time.sleep(0.1)
        assert browser.find_element(By.ID, "me-name").text == "far"
        assert MARKER in browser.find_element(By.ID, "me-debug").text
        assert not browser.find_elements(By.CSS_SELECTOR, "#me-debug b")  # its HTML stayed text
        assert far not in browser.current_url
        assert far not in browser.page_source  # the field emptied once read
        assert "connected now" in browser.find_element(By.ID, "me-status").text
        # A practice match from the page: three players, a league entrant and a sample bot.
        Select(browser.find_element(By.ID, "practice-size")).select_by_value("3")
        picks = browser.find_elements(By.CSS_SELECTOR, ".practice-opponent")
        assert len(picks) == 2
        Select(picks[0]).select_by_value("random")
        Select(picks[1]).select_by_value("sample:heuristic")
        browser.find_element(By.CSS_SELECTOR, "#practice button").click()
        deadline = time.monotonic() + 90
        while not browser.find_elements(By.CSS_SELECTOR, "#me-practice a"):
            assert time.monotonic() < deadline, browser.find_element(By.ID, "practice-state").text
            time.sleep(0.2)
        assert browser.find_element(By.ID, "practice-state").text.endswith(": over")
        replay = browser.find_element(By.CSS_SELECTOR, "#me-practice a")
        assert replay.text == "far · random · heuristic"
        replay.click()
        assert "practice" in browser.current_url
        assert "heuristic" in browser.find_element(By.TAG_NAME, "body").text
        assert len(stored(http)) == 6  # unrated, apart: the league's matches are as they were
        # MARKER is on no public page or API answer.
        for public in ("/", "/api/v1/leaderboard", "/api/v1/entrants/far", "/api/v1/matches"):
            with urllib.request.urlopen(f"http://127.0.0.1:{http}{public}", timeout=30) as answer:
                assert MARKER not in answer.read().decode(), public
        assert get(http, "/api/v1/entrants/far")["name"] == "far"
    finally:
        code = interrupt(served)
        for bot in bots:
            end(bot)
    output = log.read_text()
    assert code == 0, output
    assert far not in output
    assert near not in output
