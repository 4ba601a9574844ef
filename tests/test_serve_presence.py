"""The served pages mark each remote entrant's bot connected or away as it connects and goes, without a
reload (docs/SERVER.md, "Events": ``connection``): the real server with its door, a Python SDK bot
connecting as its author would, the pages in a real browser."""

from __future__ import annotations

import sys
import time

from selenium.webdriver.common.by import By

from support.browser import artifacts, browser, needs_chromium  # noqa: F401 (the fixture)
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

pytestmark = needs_chromium


def badges(driver) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The presence badge beside each remote entrant's name on the page shown, by name."""
    return dict(
        driver.execute_script(
            "return [...document.querySelectorAll('.badge.remote[data-entrant]')]"
            ".map((b) => [b.dataset.entrant, b.nextElementSibling?.classList.contains('presence')"
            " ? b.nextElementSibling.textContent : '']);"
        )
    )


def until_shown(driver, name: str, text: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 60
    while badges(driver).get(name) != text:
        assert time.monotonic() < deadline, f"{name} never shown {text!r}: {badges(driver)}"
        time.sleep(0.1)


def test_a_remote_entrant_is_marked_away_then_connected_then_away_on_the_live_pages(tmp_path, browser):  # noqa: F811
    path = served_league(tmp_path, ["far", "near"])
    token = issue(path, "far")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", log=log
    )  # fmt: skip
    bot = None
    try:
        wait_for(log, "in plaintext")
        until("the local match stored", lambda: len(stored(http)) == 1)
        browser.get(f"http://127.0.0.1:{http}/")
        browser.execute_script("window.sameDocument = 'yes'")
        until_shown(browser, "far", "away")
        assert badges(browser)["near"] == "away"  # no token issued: it sits out
        bot = start_bot(
            [sys.executable, "-m", "sample_bots.random_bot"],
            remote_env(f"127.0.0.1:{door}", token, None),
            tmp_path / "bot.log",
        )
        until_shown(browser, "far", "connected")
        assert {row["name"]: row["connected"] for row in get(http, "/api/v1/entrants")["entrants"]}[
            "far"
        ] is True
        browser.save_screenshot(str(artifacts() / "serve-presence-connected.png"))
        until("far's matches stored", lambda: len(stored(http)) == 3)  # the pages refresh: still marked
        time.sleep(1.5)
        until_shown(browser, "far", "connected")
        end(bot)
        bot = None
        until_shown(browser, "far", "away")
        assert badges(browser)["near"] == "away"
        assert browser.execute_script("return window.sameDocument") == "yes"  # no reload did it
        browser.get(f"http://127.0.0.1:{http}/entrant-far.html")
        deadline = time.monotonic() + 30
        while not browser.find_elements(By.CSS_SELECTOR, "main p.status .badge.presence.away"):
            assert time.monotonic() < deadline, browser.find_element(By.TAG_NAME, "main").text
            time.sleep(0.1)
    finally:
        code = interrupt(served)
        if bot is not None:
            end(bot)
    assert code == 0, log.read_text()
