"""The commands that read a league's results, through the real CLI: leaderboard, export, replay, report
and matches write nothing (not even for a league never run), and `referee matches` lists and filters."""

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest

from pyramid_sdk import Match, Rules
from referee.league.modes import Seating
from referee.league.ratings import Leaderboard, Standing
from referee.league.schedule import build_schedule
from referee.match.faults import Fault, FaultKind
from referee.match.outcome import MatchStatus
from referee.report.text import forfeited_lines, leaderboard_markdown, replay_text
from referee.results.store import StoredMatch
from support import ROOT
from support.cli import referee
from support.leagues import copy_league

LEAGUE = f"""\
name: Read League
players: 2
time_control: {{per_action: 2s, bank: 20s}}
faults: {{max: 2}}
entrants:
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: floaty
    module: tests.bots.badtypes:FloatDeclarer
    cwd: {ROOT}
  - name: moved
    command: python bots/moved_away.py   # it plays, then its script goes: results must stay readable
    build: "true"
    cwd: .
"""

READERS = [
    ("leaderboard",),
    ("export",),
    ("export", "-o", "{folder}/matches.jsonl"),
    ("replay", "1"),
    ("report",),
    ("report", "-o", "{folder}/site"),
    ("matches",),
]


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("command", READERS, ids=[" ".join(c) for c in READERS])
def test_reading_a_league_never_run_writes_nothing_and_says_which_command_plays_it(tmp_path, command):
    league = tmp_path / "league.yaml"
    league.write_text(LEAGUE, encoding="utf-8")
    before = files_under(tmp_path)
    args = [arg.replace("{folder}", str(tmp_path)) for arg in command]
    result = referee(args[0], league, *args[1:], cwd=tmp_path)  # report's default folder would land here
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: {league}: nothing played yet (no results in {tmp_path / 'league.sqlite'}); "
        f"`referee run {league}` plays it\n"
    )
    assert files_under(tmp_path) == before  # no database, no secret seed, no report, no export file


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("played")
    league = folder / "league.yaml"
    league.write_text(LEAGUE, encoding="utf-8")
    (folder / "bots").mkdir()
    (folder / "bots" / "moved_away.py").write_text(
        (ROOT / "sample_bots" / "random_bot.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    for readable in (folder, folder / "bots"):  # by the sandboxed bot's uid
        readable.chmod(0o755)
    (folder / "bots" / "moved_away.py").chmod(0o644)
    result = referee("run", league)
    assert result.returncode == 7, result.stdout + result.stderr  # floaty forfeits every match it plays
    assert "forfeited: floaty forfeited every match it played (6 of 6); the last one in deal" in result.stderr
    (folder / "bots" / "moved_away.py").unlink()  # a bot that does not start is no result: after the run
    return league


def test_reading_a_played_league_changes_nothing_on_disk(played, tmp_path):
    before = files_under(played.parent)
    for command in READERS:
        args = [arg.replace("{folder}", str(tmp_path)) for arg in command]
        result = referee(args[0], played, *args[1:], cwd=tmp_path)
        assert result.returncode == 0, (command, result.stdout + result.stderr)
        if "-o" in command and command[0] == "export":  # it says what it wrote, and where
            assert (
                result.stdout
                == f"export: 12 matches of Read League written to {tmp_path / 'matches.jsonl'}\n"
            )
    assert files_under(played.parent) == before
    assert (tmp_path / "site" / "index.html").is_file()
    written = (tmp_path / "matches.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(written) == 12  # C(4, 2) tables x 2 rotations
    assert all(json.loads(line)["league"] == "Read League" for line in written)


def listed(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """The match rows of `referee matches`: each split into its words."""
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "match", "status", "points", "faults"]
    return [line.split() for line in lines[1:-1]]


def test_matches_lists_every_stored_match_with_its_points_and_faults(played):
    rows = listed(referee("matches", played))
    assert [row[0] for row in rows] == [str(n) for n in range(1, 13)]  # schedule order
    exported = {
        line["match_id"]: line for line in map(json.loads, referee("export", played).stdout.splitlines())
    }
    for row in rows:
        line = exported[row[1]]
        assert row[2] == "complete"
        text = " ".join(row)
        forfeited = dict(zip(line["forfeits"], line["forfeit_deals"], strict=True))
        for seat, name in enumerate(line["seats"]):  # the credited points, as the leaderboard counts them
            forfeit = f" (forfeit in deal {forfeited[seat]})" if seat in forfeited else ""
            assert f"{name} {line['credited'][seat]}{forfeit}" in text
        if "floaty" in line["seats"]:  # it declares floats: two malformed faults, then it forfeits
            assert text.endswith("floaty 2") or "floaty 2 " in text
    assert referee("matches", played).stdout.splitlines()[-1] == (
        "12 of 12 scheduled matches stored: 12 complete, 0 void"
    )


def test_matches_filters_by_entrant_and_status(played, tmp_path):
    copy = copy_league(played, tmp_path)
    with sqlite3.connect(copy.with_suffix(".sqlite")) as db:  # as a match void after its retries is kept
        db.execute("UPDATE matches SET status = 'void' WHERE position = 1")
    floaty = listed(referee("matches", copy, "--entrant", "floaty"))
    assert len(floaty) == 6  # C(4, 2) tables, 3 with floaty, x 2 rotations
    assert all("floaty" in row[1] for row in floaty)
    void = listed(referee("matches", copy, "--status", "void"))
    assert [(row[0], row[2]) for row in void] == [("2", "void")]
    assert void[0][3:5] == [void[0][1].split(":")[1].split(",")[0], "—"]  # a void match has no points
    complete = listed(referee("matches", copy, "--status", "complete", "--entrant", "random"))
    assert len(complete) == 5  # random's 6 matches, less the void one
    assert all(row[2] == "complete" and "random" in row[1] for row in complete)
    summary = referee("matches", copy, "--status", "void").stdout.splitlines()[-1]
    assert summary == "12 of 12 scheduled matches stored: 11 complete, 1 void; 1 shown"
    unknown = referee("matches", copy, "--entrant", "nobody")
    assert unknown.returncode == 2
    assert "no entrant 'nobody' in Read League" in unknown.stderr


def test_replay_of_a_match_not_stored_points_to_the_listing(played):
    result = referee("replay", played, "r9:nobody,else")
    assert result.returncode == 1
    assert result.stderr.strip().endswith(f"`referee matches {played}` lists the stored ones")
    assert referee("matches", played).returncode == 0


@pytest.mark.quick
def test_a_replay_keeps_hands_and_totals_aligned_with_long_names():
    names = ("al", "an-entrant-with-a-long-name.v2", "bo")
    match = Match(Rules(players=3), seed=4, seats=names)
    match.play_out()  # by the engine's default actions (the autopilot's)
    stored = StoredMatch("r1:x", 1, 1, 0, 4, MatchStatus.COMPLETE, match.record(), (), (), ())
    lines = replay_text(stored).splitlines()
    hands = [line for line in lines if line.startswith("    ") and line.split(":")[0].strip() in names]
    assert len(hands) == 3 * 48
    assert len({line.index(":") for line in hands}) == 1  # every hand starts in the same column
    totals = [line for line in lines if line[:3] in ("1. ", "2. ", "3. ")]
    assert len(totals) == 3
    assert len({len(line.rstrip()) for line in totals}) == 1  # the totals end in the same column


def test_the_cli_and_the_html_report_round_every_figure_the_same_way(played, tmp_path):
    site = referee("report", played, "-o", tmp_path / "site")
    assert site.returncode == 0, site.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    in_html = [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]
    markdown = referee("leaderboard", played, "--format", "markdown").stdout.splitlines()
    assert markdown[:2] == ["Format: round-robin", ""]
    markdown = markdown[4:]  # the rows, after the format line, a blank line, the header and the rule
    in_cli = [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown]
    assert in_cli == in_html
    table = referee("leaderboard", played).stdout
    for row in in_cli:
        assert re.search(r"\s+".join(map(re.escape, row)), table), row


@pytest.mark.quick
def test_a_figure_is_rounded_once_from_its_exact_value():
    standing = Standing("x", mu=25.00549, sigma=1.0)  # rounded to 3 places first, it would show 25.00
    assert leaderboard_markdown(Leaderboard((standing,), ())).splitlines()[2].split("|")[3].strip() == "25.01"
    template = jinja2.Template('{{ "%.2f"|format(mu) }}')  # as templates/index.html writes it
    assert template.render(mu=standing.mu) == "25.01"
    cells = leaderboard_markdown(Leaderboard((Standing("idle"),), ())).splitlines()[2].split("|")
    assert cells[10].strip() == "—"  # no tables, no interval: as the report says


def forfeiting(scheduled, seat: int) -> StoredMatch:
    """The scheduled two-seat match played to its end, ``seat`` forfeiting in deal 1 after playing a card
    it does not hold."""
    match = Match(Rules(players=2), seed=scheduled.seed, seats=scheduled.entrants)
    match.forfeit(seat)
    match.play_out()
    fault = Fault(
        seat, 1, FaultKind.ILLEGAL_ACTION, f"seat {seat} cannot play KS: it is not in the seat's hand"
    )
    return StoredMatch(
        scheduled.match_id, 1, 1, 0, scheduled.seed, MatchStatus.COMPLETE, match.record(), (fault,), (), ()
    )


@pytest.mark.quick
def test_an_entrant_that_forfeited_everything_is_named_with_its_last_fault_masked_while_hidden():
    league = SimpleNamespace(entrants=[SimpleNamespace(name="quitter"), SimpleNamespace(name="steady")])
    first, second = schedule = build_schedule(5, ("quitter", "steady"), 2, 1, Seating.BALANCED)
    assert (first.entrants, second.entrants) == (("quitter", "steady"), ("steady", "quitter"))
    stored = {first.match_id: forfeiting(first, 0)}
    decoded: list[str] = []

    def load(ids):
        decoded.extend(ids)
        return (stored[match_id] for match_id in ids)

    def lines():
        summaries = {match_id: match.summary for match_id, match in stored.items()}
        return forfeited_lines(league, schedule, summaries, load, 7)

    assert lines() == [  # the table's other seating is still to come: its cards are secret
        "forfeited: quitter forfeited every match it played (1 of 1); the last one in deal 1, "
        "illegal_action: seat 0 cannot play ??: it is not in the seat's hand (exit 7)"
    ]
    assert decoded == [first.match_id]  # the summaries said who; only that match was decoded
    stored[second.match_id] = forfeiting(second, 1)
    assert lines() == [  # the table is complete: its deals may be shown
        "forfeited: quitter forfeited every match it played (2 of 2); the last one in deal 1, "
        "illegal_action: seat 1 cannot play KS: it is not in the seat's hand (exit 7)"
    ]
    stored[second.match_id] = forfeiting(second, 0)
    assert lines() == []  # each forfeited one match of two


PLAYING_ONLY = ("grpc", "google.protobuf", "jinja2", "distributed", "referee.match.sessions", "referee.check")
"""What reading results never needs: the wire, the report's templates, Dask, the bots' sessions."""


@pytest.mark.parametrize("command", [("leaderboard",), ("leaderboard", "--crosstable"), ("matches",)])
def test_the_commands_that_read_results_load_nothing_that_plays(played, command):
    """A long-running server re-rates after every match, and a user reads the leaderboard often: what it
    imports is its start-up. Checked on Python's import profile of the real command."""
    result = referee(
        command[0], played, *command[1:], timeout=120, env=os.environ | {"PYTHONPROFILEIMPORTTIME": "1"}
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    modules = {line.rsplit("|", 1)[1].strip() for line in lines[1:]}
    assert "referee.league.config" in modules  # the profile was read
    loaded = sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in PLAYING_ONLY))
    assert not loaded, f"referee {' '.join(command)} loads {loaded[:5]}"
