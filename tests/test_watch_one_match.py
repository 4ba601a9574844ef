"""Watching one match card by card, through the real CLI and real bot processes: `referee match --html
--record` keeps the page and the record, `referee replay FILE.jsonl --deal N` prints a deal card by card,
and the page opens from disk in Chromium with its viewer. What they show is checked against the record's
own cards, with the trick winners worked out again by the rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from pyramid_sdk.cards import Card, Suit
from pyramid_sdk.rules import TrickWinner, trick_winner_index
from referee.match.sandbox import bubblewrap_problem
from support import ROOT
from support.browser import artifacts, needs_chromium
from support.cli import referee

RANDOM = "python -m sample_bots.random_bot"
SEATS = (RANDOM, "sample_bots.heuristic:HeuristicBot", RANDOM)
KEEP = ("--html", "match.html", "--record", "match.jsonl")


def readable_folder(folder: Path) -> Path:
    """A test's own folder, readable by the uids a sandboxed bot runs as (pytest makes it 0700)."""
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, subprocess.CompletedProcess[str]]:
    """One 3-player match with a bot process in two seats, played from a folder outside the repository,
    kept as a page and a record."""
    folder = readable_folder(tmp_path_factory.mktemp("watch"))
    result = referee("match", *SEATS, "--seed", "11", *KEEP, cwd=folder)
    assert result.returncode == 0, result.stderr
    (line,) = (folder / "match.jsonl").read_text(encoding="utf-8").splitlines()
    return folder, json.loads(line), result


def test_the_record_is_a_line_of_the_export_format_with_the_matchs_seed(watched):
    _, record, result = watched
    assert record["seed"] == 11
    assert record["seats"] == ["random", "heuristic", "random#2"]
    assert record["status"] == "complete"
    assert record["deals_hidden"] is False
    assert len(record["deals"]) == 48
    league_fields = ("league", "round", "table", "table_id", "rotation")
    assert [record[key] for key in league_fields] == [None] * 5  # played on its own, in no league
    # the fields of `referee export`, no more; none that only a league with remote entrants has
    assert set(record) == documented_fields() - {"remote_entrants"}
    assert "record: match.jsonl" in result.stdout
    assert "page: match.html" in result.stdout
    assert result.stdout.index("seed 11 (--seed 11") < result.stdout.index("record:")


def documented_fields() -> set[str]:
    """The fields of a match line, from the table of docs/FORMATS.md."""
    text = (ROOT / "docs/FORMATS.md").read_text(encoding="utf-8")
    table = text[text.index("## `referee export") : text.index("Each deal:")]
    return {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}


def test_replay_prints_a_deal_of_the_record_card_by_card(watched):
    folder, record, _ = watched
    deal = record["deals"][4]
    seats = record["seats"]
    result = referee("replay", "match.jsonl", "--deal", "5", cwd=folder)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "seats: 0=random, 1=heuristic, 2=random#2"
    assert lines[1].startswith(
        f"deal 5 of 48  dealer {seats[deal['dealer']]}  declarer {seats[deal['declarer']]}"
    )
    plays = [line.split() for line in lines if line.startswith("  ") and "takes it" not in line]
    trump = Suit.parse(deal["trump"])
    expected = []
    for trick in deal["tricks"]:
        cards = [Card.parse(code) for code in trick["cards"]]
        for index, card in enumerate(cards):
            ahead = trick_winner_index(cards[: index + 1], trump, TrickWinner.LED_SUIT)
            mark = ["leads"] if index == 0 else ["takes", "the", "lead"] if ahead == index else []
            expected.append([seats[(trick["leader"] + index) % 3], card.human, *mark])
        assert (
            trick["winner"] == (trick["leader"] + trick_winner_index(cards, trump, TrickWinner.LED_SUIT)) % 3
        )
    assert plays == expected  # every card of the deal, one a line, in play order
    taken = [line for line in lines if "takes it" in line]
    assert len(taken) == 6
    assert taken[-1].endswith(f"has {deal['taken']} of {deal['declared']}")
    assert lines[-1].endswith(f"took {deal['taken']}: {deal['points']} points")


def test_replay_of_the_whole_record_and_its_one_line_errors(watched, tmp_path):
    folder, record, _ = watched
    whole = referee("replay", "match.jsonl", cwd=folder)
    assert whole.returncode == 0, whole.stderr
    assert "seed 11" in whole.stdout
    assert whole.stdout.count("\ndeal ") == 48
    tampered = dict(record)
    tampered["deals"] = [dict(deal) for deal in record["deals"]]
    tampered["deals"][2]["points"] += 2
    (tmp_path / "tampered.jsonl").write_text(json.dumps(tampered) + "\n", encoding="utf-8")
    (tmp_path / "two.jsonl").write_text(2 * (json.dumps(record) + "\n"), encoding="utf-8")
    cases = [
        (("replay", folder / "match.jsonl", "--deal", "49"), 2, "match match has deals 1 to 48"),
        (("replay", folder / "match.jsonl", "r1:x,y"), 1, "no match 'r1:x,y' in it"),
        (("replay", tmp_path / "none.jsonl"), 2, "none.jsonl: cannot read the records"),
        (("replay", tmp_path / "tampered.jsonl"), 2, "tampered.jsonl:1: not a match record"),
        (("replay", tmp_path / "two.jsonl"), 1, "2 matches in it: give a match id"),
        (("replay", folder / "match.html"), 2, "not valid YAML"),  # not .jsonl: read as a league file
    ]
    for args, code, message in cases:
        result = referee(*args, cwd=tmp_path)
        assert result.returncode == code, (args, result.stderr)
        assert message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert len([line for line in result.stderr.splitlines() if line.startswith("Error")]) == 1
    assert referee("replay", tmp_path / "two.jsonl", "2", "--deal", "1", cwd=tmp_path).returncode == 0


def test_an_output_path_in_no_folder_is_refused_before_the_match(tmp_path):
    result = referee(
        "match", *SEATS[1:], "--html", tmp_path / "no" / "page.html", cwd=readable_folder(tmp_path)
    )
    assert result.returncode == 2
    assert "no folder" in result.stderr
    assert "seed" not in result.stdout  # nothing was played


@pytest.mark.skipif(bool(bubblewrap_problem()), reason="the bubblewrap sandbox does not work here")
def test_a_bot_cannot_read_the_record_of_an_earlier_match_beside_it(tmp_path):
    """With the same --seed, an earlier record would hand a bot every hand: it is masked in the
    sandbox like the logs, even where it lies in the bot's own folder."""
    hostile = f"python {ROOT}/tests/bots/hostile.py files match.jsonl match.html copy.jsonl"
    readable_folder(tmp_path)
    args = ("--seed", "5", *KEEP, "--sandbox", "required")
    assert referee("match", *SEATS[1:], *args, cwd=tmp_path).returncode == 0
    (tmp_path / "copy.jsonl").write_bytes((tmp_path / "match.jsonl").read_bytes())  # a file of the user's
    result = referee("match", hostile, SEATS[1], *args, "--logs", "logs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    said = dict(
        line.removeprefix("ATTEMPT ").split(": ", 1)
        for line in (tmp_path / "logs" / "hostile.log").read_text(encoding="utf-8").splitlines()
        if line.startswith("ATTEMPT read ")
    )
    assert said["read copy.jsonl"].startswith("GOT")  # the bot's folder is in view: the mask is what hides
    assert "GOT" not in said["read match.jsonl"]
    assert "GOT" not in said["read match.html"]


@needs_chromium
def test_the_page_opens_from_disk_alone_and_steps_card_by_card(watched, tmp_path, browser):
    folder, record, _ = watched
    alone = tmp_path / "alone.html"  # nothing beside it: no style sheet, no script file
    alone.write_bytes((folder / "match.html").read_bytes())
    browser.get(alone.as_uri())
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources == []  # the page loads nothing: style and viewer are in it
    viewer = browser.find_element(By.ID, "viewer")
    assert viewer.is_displayed()
    body = browser.find_element(By.TAG_NAME, "body")
    first = record["deals"][0]["tricks"][0]
    for played in range(1, len(first["cards"]) + 1):
        body.send_keys(Keys.ARROW_RIGHT)
        cards = viewer.find_elements(By.CSS_SELECTOR, ".played .card")
        on_table = sorted(card.get_attribute("data-card") for card in cards)
        assert on_table == sorted(first["cards"][:played])
    browser.save_screenshot(str(artifacts() / "one-match-page.png"))
    assert browser.execute_script("return getComputedStyle(document.body).fontFamily") != "Times New Roman"
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
