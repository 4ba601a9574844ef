"""The HTML report of a real small league, rendered in a real headless Chromium and checked in its DOM."""

import pytest
from selenium.webdriver.common.by import By

from referee.league.config import load_league
from referee.report.site import rewrite_report
from referee.results.store import Store
from support import ROOT
from support.browser import artifacts, fits_a_phone, needs_chromium, phone
from support.cli import referee

pytestmark = needs_chromium

LEAGUE = f"""\
name: Browser <League> & Co
seed: 5
players: 3
rules: {{talk: open}}
database: results.sqlite
entrants:
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: random-inproc
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: tricky
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("league")
    (folder / "league.yaml").write_text(LEAGUE, encoding="utf-8")
    result = referee("run", folder / "league.yaml", "--report", folder / "site", timeout=600)
    assert result.returncode == 0, result.stderr
    return folder / "site"


def test_a_live_report_refreshes_itself_and_a_final_one_does_not(site, tmp_path):
    assert 'http-equiv="refresh"' not in (site / "index.html").read_text()
    league = load_league(site.parent / "league.yaml")
    store = Store(league.database, write=False)
    try:
        index = rewrite_report(league, league.seed, tmp_path / "live", store, live=True)
    finally:
        store.close()
    assert 'http-equiv="refresh"' in index.read_text()


def test_the_site_is_self_contained(site):
    for page in site.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "http://" not in text
        assert "https://" not in text
    assert "Browser &lt;League&gt; &amp; Co" in (site / "index.html").read_text()  # names are escaped
    assert not list(site.glob(".*.tmp"))


def test_leaderboard_lists_every_entrant_and_sorts_by_a_header(site, browser):
    browser.get((site / "index.html").as_uri())
    browser.save_screenshot(str(artifacts() / "index.png"))

    def entrants():
        return [
            row.find_element(By.CSS_SELECTOR, "th").text
            for row in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        ]

    before = entrants()
    assert sorted(before) == ["heuristic", "random", "random-inproc", "tricky"]
    header = browser.find_element(By.XPATH, "//table[@id='leaderboard']//th[normalize-space()='entrant']")
    header.click()
    ascending = entrants()
    assert ascending == sorted(before)
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    descending = entrants()
    assert descending == sorted(before, reverse=True)
    assert ascending != before  # the rating order is not the alphabetical one: the click changed it
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart polyline")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".h2h tbody tr")) == 4


def test_a_replay_page_lists_six_tricks_per_deal_and_the_pyramids(site, browser):
    browser.get((site / "match-0001.html").as_uri())
    deals = browser.find_elements(By.CSS_SELECTOR, "ol.deals > li")
    assert len(deals) == 48
    for deal in deals:
        assert len(deal.find_elements(By.CSS_SELECTOR, "ol > li")) == 6
    pyramids = browser.find_elements(By.CSS_SELECTOR, "section:not(#viewer) table.pyramid")
    assert len(pyramids) == 3
    for pyramid in pyramids:
        assert len(pyramid.find_elements(By.CSS_SELECTOR, "tbody tr")) == 7  # 0 to 6
        assert len(pyramid.find_elements(By.CSS_SELECTOR, "td.centre span")) == 16


def test_an_entrant_page_has_the_pyramid_heat_map(site, browser):
    browser.get((site / "entrant-heuristic.html").as_uri())
    browser.save_screenshot(str(artifacts() / "entrant.png"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#accuracy .heat-row")) == 7
    assert "declared" in browser.find_element(By.ID, "accuracy").text


def test_every_page_of_the_report_fits_a_phone(site, browser):
    """The report `referee report` writes, at a true 420 px viewport (tests/support/browser.py): no page
    scrolls sideways, no cell takes more than a line, the viewer's hands take one or two rows each, the
    leaderboard scrolls inside itself."""
    with phone(browser):
        for page in ("index.html", "matches.html", "entrant-heuristic.html", "match-0001.html"):
            browser.get((site / page).as_uri())
            browser.save_screenshot(str(artifacts() / f"report-phone-{page.removesuffix('.html')}.png"))
            found = fits_a_phone(browser, page)
            if page == "index.html":
                assert "leaderboard" in found["scrolling"], found
            if page == "match-0001.html":
                assert [cards for cards, _ in found["hands"]] == [6, 6, 6], found


def test_the_index_shows_the_rank_confidence_beside_the_standings(site, browser):
    browser.get((site / "index.html").as_uri())
    board = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    names = [row.find_element(By.CSS_SELECTOR, "th").text for row in board]
    own = [row.find_elements(By.CSS_SELECTOR, "td")[-1].text for row in board]  # the P(rank) column
    rows = browser.find_elements(By.CSS_SELECTOR, "#rank-probabilities tbody tr")
    assert [row.find_element(By.CSS_SELECTOR, "th").text for row in rows] == names
    cells = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")] for row in rows]
    assert all(len(row) == len(names) and all(c.endswith("%") for c in row) for row in cells)
    assert own == [row[place] for place, row in enumerate(cells)]  # P(its rank) is the diagonal
    tied = browser.find_elements(By.CSS_SELECTOR, "#tied li")
    assert tied
    assert all(li.text.startswith(("tied (order not decided): ", "every neighbour decided")) for li in tied)
