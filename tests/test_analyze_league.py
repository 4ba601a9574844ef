"""``referee analyze`` on a small real league through the real CLI, and the HTML report showing what it
kept: in the match page's static HTML, on the entrants' pages, and step by step in the replay viewer in a
real headless Chromium. The figures are checked against the league's own export (every chosen action is
the one the record holds) and against a table whose deals are hidden again (a match of it void)."""

import json
import re
import sqlite3

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support.browser import needs_chromium
from support.cli import export, referee
from support.leagues import MODULE_BOTS

LEAGUE = f"""\
name: Analysed League
seed: 5
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
entrants:
{MODULE_BOTS}"""


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """The league played to its end (one table, two seatings), its first match analysed, its export."""
    folder = tmp_path_factory.mktemp("analysed")
    path = folder / "league.yaml"
    path.write_text(LEAGUE, encoding="utf-8")
    referee("run", path, timeout=900, check=True)
    first = json.loads(referee("analyze", path, "1", "--samples", "2", "--json", check=True).stdout)
    lines = export(path)
    return path, first, lines


def chosen_in(line: dict) -> list[str]:
    """Every action of an exported match in play order: a declaration, then each card of the deal."""
    actions = []
    for deal in line["deals"]:
        actions.append(f"{deal['declared']}{deal['trump']}")
        actions += [card for trick in deal["tricks"] for card in trick["cards"]]
    return actions


def test_analyze_a_stored_match(league):
    path, first, lines = league
    assert len(lines) == 2
    assert not lines[0]["deals_hidden"]
    assert [d["chosen"] for d in first["decisions"]] == chosen_in(lines[0])
    assert (first["samples"], first["seed"], len(first["luck"])) == (2, 0, 32)
    assert all(d["loss"] >= 0 and d["loss_se"] >= 0 for d in first["decisions"])
    assert {s["name"] for s in first["summary"]} == {"heuristic", "random"}
    kept = list((path.parent / "league-analysis").glob("*.json"))
    assert len(kept) == 1
    # Reproducible: the same settings print the same figures, read back or worked out again.
    assert json.loads(referee("analyze", path, "1", "--samples", "2", "--json", check=True).stdout) == first
    kept[0].unlink()
    assert json.loads(referee("analyze", path, "1", "--samples", "2", "--json", check=True).stdout) == first
    other = json.loads(
        referee("analyze", path, "1", "--samples", "2", "--seed", "1", "--json", check=True).stdout
    )
    assert other["decisions"] != first["decisions"]
    referee("analyze", path, "1", "--samples", "2", check=True)  # back to seed 0 for the report's tests
    text = referee("analyze", path, "1", "--samples", "2", check=True).stdout
    assert "2 sampled worlds a decision" in text
    assert "costliest decisions" in text


def test_analyze_all_then_the_summary(league, tmp_path):
    path, _, _ = league
    site = tmp_path / "site"
    result = referee("analyze", path, "--all", "--samples", "2", "--json", "--report", site, timeout=900)
    assert result.returncode == 0, result.stderr
    assert "1 matches to analyse" in result.stderr  # the first one is kept already
    for page in ("match-0001.html", "match-0002.html"):  # the report rewritten with both
        assert 'id="analysis"' in (site / page).read_text(encoding="utf-8")
    summary = json.loads(result.stdout)
    assert (summary["analysed"], summary["shown"]) == (2, 2)
    by_name = {entrant["name"]: entrant for entrant in summary["entrants"]}
    assert set(by_name) == {"heuristic", "random"}
    for entrant in by_name.values():
        assert entrant["deals"] == 64
        assert entrant["declarations"] <= 32
        assert entrant["plays"] > 0
        assert entrant["loss_per_decision"] >= 0
    # The random bot gives up more points per decision than the heuristic whose policy is the yardstick.
    assert by_name["random"]["loss_per_decision"] > by_name["heuristic"]["loss_per_decision"]
    text = referee("analyze", path, "--summary", check=True).stdout
    assert text.startswith("Analysed League: 2 of 2 shown complete matches analysed")


def test_the_report_shows_the_analysis_and_hides_it_with_the_deals(league, tmp_path):
    path, first, _ = league
    site = tmp_path / "site"
    referee("report", path, "-o", site, check=True)
    page = (site / "match-0001.html").read_text(encoding="utf-8")
    assert 'id="analysis"' in page
    assert "Costliest decisions" in page
    assert '"analysis":' in page
    assert 'id="analysis-summary"' in (site / "entrant-random.html").read_text(encoding="utf-8")
    assert 'id="analysis-entrants"' in (site / "index.html").read_text(encoding="utf-8")
    # A seating of the table void: its deals, and so the analysis of its other seating, are hidden again.
    copy = tmp_path / "league.yaml"
    copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "league.sqlite").write_bytes((path.parent / "league.sqlite").read_bytes())
    (tmp_path / "league-analysis").mkdir()
    for kept in (path.parent / "league-analysis").iterdir():
        (tmp_path / "league-analysis" / kept.name).write_bytes(kept.read_bytes())
    with sqlite3.connect(tmp_path / "league.sqlite") as db:
        voided = db.execute("UPDATE matches SET status = 'void' WHERE position = 1")  # from 0: the second
        assert voided.rowcount == 1
    hidden = tmp_path / "hidden"
    referee("report", copy, "-o", hidden, check=True)
    page = (hidden / "match-0001.html").read_text(encoding="utf-8")
    assert 'id="analysis"' not in page
    assert '"analysis"' not in page
    assert first["decisions"][0]["chosen"] not in re.sub(r"<[^>]*>", " ", page).split()
    refused = referee("analyze", copy, "1")
    assert refused.returncode == 1
    assert "hidden until every match of this table is played" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stderr


@needs_chromium
def test_the_viewer_shows_each_decisions_loss(league, tmp_path, browser):
    path, first, lines = league
    site = tmp_path / "site"
    referee("report", path, "-o", site, check=True)
    seats = lines[0]["seats"]
    browser.get((site / "match-0001.html").as_uri())
    insight = browser.find_element(By.ID, "viewer-analysis")
    declaration = first["decisions"][0]
    assert insight.is_displayed()
    assert insight.text.startswith(f"Analysis: {seats[declaration['seat']]} declared ")
    assert "· luck " in insight.text
    body = browser.find_element(By.TAG_NAME, "body")
    for step in range(1, 4):  # the first cards of deal 1, one by one
        body.send_keys(Keys.ARROW_RIGHT)
        played = first["decisions"][step]
        assert insight.text.startswith(f"Analysis: {seats[played['seat']]} played ")
        assert float(insight.get_attribute("data-loss")) == round(played["loss"], 2)
