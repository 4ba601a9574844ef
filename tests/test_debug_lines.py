"""The bots' debug lines, end to end with real bot processes over real gRPC: what a Python and a Node.js
bot send with their answers is stored apart, printed by `referee logs` (escaped), never shown by an
export, a report, a served page or the API, bounded as docs/PROTOCOL.md says, deleted with its match,
and never changes the play (a twin league of the same bots without debug lines plays the same)."""

from __future__ import annotations

import contextlib
import re
import signal
import sqlite3
import subprocess
import urllib.request
from pathlib import Path

import pytest

from pyramid_sdk.debugging import MAX_DEBUG_BYTES, MAX_DEBUG_PER_MATCH
from referee.results.store import Store
from support import ROOT
from support.cli import REFEREE, referee
from support.leagues import write_league
from support.net import free_port
from support.serve import get, until

MARKER = "dbg-7f3a9c-only-for-the-author"  # as tests/bots/debugger.py and debugger.js write it

LEAGUE = f"""\
name: Debug League
seed: 31
players: 2
schedule: {{format: round-robin, rounds: 1, seating: single}}
time_control: {{per_action: 5s, bank: 60s}}
database: results.sqlite
entrants:
  - name: debugger
    command: python tests/bots/debugger.py @lines@
    cwd: {ROOT}
  - name: flood
    command: python tests/bots/debugger.py @flood@
    cwd: {ROOT}
  - name: node-debugger
    command: node tests/bots/debugger.js @node@
    cwd: {ROOT}
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""
"""Four entrants, each pair once: 6 matches of two players. The random bot sends no debug line."""


def league_text(quiet: bool) -> str:
    """:data:`LEAGUE` with its bots writing their debug lines, or all of them ``quiet``."""
    modes = {"lines": "lines", "flood": "flood", "node": ""}
    text = LEAGUE
    for key, mode in modes.items():
        text = text.replace(f"@{key}@", "quiet" if quiet else mode)
    return text


@pytest.fixture(scope="module")
def leagues(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The league played with its debug lines, and its quiet twin."""
    played = []
    for quiet in (False, True):
        path = write_league(tmp_path_factory.mktemp("quiet" if quiet else "debug"), league_text(quiet))
        referee("run", path, check=True, timeout=900)
        played.append(path)
    return played[0], played[1]


def rows(database: Path, query: str, *args: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(database)) as db:
        return db.execute(query, args).fetchall()


def decisions(database: Path, entrant: str) -> int:
    return int(rows(database, "SELECT sum(decisions) FROM seats WHERE entrant = ?", entrant)[0][0])


def test_every_answer_s_line_is_printed_by_referee_logs_one_a_line_escaped(leagues):
    league, _ = leagues
    result = referee("logs", league, "debugger", check=True)
    lines = result.stdout.splitlines()
    assert len(lines) == decisions(league.parent / "results.sqlite", "debugger") > 100
    assert all(MARKER in line for line in lines)
    first = lines[0]
    assert re.fullmatch(r"r1:\S+  deal 1  step \d  .*", first), first
    assert '</script><b>x</b> & "quoted"\\n\\x1b[2Jsecond line\\n' + MARKER in first  # escaped, whole
    assert "\x1b" not in result.stdout
    node = referee("logs", league, "node-debugger", check=True).stdout.splitlines()
    assert len(node) == decisions(league.parent / "results.sqlite", "node-debugger")
    assert re.search(rf"  deal 1  step 1  {MARKER} node deal 1 declares$", "\n".join(node), re.MULTILINE)


def test_logs_takes_one_match_and_its_last_lines(leagues):
    league, _ = leagues
    every = referee("logs", league, "node-debugger", check=True).stdout.splitlines()
    match_id = every[-1].split()[0]
    of_match = [line for line in every if line.split()[0] == match_id]
    last = referee("logs", league, "node-debugger", "--match", match_id, "--limit", "3", check=True)
    assert last.stdout.splitlines() == of_match[-3:]
    whole = referee("logs", league, "node-debugger", "--match", match_id, check=True)
    assert whole.stdout.splitlines() == of_match


def test_a_bot_without_debug_lines_has_none_and_plays_as_before(leagues):
    league, quiet = leagues
    result = referee("logs", league, "random", check=True)
    assert result.stdout == ""
    assert result.stderr.strip() == "no debug lines of random in Debug League"
    assert referee("logs", quiet, "debugger", check=True).stdout == ""
    # The same bots without their lines played exactly the same matches: debug never touches the play.
    debug_export = referee("export", league, check=True).stdout
    assert debug_export == referee("export", quiet, check=True).stdout
    assert '"faults": []' in debug_export
    assert '"kind"' not in debug_export


def test_texts_over_the_caps_are_not_kept_and_cost_no_fault(leagues):
    league, _ = leagues
    database = league.parent / "results.sqlite"
    flood = rows(
        database,
        "SELECT match_id, deal, step, fate, size, length(CAST(text AS BLOB)) FROM debug_lines "
        "WHERE entrant = 'flood' ORDER BY match_id, deal, step",
    )
    by_match: dict[object, list[tuple[object, ...]]] = {}
    for row in flood:
        by_match.setdefault(row[0], []).append(row)
    assert len(by_match) == 3
    for lines in by_match.values():
        assert [row[3] for row in lines[:3]] == ["kept", "kept", "too-long"]
        assert lines[2][4:] == (len(MARKER) + 2000, 0)  # refused whole: never cut
        kept = [row for row in lines if row[3] == "kept"]
        assert all(row[4] == row[5] == 1000 for row in kept)
        assert len(kept) == MAX_DEBUG_PER_MATCH // 1000  # every line up to the seat's match total
        assert {row[3] for row in lines[len(kept) + 1 :]} == {"match-full"}
        assert all(row[5] == 0 for row in lines if row[3] != "kept")
    shown = referee("logs", league, "flood", check=True).stdout
    assert (
        f"(not kept: {len(MARKER) + 2000} bytes, over the limit of {MAX_DEBUG_BYTES} bytes per answer)"
        in shown
    )
    assert f"this match's lines of the entrant would pass {MAX_DEBUG_PER_MATCH})" in shown
    told = (league.parent / "results-logs" / "flood.log").read_text(encoding="utf-8")
    assert "referee says: debug text of deal 1, step " in told
    assert (
        f"not kept ({len(MARKER) + 2000} bytes): over the limit of {MAX_DEBUG_BYTES} bytes per answer" in told
    )
    assert "the action counts" in told
    assert "fault" not in told


def test_no_export_report_page_or_api_answer_shows_a_debug_line(leagues, tmp_path):
    league, _ = leagues
    database = league.parent / "results.sqlite"
    assert rows(database, "SELECT count(*) FROM debug_lines WHERE text LIKE ?", f"%{MARKER}%")[0][0] > 300
    for command in (
        ("export",),
        ("replay", "1"),
        ("replay", "1", "--deal", "1"),
        ("matches",),
        ("leaderboard",),
    ):
        shown = referee(command[0], league, *command[1:], check=True)
        assert MARKER not in shown.stdout + shown.stderr, command
    referee("report", league, "-o", tmp_path / "site", check=True)
    files = [path for path in (tmp_path / "site").rglob("*") if path.is_file()]
    assert len(files) > 5
    assert not [path for path in files if MARKER.encode() in path.read_bytes()]
    assert [path for path in files if b"node-debugger" in path.read_bytes()]  # the entrants' pages were read
    seen = served_answers(league)
    assert len(seen) > 20
    assert not [path for path, body in seen.items() if MARKER.encode() in body]
    match_pages = [path for path, body in seen.items() if b"r1:" in body and not path.startswith("/api/")]
    assert match_pages  # pages that show the matches were read, not only the API


def served_answers(league: Path) -> dict[str, bytes]:
    """Every page and API answer a `referee serve` of the played league gives, by path: the pages the
    index links to (and theirs), the API's lists, each match and each entrant."""
    port = free_port()
    process = subprocess.Popen(
        [REFEREE, "serve", league.name, "--http", f"127.0.0.1:{port}"],
        cwd=league.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: dict[str, bytes] = {}
    try:
        until("the server answers", lambda: bool(get(port, "/api/v1/live") is not None))

        def fetch(path: str) -> bytes:
            if path not in seen:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as answer:
                    seen[path] = answer.read()
            return seen[path]

        pages = ["/"]
        while pages and len(seen) < 300:
            body = fetch(pages.pop())
            for link in re.findall(rb'href="(/?[^":#?]*)"', body):
                path = "/" + link.decode().lstrip("/")
                if path not in seen and path not in pages and not path.startswith("/static/"):
                    pages.append(path)
        for path in ("/api/v1/leaderboard", "/api/v1/live", "/api/v1/entrants"):
            fetch(path)
        for match in get(port, "/api/v1/matches")["matches"]:
            fetch("/api/v1/matches/" + urllib.request.quote(match["match_id"], safe=""))
        for name in ("debugger", "flood", "node-debugger", "random"):
            fetch(f"/api/v1/entrants/{name}")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
    return seen


def test_bad_input_is_one_line_with_the_commands_exit_codes(leagues, tmp_path):
    league, _ = leagues
    unknown = referee("logs", league, "nobody")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        "Error: no entrant 'nobody' in Debug League; its entrants are debugger, flood, node-debugger, random"
    ]
    no_match = referee("logs", league, "debugger", "--match", "r9:x,y")
    assert no_match.returncode == 1
    assert len(no_match.stderr.strip().splitlines()) == 1
    assert "no stored match 'r9:x,y'" in no_match.stderr
    (theirs,) = rows(
        league.parent / "results.sqlite",
        "SELECT match_id FROM seats GROUP BY match_id HAVING sum(entrant = 'debugger') = 0 LIMIT 1",
    )[0]
    absent = referee("logs", league, "debugger", "--match", theirs)
    assert absent.returncode == 1
    assert f"debugger did not play match {theirs}" in absent.stderr
    never_run = write_league(tmp_path / "never", league_text(quiet=False))
    result = referee("logs", never_run, "debugger")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {never_run}: nothing played yet (no results in {never_run.parent / 'results.sqlite'}); "
        f"`referee run {never_run}` plays it"
    ]
    assert not (tmp_path / "never" / "results.sqlite").exists()


def test_a_match_s_debug_lines_go_with_it(leagues, tmp_path):
    league, _ = leagues
    copy = tmp_path / "results.sqlite"
    with contextlib.closing(sqlite3.connect(league.parent / "results.sqlite")) as source:
        source.execute("VACUUM INTO ?", (str(copy),))
    lines = "SELECT count(*) FROM debug_lines d JOIN seats s USING (match_id) WHERE s.entrant = ?"
    assert rows(copy, lines, "debugger")[0][0] > 0
    store = Store(copy)
    try:
        store.set_versions({}, ["debugger"])  # a new version of it: its matches go, to be played again
        assert rows(copy, lines, "debugger")[0][0] == 0
        assert rows(copy, "SELECT count(*) FROM debug_lines WHERE entrant = 'flood'")[0][0] > 0
        store.forget(tmp_path / "kept.sqlite")  # --fresh
        assert rows(copy, "SELECT count(*) FROM debug_lines")[0][0] == 0
    finally:
        store.close()
    assert rows(tmp_path / "kept.sqlite", "SELECT count(*) FROM debug_lines")[0][0] > 0  # the copy kept
