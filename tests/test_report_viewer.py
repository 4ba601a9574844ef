"""The match viewer, the crosstable and the charts of the HTML report, in a real headless Chromium, on a
real four-player league with real bots (one of them talks, in markup meant to break the page). What the
pages show is checked against the match records as ``referee export`` and the store give them, with the
trick winners worked out again by the rules, never against the page's own data."""

import json
import math
import re
import statistics
from collections import defaultdict

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from bots.talker import MESSAGE
from pyramid_sdk.cards import Card, Suit
from pyramid_sdk.rules import TrickWinner, trick_winner_index
from referee.results.store import Store
from support import ROOT
from support.browser import artifacts, chromium, needs_chromium
from support.cli import export, referee
from support.leagues import MODULE_BOTS

pytestmark = needs_chromium

LEAGUE = f"""\
name: Viewer League
seed: 17
players: 4
schedule: {{format: round-robin, rounds: 1, seating: single}}
rules: {{talk: open}}
database: results.sqlite
entrants:
{MODULE_BOTS}  - name: talker
    module: tests.bots.talker:Talker
    cwd: {ROOT}
  - name: tricky
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: random-two
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """The league run to its end with a report; its export lines and stored records."""
    folder = tmp_path_factory.mktemp("viewer")
    path = folder / "league.yaml"
    path.write_text(LEAGUE, encoding="utf-8")
    referee("run", path, "--report", folder / "site", timeout=600, check=True)
    lines = export(path)
    store = Store(folder / "results.sqlite", write=False)
    records = {match_id: match.record for match_id, match in store.matches().items()}
    store.close()
    return folder / "site", lines, records


def page_of(line: dict) -> str:
    return f"match-{line['position']:04d}.html"


@pytest.fixture(scope="module")
def talky(league):
    """A match of the talker, with the number of a deal in which it talked, and that deal's talk."""
    _, lines, records = league
    for position, line in enumerate(lines, start=1):
        record = records[line["match_id"]]
        for deal in record.deals:
            if deal.talk:
                return {**line, "position": position}, deal.number, deal.talk
    raise AssertionError("the talker never talked")


SNAPSHOT = """
const root = document.getElementById("viewer");
const bySeat = (selector) => [...root.querySelectorAll(selector)]
  .sort((a, b) => a.dataset.seat - b.dataset.seat);
return {
  deal: Number(root.dataset.deal), trick: Number(root.dataset.trick), played: Number(root.dataset.played),
  table: bySeat(".played").map((p) => [...p.querySelectorAll(".card")].map((c) => c.dataset.card)),
  winners: [...root.querySelectorAll(".played .card.winner")].map((c) => c.dataset.card),
  taken: bySeat(".seat").map((s) => Number(s.querySelector(".taken").dataset.taken)),
  hands: bySeat(".seat").map((s) => [...s.querySelectorAll(".hand .card")].map((c) => c.dataset.card)),
  talk: bySeat(".seat").map((s) => [...s.querySelectorAll(".said q")].map((q) => q.textContent)),
  pyramids: [...root.querySelectorAll(".pyramids caption")].map((c) => c.textContent),
  trumps: [...root.querySelectorAll(".card.trump")].map((c) => c.dataset.card),
};
"""


def expected_at(line: dict, talk, number: int, step: int) -> dict:
    """What the table shows ``step`` cards into deal ``number``, from the export and the rules."""
    deal = line["deals"][number - 1]
    players = line["players"]
    trump = Suit.parse(deal["trump"])
    rule = TrickWinner(line["rules"]["trick_winner"])
    table = [[] for _ in range(players)]
    winners = []
    taken = [0] * players
    played = set()
    trick_number = shown = 0
    for index, trick in enumerate(deal["tricks"]):
        count = min(max(step - index * players, 0), players)
        if count == 0:
            break
        trick_number, shown = index + 1, count
        table = [[] for _ in range(players)]
        for position, code in enumerate(trick["cards"][:count]):
            table[(trick["leader"] + position) % players].append(code)
            played.add(code)
        if count == players:
            cards = [Card.parse(code) for code in trick["cards"]]
            best = trick_winner_index(cards, trump, rule)
            assert (trick["leader"] + best) % players == trick["winner"]  # the record agrees with the rules
            winners = [trick["cards"][best]]
            taken[trick["winner"]] += 1
        else:
            winners = []
    hands = [sorted(code for code in hand if code not in played) for hand in deal["hands"]]
    said = [[m.text for m in talk if m.seat == seat and m.trick == trick_number] for seat in range(players)]
    return {
        "deal": number,
        "trick": trick_number,
        "played": shown,
        "table": table,
        "winners": winners,
        "taken": taken,
        "hands": hands,
        "talk": said,
    }


def snapshot(browser) -> dict:
    seen = browser.execute_script(SNAPSHOT)
    seen["hands"] = [sorted(hand) for hand in seen["hands"]]
    return seen


def press(browser, *keys):
    browser.find_element(By.TAG_NAME, "body").send_keys(*keys)


def test_the_viewer_steps_through_a_deal_by_keyboard_as_the_record_says(league, talky, browser):
    site, _, records = league
    line, number, talk = talky
    record = records[line["match_id"]]
    players = line["players"]
    browser.get((site / page_of(line)).as_uri() + f"#deal-{number}")
    assert browser.find_element(By.ID, "viewer").is_displayed()
    deal = line["deals"][number - 1]
    for step in range(6 * players + 1):
        if step:
            press(browser, Keys.ARROW_RIGHT)
        seen = snapshot(browser)
        expected = expected_at(line, talk, number, step)
        assert {key: seen[key] for key in expected} == expected, f"deal {number}, step {step}"
        visible = [code for cards in expected["hands"] + expected["table"] for code in cards]
        assert sorted(seen["trumps"]) == sorted(code for code in visible if code[1] == deal["trump"])
        if step == 2:  # mid-trick, with the talk of the first trick on show
            browser.save_screenshot(str(artifacts() / "viewer-mid-trick.png"))
        # The pyramids fill in as deals end: this deal counts once its last card is played.
        done = [d for d in record.deals if d.number < number or (d.number == number and step == 6 * players)]
        totals = [sum(d.points for d in done if d.declarer == seat) for seat in range(players)]
        assert seen["pyramids"] == [
            f"{name} · {total} points" for name, total in zip(line["seats"], totals, strict=True)
        ]
    assert any(seen_talk for seen_talk in expected_at(line, talk, number, 1)["talk"])  # talk was on show
    assert MESSAGE in [m.text for m in talk]

    press(browser, Keys.ARROW_RIGHT)
    assert snapshot(browser)["deal"] == number + 1
    assert browser.current_url.endswith(f"#deal-{number + 1}")  # the address names the deal shown
    press(browser, Keys.ARROW_LEFT)
    assert (snapshot(browser)["deal"], snapshot(browser)["trick"]) == (number, 6)
    press(browser, Keys.SHIFT, Keys.ARROW_LEFT)
    assert (snapshot(browser)["trick"], snapshot(browser)["played"]) == (5, players)
    press(browser, Keys.PAGE_UP)
    assert (snapshot(browser)["deal"], snapshot(browser)["trick"]) == (number, 0)
    press(browser, Keys.PAGE_UP)
    assert snapshot(browser)["deal"] == number - 1
    press(browser, Keys.HOME)
    assert (snapshot(browser)["deal"], snapshot(browser)["trick"]) == (1, 0)
    press(browser, Keys.END)
    end = snapshot(browser)
    assert (end["deal"], end["trick"], end["played"]) == (16 * players, 6, players)
    finals = [f"{name} · {total} points" for name, total in zip(line["seats"], line["totals"], strict=True)]
    assert end["pyramids"] == finals
    Select(browser.find_element(By.ID, "deal-select")).select_by_value("2")
    assert (snapshot(browser)["deal"], snapshot(browser)["played"]) == (3, 0)
    browser.find_element(By.CSS_SELECTOR, "button[data-go=trick-next]").click()
    assert (snapshot(browser)["trick"], snapshot(browser)["played"]) == (1, players)
    browser.find_element(By.CSS_SELECTOR, "button[data-go=deal-next]").click()
    assert (snapshot(browser)["deal"], snapshot(browser)["played"]) == (4, 0)


def test_a_deal_link_opens_the_viewer_at_that_deal(league, talky, browser):
    site, _, _ = league
    line, _, _ = talky
    browser.get((site / page_of(line)).as_uri() + "#deal-7")
    assert snapshot(browser)["deal"] == 7
    browser.find_element(By.CSS_SELECTOR, "#deal-12 > a").click()
    # the viewer moves on the page's hashchange, which comes after the click returns
    WebDriverWait(browser, 10).until(lambda _: snapshot(browser)["deal"] == 12)
    assert snapshot(browser)["deal"] == 12
    viewer = browser.find_element(By.ID, "viewer")
    assert browser.execute_script("return arguments[0].getBoundingClientRect().top", viewer) < 400


def test_a_four_player_match_page_weighs_at_most_60_kb_and_shares_one_script(league):
    site, lines, _ = league
    assert len(lines) == 5
    for position, line in enumerate(lines, start=1):
        assert line["players"] == 4
        page = (site / f"match-{position:04d}.html").read_text(encoding="utf-8")
        assert len(page.encode()) <= 60_000, f"match {position}: {len(page.encode())} bytes"
        assert page.count('<script src="viewer.js"></script>') == 1
        data = re.findall(r'<script type="application/json" id="match-data">(.*?)</script>', page, re.S)
        assert len(data) == 1  # the match data, once
        assert len(json.loads(data[0])["deals"]) == 64
    assert (site / "viewer.js").is_file()


def test_without_javascript_the_page_lists_every_trick_and_talk_escaped(league, talky):
    site, _, records = league
    line, _, _ = talky
    record = records[line["match_id"]]
    page = (site / page_of(line)).read_text(encoding="utf-8")
    assert MESSAGE not in page  # only ever escaped: as HTML text, or in the JSON with < as \u003c
    assert "&lt;/script&gt;&lt;!-- &lt;b&gt;x&lt;/b&gt; &amp; &#34;trump low&#34;" in page
    assert json.dumps(MESSAGE).replace("<", "\\u003c")[1:-1] in page
    driver = chromium(javascript=False)
    try:
        driver.get((site / page_of(line)).as_uri())
        assert not driver.find_element(By.ID, "viewer").is_displayed()
        deals = driver.find_elements(By.CSS_SELECTOR, "ol.deals > li")
        assert len(deals) == 64
        for item, deal, stored in zip(deals, line["deals"], record.deals, strict=True):
            assert item.get_attribute("id") == f"deal-{deal['number']}"
            tricks = item.find_elements(By.CSS_SELECTOR, "ol > li")
            assert len(tricks) == 6
            for number, (shown, trick) in enumerate(zip(tricks, deal["tricks"], strict=True), start=1):
                cards = " ".join(Card.parse(code).human for code in trick["cards"])
                text = f"{cards} → {trick['winner']}"  # the seat, numbered as at the top of the page
                for message in stored.talk:
                    if message.trick == number:
                        text += f" {line['seats'][message.seat]}: {message.text}"
                assert shown.get_attribute("textContent") == text
                best = shown.find_element(By.TAG_NAME, "b").get_attribute("textContent")
                winner_card = trick["cards"][(trick["winner"] - trick["leader"]) % line["players"]]
                assert best == Card.parse(winner_card).human
    finally:
        driver.quit()


T_975_DF2 = 4.302652729911275
"""Student's t, 97.5% quantile, 2 degrees of freedom (as scipy.stats.t.ppf gives it): each pair of this
league shares 3 tables."""


def shown(value: float, places: int = 1, sign: bool = False) -> str:
    text = f"{value:+.{places}f}" if sign else f"{value:.{places}f}"
    return text.replace("-", "−")


def test_the_crosstable_shows_the_statistics_of_the_export(league, browser):
    site, lines, _ = league
    differences = defaultdict(lambda: defaultdict(list))  # (a, b) -> table -> a's points − b's, per match
    for line in lines:
        for a, first in enumerate(line["seats"]):
            for b, second in enumerate(line["seats"]):
                if a != b:
                    differences[first, second][line["table_id"]].append(line["totals"][a] - line["totals"][b])
    printed = referee("leaderboard", site.parent / "league.yaml", "--crosstable", check=True).stdout
    terminal = re.findall(r"[+−]\d+\.\d ± \d+\.\d(?: \*)?", printed)
    browser.get((site / "index.html").as_uri())
    names = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#crosstable thead th")][1:]
    ranked = [
        row.find_element(By.TAG_NAME, "th").text
        for row in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    ]
    assert names == ranked
    strong = 0
    for row, first in zip(browser.find_elements(By.CSS_SELECTOR, "#crosstable tbody tr"), names, strict=True):
        for cell, second in zip(row.find_elements(By.TAG_NAME, "td"), names, strict=True):
            if first == second:
                assert cell.text == "—"
                continue
            tables = [statistics.fmean(d) for d in differences[first, second].values()]
            assert len(tables) == 3
            mean = statistics.fmean(tables)
            half = T_975_DF2 * statistics.stdev(tables) / math.sqrt(3)
            assert cell.text == f"{shown(mean, sign=True)} ± {shown(half)}"
            classes = cell.get_attribute("class").split()
            assert ("significant" in classes) == (abs(mean) > half)
            terminal.remove(cell.text + (" *" if abs(mean) > half else ""))  # the CLI prints it the same
            assert ("ahead" if mean > 0 else "behind") in classes
            strong += "significant" in classes
    assert 0 < strong < len(names) * (len(names) - 1)  # this league has both kinds of cell
    assert terminal == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#neighbours tbody tr")
    assert len(rows) == len(names) - 1
    for row, first, second in zip(rows, names, names[1:], strict=False):
        tables = [statistics.fmean(d) for d in differences[first, second].values()]
        x = statistics.fmean(tables) / (statistics.stdev(tables) / math.sqrt(3))
        likelihood = 0.5 + x / (2 * math.sqrt(2 + x * x))  # Student's t CDF, 2 degrees of freedom
        cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        assert cells[0] == second
        assert cells[-1] == f"{100 * likelihood:.2f}%"
        assert f"  {first} > {second}: {cells[-1]}\n" in printed
    browser.save_screenshot(str(artifacts() / "index-crosstable.png"))


def test_the_html_leaderboard_rounds_every_figure_as_the_terminal_prints_it(league, browser):
    site, _, _ = league
    path = site.parent / "league.yaml"
    output = referee("leaderboard", path, "--format", "markdown", check=True).stdout.splitlines()
    markdown = [line for line in output if line.startswith("|")][2:]  # the rows, after header and rule
    terminal = [[cell.strip() for cell in row.strip("|").split("|")] for row in markdown]
    browser.get((site / "index.html").as_uri())
    page = [
        [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "th, td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    ]
    assert page == terminal
    assert all(re.fullmatch(r"\d+\.\d", row[9]) for row in page)  # the ± 95% column has figures


def colour_of(browser, selector: str) -> str:
    return browser.execute_script(
        "return getComputedStyle(document.querySelector(arguments[0])).backgroundColor", selector
    )


def test_the_rating_chart_has_axes_a_legend_that_toggles_and_one_colour_per_entrant(league, talky, browser):
    site, lines, _ = league
    browser.get((site / "index.html").as_uri())
    ticks = [int(text.text) for text in browser.find_elements(By.CSS_SELECTOR, "#history-chart text.tick.x")]
    assert ticks[0] == 0
    assert ticks[-1] == len({line["table_id"] for line in lines})  # every rated table, up to the last
    assert len(browser.find_elements(By.CSS_SELECTOR, "#history-chart text.tick:not(.x)")) >= 3
    assert "rated tables played" in browser.find_element(By.ID, "history-chart").text
    bands = browser.find_elements(By.CSS_SELECTOR, "#history-chart .band")
    assert len(bands) == 5
    assert not any(band.is_displayed() for band in bands)  # the early part is not a grey blur
    buttons = browser.find_elements(By.CSS_SELECTOR, ".legend button")
    names = [button.text for button in buttons]
    assert names == [
        row.find_element(By.TAG_NAME, "th").text
        for row in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    ]
    ActionChains(browser).move_to_element(buttons[2]).perform()
    assert [band.is_displayed() for band in bands] == [False, False, True, False, False]
    line = browser.find_element(By.CSS_SELECTOR, "#history-chart g.entrant[data-line='2']")
    buttons[2].click()
    assert not line.is_displayed()
    assert buttons[2].get_attribute("aria-pressed") == "false"
    buttons[2].click()
    assert line.is_displayed()

    # One colour per entrant, on every page: the legend, the crosstable, its page, a match it played.
    talker = names.index("talker")
    colour = colour_of(browser, f".legend li[data-line='{talker}'] .swatch")
    assert colour == colour_of(browser, f"#crosstable thead th:nth-child({talker + 2}) .swatch")
    assert len({colour_of(browser, f".legend li[data-line='{n}'] .swatch") for n in range(5)}) == 5
    browser.get((site / "entrant-talker.html").as_uri())
    assert colour_of(browser, "h1 .swatch") == colour
    assert len(browser.find_elements(By.CSS_SELECTOR, "#history-chart .band")) == 1
    assert browser.find_element(By.CSS_SELECTOR, "#history-chart .band").is_displayed()
    line, _, _ = talky
    browser.get((site / page_of(line)).as_uri())
    seat = line["seats"].index("talker")
    assert colour_of(browser, f"#viewer .seat[data-seat='{seat}'] .swatch") == colour


def test_without_javascript_the_chart_shows_every_line(league):
    site, _, _ = league
    driver = chromium(javascript=False)
    try:
        driver.get((site / "index.html").as_uri())
        assert all(
            line.is_displayed() for line in driver.find_elements(By.CSS_SELECTOR, "#history-chart polyline")
        )
        assert len(driver.find_elements(By.CSS_SELECTOR, "#history-chart polyline")) == 5
        assert not driver.find_elements(By.CSS_SELECTOR, ".legend button")
        assert len(driver.find_elements(By.CSS_SELECTOR, ".legend li")) == 5
    finally:
        driver.quit()


def test_a_printed_match_page_is_the_static_list_without_the_viewer(league, talky, browser):
    site, _, _ = league
    line, _, _ = talky
    browser.get((site / page_of(line)).as_uri())
    assert browser.find_element(By.ID, "viewer").is_displayed()
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert not browser.find_element(By.ID, "viewer").is_displayed()
        assert not browser.find_element(By.CSS_SELECTOR, ".crumbs").is_displayed()
        assert browser.find_element(By.CSS_SELECTOR, "#deal-64").is_displayed()
        assert len(browser.find_elements(By.CSS_SELECTOR, "section:not(#viewer) table.pyramid")) == 4
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
