"""``referee serve`` end to end: a real server process playing a real league (a bot process over gRPC
among in-process bots), read by a real headless Chromium and by plain HTTP, checked against
``referee export`` and the stored records."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from bots.slow_talker import MESSAGE
from support import ROOT
from support.browser import artifacts, fits_a_phone, needs_chromium, phone
from support.cli import export, referee
from support.leagues import MODULE_BOTS
from support.processes import bot_processes, stop_bot_processes
from support.serve import Served, serve, wait_for

HOSTILE = "<script>alert(1)</script>"

LEAGUE = f"""\
name: Live <League>
seed: 11
players: 3
schedule: {{format: round-robin, rounds: 3, seating: single}}
rules: {{talk: open}}
time_control: {{per_action: 5s, bank: 60s}}
concurrency: 2
database: results.sqlite
entrants:
  - name: slow
    command: python tests/bots/slow_talker.py 0.06
    cwd: {ROOT}
{MODULE_BOTS}"""

DUEL = f"""\
name: Duel
seed: 3
players: 2
schedule: {{format: round-robin, rounds: 1, seating: single}}
rules: {{talk: open}}
database: results.sqlite
entrants:
{MODULE_BOTS}"""


@pytest.fixture(autouse=True)
def no_bot_left_behind():
    """Replaces conftest's check per test: the servers of this module play on across its tests, their
    bots running between them; :func:`no_bot_left_behind_the_module` checks the module as a whole."""
    return


@pytest.fixture(scope="module", autouse=True)
def no_bot_left_behind_the_module():
    assert bot_processes() == [], "bot processes were running before the module"
    yield
    deadline = time.monotonic() + 10  # the last bots stop as their server does
    while bot_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = bot_processes()
    stop_bot_processes(left)  # the module fails for them; the modules after it start clean
    assert left == [], "a bot process outlived its server"


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("live"), LEAGUE)


@pytest.fixture(scope="module")
def duel(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("duel"), DUEL)


@dataclass(frozen=True)
class IndexWindow:
    """The index page, opened in a window of its own (``window``) beside the tests' (``main``) when
    ``done`` matches were over, and what its ``main`` element said then."""

    window: str
    main: str
    text: str
    done: int


TV_LOG = """
const viewer = document.getElementById('viewer');
const status = document.getElementById('live-status');
window.tvLog = [['watch', viewer.dataset.match || '', performance.now()]];
new MutationObserver(() => tvLog.push(['watch', viewer.dataset.match, performance.now()]))
  .observe(viewer, {attributes: true, attributeFilter: ['data-match']});
const over = () => status.dataset.over && tvLog.push(['over', viewer.dataset.match, performance.now()]);
new MutationObserver(over).observe(status, {attributes: true, attributeFilter: ['data-over']});
"""
"""Installed by the test in the ``/live`` window: a log of each match the page watches and of when it
showed that match's end (the page's script is not changed for the test)."""


@pytest.fixture(scope="module")
def tv_window(league, browser) -> tuple[str, str]:
    """``/live`` opened in a window of its own while the league's first matches are in play, with
    :data:`TV_LOG` logging what it watches: its handle and the tests' window's."""
    main = browser.current_window_handle
    browser.switch_to.new_window("window")
    browser.get(league.url + "/live")
    browser.execute_script(TV_LOG)
    handle = browser.current_window_handle
    browser.switch_to.window(main)
    return handle, main


@pytest.fixture(scope="module")
def index_window(league, browser) -> IndexWindow:
    """Opened by the first test that watches the league, so that a match ends while it is open however
    fast the league runs (opened by the leaderboard's test itself, it could find the league over)."""
    main = browser.current_window_handle
    browser.switch_to.new_window("window")
    browser.get(league.url + "/")
    browser.execute_script("window.sameDocument = 'yes'")
    text = browser.find_element(By.TAG_NAME, "main").text
    done = len(league.get("/api/v1/matches")["matches"])  # after the text: a match over in between counts
    index = IndexWindow(browser.current_window_handle, main, text, done)
    browser.switch_to.window(main)
    return index


def no_alert(driver) -> None:
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018


SNAPSHOT = """
const root = document.getElementById('viewer');
const bySeat = (selector) => [...root.querySelectorAll(selector)]
  .sort((a, b) => a.dataset.seat - b.dataset.seat);
return {
  match: root.dataset.match || '',
  deal: Number(root.dataset.deal || 0),
  trick: Number(root.dataset.trick || 0),
  played: Number(root.dataset.played || 0),
  phase: root.dataset.phase || '',
  table: bySeat('.played').map((p) => [...p.querySelectorAll('.card')].map((c) => c.dataset.card)),
  backs: bySeat('.seat').map((s) => s.querySelectorAll('.hand .card.back').length),
  faces: bySeat('.seat').map((s) => s.querySelectorAll('.hand .card:not(.back)').length),
  talk: bySeat('.seat').map((s) => [...s.querySelectorAll('.said q')].map((q) => q.textContent)),
  clocks: bySeat('.seat').map((s) => (s.querySelector('.clock:not([hidden])') || {}).textContent || ''),
  announce: (root.querySelector('.announce') || {}).textContent || '',
  viewer: root.innerHTML,
  page: document.documentElement.outerHTML,
};
"""
"""One moment of the live view, read at once (the page's script cannot run in between): the trick on the
table by seat, each seat's cards face down (``backs``) and face up (``faces``), the talk at each seat, the
clocks, and the whole page's markup."""


def watch(league, browser, match_id: str) -> list[dict]:
    """Snapshots of the live page of ``match_id`` until the match is over, each one taken when the table
    was drawn."""
    assert "hand" not in json.dumps(league.get(f"/api/v1/live/{match_id}"))
    browser.get(f"{league.url}/live/{urllib.parse.quote(match_id)}")
    snapshots = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        over = browser.find_element(By.ID, "live-status").get_attribute("data-over")
        seen = browser.execute_script(SNAPSHOT)  # after: once over, the table as the match ended
        if seen["phase"]:
            snapshots.append(seen)
        if over:
            break
        time.sleep(0.05)
    return snapshots


def expected_table(deal: dict, players: int, trick: int, played: int) -> tuple[list[list[str]], list[int]]:
    """What the record of ``deal`` says the table holds ``played`` cards into its trick ``trick`` (from 1;
    0 before the first card): the cards on the table by seat, and how many each seat still holds."""
    table: list[list[str]] = [[] for _ in range(players)]
    left = [6] * players
    for number, done in enumerate(deal["tricks"][:trick], start=1):
        cards = done["cards"] if number < trick else done["cards"][:played]
        for position, code in enumerate(cards):
            seat = (done["leader"] + position) % players
            left[seat] -= 1
            if number == trick:
                table[seat].append(code)
    return table, left


def stored_match(league, match_id: str) -> dict | None:
    """The stored match as the API gives it, or ``None`` while it is in play."""
    try:
        return league.get("/api/v1/matches/" + urllib.parse.quote(match_id, safe=""))
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def follows_the_record(seen: dict, line: dict) -> bool:
    """Whether a snapshot of the live view is a moment of the match whose export line is ``line``."""
    deal = line["deals"][seen["deal"] - 1]
    table, left = expected_table(deal, line["players"], seen["trick"], seen["played"])
    return seen["table"] == table and seen["backs"] == left


@needs_chromium
@pytest.mark.usefixtures("tv_window")
def test_at_a_phones_width_the_live_view_fits_and_now_playing_switches_between_matches(league, browser):
    """At a true 420 px viewport, the live view of a match in play does not scroll sideways and each
    seat's cards face down take one row; "now playing" lists the two matches in play, and a click on the
    other one switches the same page to it (no reload; the address follows, and Back returns): from then
    on the table is that match's, moment by moment as its record says. ``/live`` shows a match in play.
    Runs first in the module, while both matches of the league's first round are in play."""

    def two_in_play() -> list[dict] | None:
        in_play = league.get("/api/v1/live")["in_play"]
        return in_play if len(in_play) >= 2 else None

    in_play = wait_for(two_in_play, timeout=120, every=0.05)
    first, second = (match["match_id"] for match in in_play[:2])
    with phone(browser):
        browser.get(f"{league.url}/live/{urllib.parse.quote(first, safe='')}")
        browser.execute_script("window.sameDocument = 'yes'")

        def a_full_hand() -> dict | None:  # the layout at a moment a seat holds all six cards face down
            found = fits_a_phone(browser, "/live/" + first)
            if not found["hands"]:
                return None  # not drawn yet
            assert len(found["hands"]) == 3, found
            assert all(rows == 1 for cards, rows in found["hands"] if cards), found  # each on one row
            return found if any(cards == 6 for cards, _ in found["hands"]) else None

        wait_for(a_full_hand, timeout=60, every=0.02)
        browser.save_screenshot(str(artifacts() / "serve-phone-live-in-play.png"))
        other = f'#now-playing a[data-match="{second}"]'
        link = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, other), timeout=60)
        current = browser.find_element(By.CSS_SELECTOR, "#now-playing a[aria-current]")
        assert current.get_attribute("data-match") == first
        link[0].click()
        wait_for(lambda: (seen := browser.execute_script(SNAPSHOT))["match"] == second and seen["phase"], 60)
        assert browser.current_url == f"{league.url}/live/{urllib.parse.quote(second, safe='')}"
        assert browser.find_element(By.ID, "live-status").get_attribute("data-match") == second
        current = browser.find_element(By.CSS_SELECTOR, "#now-playing a[aria-current]")
        assert current.get_attribute("data-match") == second
        snapshots = []
        for _ in range(20):
            snapshots.append(browser.execute_script(SNAPSHOT))
            time.sleep(0.05)
        browser.save_screenshot(str(artifacts() / "serve-phone-live-switched.png"))
        fits_a_phone(browser, "/live/" + second)
        browser.back()
        wait_for(lambda: browser.execute_script(SNAPSHOT)["match"] == first, timeout=30)
        assert browser.execute_script("return window.sameDocument") == "yes"  # the same page throughout
    assert all(seen["match"] == second for seen in snapshots)
    browser.get(league.url + "/live")  # no match named: it shows one in play, and stays at /live
    shown = wait_for(
        lambda: (seen := browser.execute_script(SNAPSHOT))["phase"] and seen["match"], timeout=60
    )
    assert shown in {match["match_id"] for match in in_play} | {
        match["match_id"] for match in league.get("/api/v1/live")["in_play"]
    }
    assert browser.current_url == league.url + "/live"
    line = wait_for(lambda: stored_match(league, second), timeout=300, every=0.5)
    assert all(follows_the_record(seen, line) for seen in snapshots if seen["phase"]), snapshots[:2]


@needs_chromium
@pytest.mark.usefixtures("index_window")
def test_a_match_in_play_is_watched_live_in_the_viewer_and_shows_no_hand(league, browser):
    """The live page is the report's viewer fed by the event stream: it follows the match in play card by
    card, each moment exactly as the record says it was (the trick in progress by seat, each seat's
    cards left drawn face down), and every card it ever holds was played in that deal by then: never a
    card of a hand still held, nor one of the six set aside. Each seat has a clock, the seat to play
    counting down. The talk shows at the seat that said it, as text: it comes in the first trick of odd
    deals, so a page opened late in a match (a loaded machine) may miss it, and up to three matches are
    watched until it shows."""
    watched: dict[str, list[dict]] = {}
    talk: list[dict] = []
    while not talk and len(watched) < 3:
        in_play = wait_for(
            lambda: [m for m in league.get("/api/v1/live")["in_play"] if m["match_id"] not in watched],
            timeout=120,
            every=0.05,
        )
        match_id = in_play[0]["match_id"]
        snapshots = watched[match_id] = watch(league, browser, match_id)
        talk = [s for s in snapshots if "alert(1)" in s["viewer"]]
        browser.save_screenshot(str(artifacts() / "serve-live-match.png"))
        assert len({(s["deal"], s["trick"], s["played"]) for s in snapshots}) >= 3, "the page did not follow"
    no_alert(browser)
    exported = referee("export", "league.yaml", cwd=league.folder, check=True).stdout.splitlines()
    for match_id, snapshots in watched.items():
        line = json.loads(next(x for x in exported if match_id in x))
        players = line["players"]
        deals = {deal["number"]: deal for deal in line["deals"]}
        for seen in snapshots:
            assert seen["match"] == match_id
            deal = deals[seen["deal"]]
            table, left = expected_table(deal, players, seen["trick"], seen["played"])
            moment = f"{match_id} deal {seen['deal']}, trick {seen['trick']}, card {seen['played']}"
            assert seen["table"] == table, moment
            assert seen["backs"] == left, moment
            assert seen["faces"] == [0] * players, moment  # no hand face up, ever
            shown = set(re.findall(r'data-card="(\w\w)"', seen["page"]))
            assert shown == {code for cards in table for code in cards}, moment  # the trick's, no other
            dealt = {card for hand in deal["hands"] for card in hand}
            set_aside = {f"{r}{s}" for r in "9TJQKA" for s in "SHDC"} - dealt
            assert not shown & set_aside
            declarer = line["seats"][deal["declarer"]]
            if seen["phase"] == "play":
                assert seen["announce"].startswith(f"{declarer} declares {deal['declared']}, trump"), moment
            if seen["phase"] in ("deal-over", "match-over"):  # what the declarer scored
                assert seen["announce"].endswith(f"took {deal['taken']}: {deal['points']} points"), moment
        assert snapshots[-1]["phase"] == "match-over"  # the last event before the match's end
        clocked = [s["clocks"] for s in snapshots if s["phase"] == "play"]
        assert any(
            all(re.fullmatch(r"bank \d+(:\d\d)?( s)?|\d+(:\d\d)?( s)? to play", c) for c in clocks)
            and sum("to play" in c for c in clocks) == 1
            for clocks in clocked
        ), clocked[-3:]
    assert talk, "the talk of the match was not shown"
    slow = next(json.loads(x) for x in exported if talk[0]["match"] in x)["seats"].index("slow")
    assert talk[0]["talk"][slow] == [MESSAGE]  # at the seat that said it, as text
    assert all(not said for seat, said in enumerate(talk[0]["talk"]) if seat != slow)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in talk[0]["viewer"]  # as text, never as markup
    assert "<b>bold</b>" not in talk[0]["viewer"]
    assert "<img" not in talk[0]["viewer"]


@needs_chromium
def test_live_without_a_match_moves_on_when_the_match_it_shows_ends(league, browser, tv_window):
    """``/live``, opened while the first two matches were in play, shows one of them and stays on it while
    it plays; when it ends, another match is in play (the other of the two, or the third, started once
    one of them ended), and the page moves on to it by itself, in the same document."""
    tv, main = tv_window
    browser.switch_to.window(tv)
    try:

        def moved() -> list | None:
            log = browser.execute_script("return window.tvLog")  # a reload would have lost it
            watched = [entry for entry in log if entry[0] == "watch" and entry[1]]
            return log if len({entry[1] for entry in watched}) >= 2 else None

        log = wait_for(moved, timeout=300, every=0.5)
        watched = [(match, at) for kind, match, at in log if kind == "watch" and match]
        first, since = watched[0]
        moved_at = next(at for match, at in watched if match != first)
        ended = next(at for kind, match, at in log if kind == "over" and match == first)
        assert since < ended <= moved_at < ended + 15_000, log  # not before its match ended; soon after
        assert stored_match(league, first) is not None  # it did end
        browser.save_screenshot(str(artifacts() / "serve-live-tv.png"))
        assert browser.current_url == league.url + "/live"
    finally:
        browser.switch_to.window(main)


@needs_chromium
def test_the_leaderboard_changes_without_a_reload_when_a_match_ends(league, browser, index_window):
    assert index_window.done < 3, "the league was over before the index opened"
    browser.switch_to.window(index_window.window)
    try:
        wait_for(lambda: browser.execute_script("return document.body.dataset.refreshed"), timeout=300)
        wait_for(lambda: browser.find_element(By.TAG_NAME, "main").text != index_window.text, timeout=60)
        assert browser.execute_script("return window.sameDocument") == "yes"  # the same page, not reloaded
        browser.save_screenshot(str(artifacts() / "serve-index.png"))
        assert "Live &lt;League&gt;" in browser.page_source
    finally:
        browser.switch_to.window(index_window.main)


def test_the_api_answers_as_the_export(league):
    wait_for(lambda: len(league.get("/api/v1/matches")["matches"]) == 3, timeout=600, every=0.5)
    exported = export("league.yaml", cwd=league.folder)
    listed = league.get("/api/v1/matches")
    assert [m["match_id"] for m in listed["matches"]] == [m["match_id"] for m in exported]
    for match in exported:
        assert league.get("/api/v1/matches/" + urllib.request.quote(match["match_id"])) == match
        assert {k: v for k, v in match.items() if k != "deals"} in listed["matches"]
    board = json.loads(
        referee("leaderboard", "league.yaml", "--format", "json", cwd=league.folder, check=True).stdout
    )
    assert league.get("/api/v1/leaderboard")["standings"] == board
    for row in board:  # the rank confidence, a v1 addition (docs/SERVER.md)
        assert len(row["rank_probabilities"]) == len(board)
        assert row["p_rank"] == row["rank_probabilities"][row["rank"] - 1]
    names = [e["name"] for e in league.get("/api/v1/entrants")["entrants"]]
    assert names == ["slow", "heuristic", "random"]


def test_the_list_of_matches_pages_by_cursor(league):
    """``/api/v1/matches?after=ID&limit=N``: pages in schedule order that add up to the whole list, the
    last one's ``next`` null; a cursor that names no stored match and a limit that is no count are
    refused with 400 and one line."""
    wait_for(lambda: len(league.get("/api/v1/matches")["matches"]) == 3, timeout=600, every=0.5)
    whole = league.get("/api/v1/matches")
    assert whole["next"] is None
    pages, after = [], None
    while True:
        query = "?limit=1" + ("" if after is None else "&after=" + urllib.parse.quote(after, safe=""))
        page = league.get("/api/v1/matches" + query)
        pages.append(page["matches"])
        after = page["next"]
        if after is None:
            break
        assert after == page["matches"][-1]["match_id"]
    assert [len(page) for page in pages] == [1, 1, 1]
    assert [match for page in pages for match in page] == whole["matches"]
    two = league.get("/api/v1/matches?limit=2&after=" + urllib.parse.quote(pages[0][0]["match_id"], safe=""))
    assert two["matches"] == whole["matches"][1:]
    assert two["next"] is None
    for query, words in [
        ("?after=r9:nobody", "after: no stored match 'r9:nobody'"),
        ("?limit=0", "limit must be a whole number"),
        ("?limit=abc", "limit must be a whole number"),
        ("?limit=" + "9" * 5000, "limit must be a whole number"),
    ]:
        status, _, body = league.request("/api/v1/matches" + query)
        assert status == 400, (query, body)
        assert words in json.loads(body)["error"]


def _sit_down(league: Served) -> str:
    """A human table against two entrants, started through the API; its page's address."""
    request = urllib.request.Request(
        league.url + "/api/v1/human",
        data=json.dumps({"opponents": ["heuristic", "random"], "name": "phone"}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return str(json.loads(answer.read())["table"])


@needs_chromium
def test_every_page_fits_a_phone_and_a_wide_table_scrolls_inside_itself(league, browser):
    """At a true 420 px viewport (the device metrics set, not the window: tests/support/browser.py): no page
    scrolls sideways, no table cell takes more than a line (a header one letter a line, a figure
    broken across lines), a hand's six cards take one or two rows, and the leaderboard, wider than the
    phone, scrolls inside itself. Each page's screenshot is kept (tests/artifacts/serve-phone-*.png)."""
    wait_for(lambda: len(league.get("/api/v1/matches")["matches"]) == 3, timeout=600, every=0.5)
    match_id = league.get("/api/v1/matches")["matches"][0]["match_id"]
    table = _sit_down(league)
    pages = {
        "index": "/",
        "matches": "/matches.html",
        "entrant": "/entrant-slow.html",
        "match": "/match-0001.html",
        "live": "/live/" + urllib.request.quote(match_id),
        "play": "/play",
        "table": table,
    }
    with phone(browser):
        for kind, page in pages.items():
            browser.get(league.url + page)
            if kind == "match":  # the viewer draws the table from above once its script has run
                wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#viewer .hand .card"), timeout=30)
            if kind == "table":  # the person's hand, once the table is dealt
                wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#hand .card")) == 6, timeout=120)
            browser.save_screenshot(str(artifacts() / f"serve-phone-{kind}.png"))
            found = fits_a_phone(browser, page)
            if kind == "index":
                assert "leaderboard" in found["scrolling"], found  # wider than the phone: it scrolls
            if kind == "match":
                assert [cards for cards, _ in found["hands"]] == [6, 6, 6], found
            if kind == "table":
                assert found["hands"] == [[6, 1]], found  # the person's six cards, one row


def test_a_request_naming_another_host_is_refused(league):
    request = urllib.request.Request(league.url + "/api/v1/live", headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400


CLICK = """
const prompt = document.getElementById('prompt');
if (prompt.dataset.over) return 'over';
if (window.pending && document.body.contains(window.pending)) return 'waiting';
const button = document.querySelector('#declare:not([hidden]) button')
  || document.querySelector('#hand button:not([disabled])');
if (!button) return 'waiting';
if (arguments[0] && button.dataset.card) {
  const talk = document.getElementById('talk');
  if (!document.getElementById('talk-row').hidden && !window.talked) {
    talk.value = arguments[1];
    window.talked = true;
  }
}
window.pending = button;
button.click();
return button.dataset.action || button.dataset.card;
"""


@needs_chromium
def test_a_person_plays_a_whole_match_by_clicking(duel, browser):
    browser.get(duel.url + "/play")
    name = browser.find_element(By.ID, "name")
    name.clear()
    name.send_keys(HOSTILE)
    browser.find_element(By.ID, "sit").click()
    wait_for(lambda: "/play/" in browser.current_url, timeout=30)

    # the first card by keyboard: the digit of its place in the hand
    def keyed():
        try:
            return key_or_declare()
        except StaleElementReferenceException:  # the table was drawn again meanwhile: look again
            return False

    def key_or_declare():
        buttons = browser.find_elements(By.CSS_SELECTOR, "#hand button")
        enabled = [i for i, b in enumerate(buttons) if b.is_enabled()]
        if enabled and browser.find_element(By.ID, "declare").get_attribute("hidden"):
            ActionChains(browser).send_keys(str(enabled[0] + 1)).perform()
            return True
        if not browser.find_element(By.ID, "declare").get_attribute("hidden"):
            browser.find_element(By.CSS_SELECTOR, "#declare button").click()
            time.sleep(0.5)
        return False

    wait_for(keyed, timeout=60, every=0.2)
    moves = 0
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        done = browser.execute_script(CLICK, True, HOSTILE + " low trumps")
        if done == "over":
            break
        if done == "waiting":
            time.sleep(0.03)
        else:
            moves += 1
    else:
        raise AssertionError("the match did not end")
    browser.save_screenshot(str(artifacts() / "serve-human-table.png"))
    no_alert(browser)
    assert moves >= 16 + 6 * 16  # its 16 declarations and its cards (the keyed one aside)
    assert HOSTILE in browser.find_element(By.TAG_NAME, "h1").text  # shown as the text it is
    replay = browser.find_element(By.CSS_SELECTOR, "#prompt a").get_attribute("href")
    browser.get(replay)
    assert browser.find_element(By.ID, "viewer").is_displayed()
    said = [q.text for q in browser.find_elements(By.CSS_SELECTOR, "ol.deals q")]
    assert f"{HOSTILE}: {HOSTILE} low trumps" in said  # what the person said, kept and shown as text
    assert HOSTILE in browser.find_element(By.TAG_NAME, "h1").text
    no_alert(browser)
    line = duel.get("/api/v1/human-matches/1")
    assert line["seats"][0] == HOSTILE
    assert line["status"] == "complete"
    # stored apart: the league's results know nothing of it
    assert HOSTILE not in referee("matches", "league.yaml", cwd=duel.folder, check=True).stdout
    assert (duel.folder / "results-human.sqlite").is_file()


def add_newcomer(duel: Served) -> None:
    """A third entrant, appended to the duel's league file while it is served (once)."""
    league = duel.folder / "league.yaml"
    text = league.read_text(encoding="utf-8")
    if "newcomer" not in text:
        wait_for(lambda: len(duel.get("/api/v1/matches")["matches"]) == 1, timeout=300, every=0.3)
        addition = f"  - name: newcomer\n    module: sample_bots.random_bot:RandomBot\n    cwd: {ROOT}\n"
        league.write_text(text + addition, encoding="utf-8")


def test_a_new_entrant_joins_without_a_restart(duel):
    add_newcomer(duel)
    wait_for(lambda: "newcomer" in [e["name"] for e in duel.get("/api/v1/entrants")["entrants"]], 60)
    matches = wait_for(
        lambda: len(got := duel.get("/api/v1/matches")["matches"]) == 3 and got, timeout=300, every=0.3
    )
    assert sum("newcomer" in m["seats"] for m in matches) == 2
    assert duel.process.poll() is None


@needs_chromium
def test_a_new_version_replays_and_its_page_shows_each_versions_results(duel, browser):
    add_newcomer(duel)
    wait_for(lambda: len(duel.get("/api/v1/matches")["matches"]) == 3, timeout=300, every=0.3)
    before = duel.get("/api/v1/entrants/newcomer")["versions"]
    assert [v["matches"] for v in before] == [2]
    league = duel.folder / "league.yaml"
    league.write_text(league.read_text(encoding="utf-8") + '    version: "2"\n', encoding="utf-8")
    versions = wait_for(
        lambda: (
            len(got := duel.get("/api/v1/entrants/newcomer")["versions"]) == 2
            and got[0]["version"] == "2"
            and got[0]["matches"] == 2
            and got
        ),
        timeout=300,
        every=0.3,
    )
    assert versions[0]["version"] == "2"
    assert versions[1]["matches"] == 2  # the replaced version's results, kept
    assert versions[1]["mean_points"] == before[0]["mean_points"]
    # Its rating as it was replaced (nothing else was played meanwhile), and its trajectory, kept.
    assert before[0]["mu"] is not None
    assert before[0]["trajectory"]
    assert before[0]["trajectory"][-1][1:] == [before[0]["mu"], before[0]["sigma"]]
    for key in ("mu", "sigma", "trajectory"):
        assert versions[1][key] == before[0][key], key
    browser.get(duel.url + "/entrant-newcomer.html")
    rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#versions tbody tr"), timeout=30)
    assert rows[0].text.startswith("2 (playing now) 2")
    assert rows[1].text.startswith("before ")
    assert f"{before[0]['mu']:.1f}" in rows[1].text  # its μ, shown


def test_ctrl_c_stops_the_server_and_the_league_with_nothing_lost(tmp_path):
    served = serve(tmp_path, LEAGUE)
    league = next(served)
    wait_for(lambda: league.get("/api/v1/live")["in_play"], timeout=120, every=0.05)
    league.process.send_signal(signal.SIGINT)
    out, err = league.process.communicate(timeout=60)
    assert league.process.returncode == 0, err
    assert "stopped;" in out
    assert "Traceback" not in err
    played = int(re.search(r"(\d+) match\(es\) played", out).group(1))
    stored = referee("matches", "league.yaml", cwd=league.folder, check=True).stdout if played else ""
    assert stored.count("complete") == played + (1 if played else 0)  # each one, and the summary line
    served.close()
    again = referee("run", "league.yaml", cwd=tmp_path, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "3/3 matches" in again.stdout


def test_serve_fresh_forgets_the_stored_results_once_and_keeps_a_copy(tmp_path):
    """``referee serve --fresh`` does what ``referee run --fresh`` does, once, when it opens the league:
    the results stored before are forgotten, a copy of them kept beside them; then it plays on."""
    text = DUEL.replace("name: Duel", "name: Fresh duel")
    (tmp_path / "league.yaml").write_text(text, encoding="utf-8")
    before = referee("run", "league.yaml", cwd=tmp_path)
    assert before.returncode == 0, before.stderr
    served_generator = serve(tmp_path, text, "--fresh")
    served = next(served_generator)
    try:
        wait_for(lambda: len(served.get("/api/v1/matches")["matches"]) == 1, timeout=120, every=0.3)
    finally:
        served_generator.close()  # Ctrl-C, as the fixture does
    _, err = served.process.communicate(timeout=30)
    copies = sorted(tmp_path.glob("results.before-fresh-*.sqlite"))
    assert len(copies) == 1, err
    assert f"--fresh: the 1 match(es) stored in {tmp_path / 'results.sqlite'} are forgotten" in err
    assert served.process.returncode == 0, err
    kept = referee("matches", "league.yaml", cwd=tmp_path, check=True)
    assert "1 of 1 scheduled matches stored" in kept.stdout  # played again by the server, and stored


def stored_ratings(database: Path) -> list[tuple[object, ...]]:
    """The ratings table of a results database, read-only beside the process that holds it."""
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return db.execute("SELECT * FROM ratings ORDER BY position, entrant").fetchall()
    finally:
        db.close()


def test_a_served_league_stores_its_ratings_as_a_run_does(tmp_path):
    """Whichever driver plays a league stores its ratings: ``referee serve`` does once it has nothing to
    play, while it runs on, and they are the ratings ``referee run`` stores for the same results."""
    text = DUEL.replace("name: Duel", "name: Rated duel")
    served_generator = serve(tmp_path, text)
    served = next(served_generator)
    database = tmp_path / "results.sqlite"
    try:
        wait_for(lambda: len(served.get("/api/v1/matches")["matches"]) == 1, timeout=120, every=0.3)
        wait_for(lambda: stored_ratings(database), timeout=60, every=0.3)
        by_serve = stored_ratings(database)
        assert served.process.poll() is None  # stored while it serves, not as it stops
    finally:
        served_generator.close()
    assert {row[2] for row in by_serve} == {"heuristic", "random"}
    again = referee("run", "league.yaml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert stored_ratings(database) == by_serve
