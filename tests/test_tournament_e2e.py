"""Tournaments end to end through the real CLI, with real bot processes, real SQLite files and gRPC."""

import json
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from pyramid_sdk import Match, MatchRecord
from referee.league.modes import Seating
from referee.league.schedule import build_schedule
from support import ROOT
from support.cli import REFEREE, export, referee
from support.leagues import Played, complete_matches, dump, sampled_league, small_league
from support.processes import bot_processes


def played_copy(finished: Played, folder: Path) -> Path:
    """:data:`SMALL` in ``folder`` with a copy of the database ``finished`` played: the very league a
    first ``referee run`` of it plays (seed 11, concurrency 1), without playing its 6 matches again."""
    path = small_league(folder)
    (folder / "results.sqlite").write_bytes((finished.path.parent / "results.sqlite").read_bytes())
    return path


def test_a_league_runs_to_a_leaderboard_and_its_export_obeys_the_rules(finished):
    path, run, lines = finished
    assert "Small League" in run.stdout
    for name in ("random", "heuristic", "random-inproc"):
        assert name in run.stdout
    assert len(lines) == 6  # C(3,2) tables x 2 seatings
    assert export(path, "--format", "jsonl") == lines  # the default format, asked for by name
    fields = {
        "match_id",
        "league",
        "round",
        "table",
        "table_id",
        "rotation",
        "seed",
        "players",
        "rules",
        "seats",
        "status",
        "deals_hidden",
        "deals",
        "totals",
        "credited",
        "ranks",
        "forfeits",
        "forfeit_deals",
        "faults",
    }
    for line in lines:
        assert set(line) == fields
        assert line["credited"] == line["totals"]  # nobody forfeited
        assert line["status"] == "complete"
        assert line["deals_hidden"] is False  # every table is complete
        assert set(line["deals"][0]) == {
            "number",
            "dealer",
            "declarer",
            "hands",
            "declared",
            "trump",
            "tricks",
            "taken",
            "points",
        }
        record = MatchRecord.from_dict(
            {
                **line,
                "rules": {**line["rules"], "players": line["players"]},
                "deals": [{**d, "talk": []} for d in line["deals"]],
                "complete": True,
            }
        )
        Match.replay(record)  # raises if any deal breaks the rules
        assert line["faults"] == []
    by_table = {}
    for line in lines:
        by_table.setdefault(line["table_id"], []).append(line)
    for pair in by_table.values():  # duplicate: both seatings deal the same hands to the same seats
        assert pair[0]["seed"] == pair[1]["seed"]
        assert pair[0]["deals"][0]["hands"] == pair[1]["deals"][0]["hands"]
        assert pair[0]["seats"] == pair[1]["seats"][::-1]
    board = json.loads(referee("leaderboard", path, "--format", "json", check=True).stdout)
    assert [row["rank"] for row in board] == [1, 2, 3]
    assert {"rank", "entrant", "mu", "sigma", "conservative", "tables", "matches"} <= set(board[0])
    assert board[0]["entrant"] == "heuristic"
    assert all((row["tables"], row["matches"]) == (2, 4) for row in board)
    conservative = [row["conservative"] for row in board]
    assert conservative == sorted(conservative, reverse=True)
    assert "| # |" in referee("leaderboard", path, "--format", "markdown", check=True).stdout
    assert referee("leaderboard", path, "--format", "csv", check=True).stdout.startswith(
        "rank,entrant,mu,sigma"
    )


def test_replay_draws_the_match_and_its_pyramids(finished):
    path, _, lines = finished
    text = referee("replay", path, lines[0]["match_id"], check=True).stdout
    assert "deal 32" in text
    assert text.count("trick 6:") == 32
    assert "taken  declared   points" in text
    assert referee("replay", path, "1", check=True).stdout == text
    missing = referee("replay", path, "r9:nobody")
    assert missing.returncode == 1
    assert "no stored match 'r9:nobody'" in missing.stderr


def test_concurrency_two_gives_identical_results(finished, tmp_path):
    reference_path, _, reference = finished
    path = small_league(tmp_path, concurrency=2)
    referee("run", path, check=True)
    assert export(path) == [{**line, "league": line["league"]} for line in reference]
    assert (
        referee("leaderboard", path, "--format", "json", check=True).stdout
        == referee("leaderboard", reference_path, "--format", "json", check=True).stdout
    )


def test_running_again_plays_nothing_more(finished):
    path, _, lines = finished
    again = referee("run", path, check=True)
    assert "6/6 matches" in again.stdout
    assert export(path) == lines


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_an_interrupted_run_resumes_to_the_same_results(finished, tmp_path, how):
    _, _, reference = finished
    path = small_league(tmp_path, concurrency=2)
    process = subprocess.Popen(
        [REFEREE, "run", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while complete_matches(tmp_path / "results.sqlite") < 2 and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(how)
    _, err = process.communicate(timeout=60)
    if how == signal.SIGTERM:
        assert process.returncode == 130
        assert "run again to resume" in err
    stored = complete_matches(tmp_path / "results.sqlite")
    assert 2 <= stored < 6 or how == signal.SIGTERM
    deadline = time.monotonic() + 5
    while bot_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bot_processes() == [], "bots outlived the interrupted referee"
    referee("run", path, check=True)
    assert export(path) == reference


def test_an_edit_that_changes_results_needs_fresh(finished, tmp_path):
    path = played_copy(finished, tmp_path)
    path.write_text(path.read_text().replace("seed: 11", "seed: 12"))
    refused = referee("run", path)
    assert refused.returncode == 1
    assert "--fresh" in refused.stderr
    referee("run", path, "--fresh", check=True)
    assert export(path)[0]["seed"] != export(finished[0])[0]["seed"]


def test_table_ids_stay_unique_and_unchanged_when_an_entrant_is_added_in_front(finished, tmp_path):
    path = played_copy(finished, tmp_path)
    before = {line["match_id"]: line for line in export(path)}
    text = path.read_text().replace(
        "entrants:\n",
        f"entrants:\n  - name: alpha\n    command: python sample_bots/random_bot.py\n    cwd: {ROOT}\n",
    )
    path.write_text(text)
    referee("run", path, check=True)
    after = export(path)
    assert len(after) == 12  # C(4,2) tables x 2 seatings
    for line in after:
        assert line["table_id"] == "r1:{" + ",".join(sorted(line["seats"])) + "}"
        if line["match_id"] in before:
            assert line["table_id"] == before[line["match_id"]]["table_id"]
    # unique: one id per table, shared by exactly its two seatings
    ids = [line["table_id"] for line in after]
    assert len(set(ids)) == 6
    assert all(ids.count(table) == 2 for table in ids)
    # while `table` repeats: the old matches keep the places stored with them, alpha's new tables took
    # places 1-3 of the grown league too
    assert len({line["table"] for line in after}) < 6


def test_adding_an_entrant_only_adds_matches(finished, tmp_path):
    path = played_copy(finished, tmp_path)
    before = {line["match_id"]: line for line in export(path)}
    result = referee(
        "submit",
        path,
        "--name",
        "newcomer",
        "--cwd",
        ROOT,
        "--",
        "python",
        "sample_bots/random_bot.py",
        check=True,
    )
    assert "PASS" in result.stdout
    text = path.read_text()
    assert "# a small test league" in text
    assert "# kept on submit" in text
    assert "  - name: newcomer\n    command: python sample_bots/random_bot.py\n" in text
    referee("run", path, check=True)
    after = {line["match_id"]: line for line in export(path)}
    names = ("random", "heuristic", "random-inproc", "newcomer")
    assert set(after) == {m.match_id for m in build_schedule(11, names, 2, 1, Seating.BALANCED)}
    assert all(after[match_id] == line for match_id, line in before.items())
    refused = referee("submit", path, "--name", "newcomer", "--", "python", "sample_bots/random_bot.py")
    assert refused.returncode == 2


def test_check_passes_a_good_bot_and_fails_a_bad_one():
    good = referee("check", "--cwd", ROOT, "--", "python", "sample_bots/random_bot.py", check=True)
    assert "PASS" in good.stdout
    assert "latency" in good.stdout
    assert "p99" in good.stdout
    for players in (2, 3, 4):
        assert f"{players} players" in good.stdout
    bad = referee("check", "--cwd", ROOT, "--", "python", "tests/bots/misbehaving.py", "illegal")
    assert bad.returncode == 1
    assert "illegal_action" in bad.stdout
    missing = referee("check", "--", "./no_such_bot")
    assert missing.returncode == 1
    assert "no program './no_such_bot'" in missing.stdout


def test_a_failed_build_disqualifies_the_entrant_and_the_league_goes_on(tmp_path):
    path = small_league(tmp_path)
    text = path.read_text().replace(
        "  - name: random-inproc\n",
        "  - name: broken\n    command: ./bot.sh\n    build: exit 3\n    cwd: .\n  - name: random-inproc\n",
    )
    path.write_text(text)
    stopped = referee("run", path)  # the preflight stops the run: nothing stored
    assert stopped.returncode == 4, stopped.stderr
    assert "preflight: broken: build 'exit 3' failed with code 3" in stopped.stderr
    assert complete_matches(tmp_path / "results.sqlite") == 0
    result = referee("run", path, "--skip-broken")
    assert result.returncode == 3, result.stderr
    assert "disqualified: broken: build 'exit 3' failed with code 3" in result.stderr
    assert "6 match(es) not played" in result.stderr  # 3 tables x 2 seatings
    lines = export(path)
    assert len(lines) == 6  # C(3,2) tables x 2 seatings without broken: a disqualification is no result
    for line in lines:
        assert "broken" not in line["seats"]
        assert line["forfeits"] == []
    assert (tmp_path / "results-logs" / "broken.build.log").exists()
    board = referee("leaderboard", path, check=True)
    assert "disqualified: broken: build 'exit 3' failed with code 3" in board.stdout


def test_a_league_without_a_seed_gets_a_secret_one_kept_in_its_database(tmp_path):
    path = small_league(tmp_path)
    path.write_text(path.read_text().replace("seed: 11\n", "").replace("concurrency: 1", "concurrency: 2"))
    referee("run", path, check=True)
    first = export(path)
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        secret = int(db.execute("SELECT value FROM meta WHERE key = 'secret_seed'").fetchone()[0])
    assert secret.bit_length() > 40  # nothing a bot could search through
    assert "6/6 matches" in referee("run", path, check=True).stdout  # the same secret: nothing to replay
    assert export(path) == first
    referee("run", path, "--fresh", check=True)
    assert {line["seed"] for line in export(path)}.isdisjoint({line["seed"] for line in first})


def eta_seconds(line: str) -> int:
    found = re.search(r"ETA (?:(\d+)m)?(\d+)s", line)
    assert found, line
    return 60 * int(found.group(1) or 0) + int(found.group(2))


def test_the_first_eta_after_a_resume_comes_from_this_run_s_matches_and_lines_fit_80_columns(
    finished, tmp_path
):
    copy = played_copy(finished, tmp_path)
    # A slow build before the first match: the old ETA counted it as match time.
    copy.write_text(
        copy.read_text().replace(
            "    command: python sample_bots/heuristic.py",
            "    command: python sample_bots/heuristic.py\n    build: sleep 4",
        )
    )
    database = tmp_path / "results.sqlite"
    with sqlite3.connect(database) as db:  # as a run interrupted after three matches leaves it
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM matches WHERE position >= 3")
        # The build is part of heuristic's fingerprint: unrecorded, it is not a new version here.
        db.execute("UPDATE entrants SET fingerprint = ''")
    resumed = referee("run", copy, check=True)
    lines = [line for line in resumed.stdout.splitlines() if " matches  " in line and "ETA" in line]
    assert [line.split()[0] for line in lines] == ["4/6", "5/6", "6/6"]
    with sqlite3.connect(database) as db:
        first = db.execute("SELECT elapsed FROM matches WHERE position = 3").fetchone()[0]
    assert abs(eta_seconds(lines[0]) - 2 * first) <= 1.5  # two left, each as long as this run's first
    assert eta_seconds(lines[-1]) == 0
    assert all(len(line) <= 80 for line in resumed.stdout.splitlines() if "ETA" in line)


NEWCOMER = f"  - name: newcomer\n    command: python sample_bots/random_bot.py\n    cwd: {ROOT}\n"


def tables_of(lines: list[dict]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in lines:
        found.setdefault(line["table_id"], set()).update(line["seats"])
    return found


def test_a_sampled_league_that_grows_keeps_its_played_tables_and_results(tmp_path):
    path = sampled_league(tmp_path)
    database = tmp_path / "league.sqlite"
    dry = referee("run", path, "--dry-run", check=True).stdout
    assert "schedule: 5 tables, 10 matches" in dry  # 5 entrants x 2 tables / 2 seats, 2 seatings each
    assert "no results database yet" in dry
    assert not database.exists()
    first = referee("run", path, check=True)
    assert "10/10 matches" in first.stdout
    assert "format: sampled, 2 tables per entrant" in first.stdout
    before = {line["match_id"]: line for line in export(path)}
    assert len(before) == 10
    assert all(
        len([t for t in tables_of(list(before.values())).values() if n in t]) == 2 for n in ("r1", "h1")
    )
    board = json.loads(referee("leaderboard", path, "--format", "json", check=True).stdout)
    assert {row["format"] for row in board} == {"sampled"}
    assert all(row["tables"] == 2 for row in board)  # duplicate rating: each table one rated game
    markdown = referee("leaderboard", path, "--format", "markdown", check=True).stdout
    assert markdown.startswith("Format: sampled, 2 tables per entrant\n\n| # |")
    referee("report", path, "-o", tmp_path / "site", check=True)
    index = (tmp_path / "site" / "index.html").read_text()
    assert "Format: sampled, 2 tables per entrant." in index
    assert " · seed 23</p></footer>" in index  # the file's own seed, which its organiser published

    path.write_text(path.read_text() + NEWCOMER)
    dry = referee("run", path, "--dry-run", check=True).stdout
    assert "schedule: 7 tables, 14 matches" in dry
    assert "10 played, 4 to play" in dry
    assert "the mean of 10 stored match(es)" in dry
    assert "14/14 matches" in referee("run", path, check=True).stdout
    after = {line["match_id"]: line for line in export(path)}
    assert all(after[match_id] == line for match_id, line in before.items())  # same ids, seeds, results
    new_tables = [seats for seats in tables_of(list(after.values())).values() if "newcomer" in seats]
    assert len(new_tables) == 2
    assert "14/14 matches" in referee("run", path, check=True).stdout  # and the grown design is stable


def test_a_dry_run_draws_no_secret_seed_and_writes_nothing(tmp_path):
    path = sampled_league(tmp_path)
    path.write_text(path.read_text().replace("seed: 23\n", ""))
    database = tmp_path / "league.sqlite"
    dry = referee("run", path, "--dry-run", check=True)
    assert "no results database yet" in dry.stdout
    # Nothing stored to time: every entrant played a few deals of a sample match, and was timed.
    timed = re.search(r"^timed on \d+ sample\(s\) of 4 deals \(start, decision\): (.*)$", dry.stdout, re.M)
    assert [item.split()[0] for item in timed.group(1).split(", ")] == [
        "h1",
        "heuristic",
        "r1",
        "r2",
        "random",
    ]
    assert re.search(
        r"^estimate: \d+s at 2 matches at once \(\d+\.\ds a match: each seat's start", dry.stdout, re.M
    )
    assert not database.exists()
    assert list(tmp_path.iterdir()) == [path]  # no logs folder either
    database.write_bytes(b"")  # a file with no results in it yet: as good as none
    assert "nothing stored yet in" in referee("run", path, "--dry-run", check=True).stdout
    assert database.read_bytes() == b""
    database.write_bytes(b"not a database, but long enough to be read as one" * 40)
    broken = referee("run", path, "--dry-run")
    assert broken.returncode == 1
    assert broken.stderr.startswith(f"Error: {database}: not a results database")
    assert len(broken.stderr.splitlines()) == 1
    database.unlink()
    referee("run", path, check=True)
    content, names = dump(database), sorted(p.name for p in tmp_path.iterdir())
    secret = dict(re.findall(r"INSERT INTO \"meta\" VALUES\('(\w+)','(\d+)'\)", "\n".join(content)))[
        "secret_seed"
    ]
    dry = referee("run", path, "--dry-run", "--concurrency", "1", check=True).stdout
    assert "10 played, 0 to play" in dry
    assert secret not in dry
    assert dump(database) == content  # not a row written (SQLite may fold its WAL file into the database)
    assert {p.name for p in tmp_path.iterdir()} <= set(names)  # no file of ours
    fresh = referee("run", path, "--dry-run", "--fresh", check=True).stdout
    assert "--fresh: the 10 match(es) stored" in fresh
    assert "0 played, 10 to play" in fresh
    path.write_text(path.read_text() + "rules: {talk: off}\n")
    other = referee("run", path, "--dry-run", "--workers", "3", check=True).stdout
    assert "holds results of other league settings: the run would refuse, see --fresh" in other
    assert "0 played, 10 to play" in other
    # No more at once than the machine has CPUs: the "as" part shows on a machine with fewer than 3.
    at = r"at 3 matches at once (\(on \d CPUs?: as [12]\) )?"
    assert re.search(rf"estimate: \d+s {at}\(\d+\.\ds a match", other)
    assert dump(database) == content


def test_a_gauntlet_seats_one_challenger_at_every_table(tmp_path):
    path = sampled_league(tmp_path)
    text = path.read_text().replace(
        "schedule: {format: sampled, tables_per_entrant: 2}",
        "schedule: {format: gauntlet, challengers: [heuristic, h1], tables_per_challenger: 2}",
    )
    path.write_text(text.replace("players: 2", "players: 3") + NEWCOMER)
    run = referee("run", path, check=True)
    assert "24/24 matches" in run.stdout  # 2 challengers x 2 tables x 6 seatings
    assert "format: gauntlet of heuristic, h1 against the field, 2 tables per challenger" in run.stdout
    lines = export(path)
    for seats in tables_of(lines).values():
        assert len(seats & {"heuristic", "h1"}) == 1
    met = [name for seats in tables_of(lines).values() for name in seats if name not in ("heuristic", "h1")]
    assert sorted(met.count(name) for name in ("random", "r1", "r2", "newcomer")) == [2, 2, 2, 2]
