"""Start failures are not results, and the preflight: through the real CLI, with real bot processes
(issue #15). The flaky bot counts its starts in a file, so these leagues run with ``sandbox: none``."""

import sqlite3
from pathlib import Path

from support import ROOT
from support.cli import export, referee
from support.leagues import PROCESS_BOTS, complete_matches, write_league

LEAGUE = f"""\
name: Start Failures
seed: 5
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 1
sandbox: none   # the flaky bot keeps its count of starts in a file outside /tmp
database: results.sqlite
entrants:
{PROCESS_BOTS}  - name: flaky
    command: python tests/bots/flaky_start.py {{counter}} {{starts}}
    cwd: {ROOT}
"""


def league_at(folder: Path, starts: str) -> Path:
    return write_league(
        folder, LEAGUE.replace("{counter}", str(folder / "starts")).replace("{starts}", starts)
    )


def disqualified_rows(database: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT name, reason FROM disqualified").fetchall()


def starts(folder: Path) -> int:
    return int((folder / "starts").read_text())


def test_a_bot_that_fails_a_start_in_the_run_and_then_works_forfeits_nothing(tmp_path):
    # Start 1 is the preflight; 2 and 3 fail (the launcher's two tries for one match), 4 on work.
    path = league_at(tmp_path, "2,3")
    result = referee("run", path, check=True)
    assert starts(tmp_path) == 3 + 4  # 1 preflight + 2 failed + one per match of its 4
    lines = export(path)
    assert len(lines) == 6  # C(3,2) tables x 2 seatings, all played
    assert all(line["forfeits"] == [] and line["faults"] == [] for line in lines), lines
    assert "disqualified" not in result.stderr
    assert disqualified_rows(tmp_path / "results.sqlite") == []


def test_a_bot_that_stops_starting_is_disqualified_with_nothing_stored_and_a_later_run_clears_it(tmp_path):
    path = league_at(tmp_path, "2-")  # passes the preflight, never starts again
    result = referee("run", path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "disqualified: flaky: did not start 3 times in a row" in result.stderr
    lines = export(path)
    assert len(lines) == 2  # only random v heuristic, both seatings; nothing of flaky's
    assert all("flaky" not in line["seats"] and line["forfeits"] == [] for line in lines)
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        assert db.execute("SELECT count(*) FROM seats WHERE entrant = 'flaky'").fetchone()[0] == 0
    board = referee("leaderboard", path, check=True)
    row = next(line for line in board.stdout.splitlines() if " flaky " in line)
    assert row.split()[6] == "0"  # its row says 0 matches: no invented forfeit
    assert "disqualified: flaky: did not start 3 times in a row" in board.stdout
    assert "disqualified: flaky" in referee("leaderboard", path, "--format", "json", check=True).stderr
    [(name, _)] = disqualified_rows(tmp_path / "results.sqlite")
    assert name == "flaky"
    # Fixed: the next run plays its matches (none was stored, so none is missing a replay) and clears it.
    league_at(tmp_path, "0")
    again = referee("run", path, check=True)
    assert "6/6 matches" in again.stdout
    assert disqualified_rows(tmp_path / "results.sqlite") == []
    assert "disqualified" not in referee("leaderboard", path, check=True).stdout


def test_a_bot_that_crashes_at_start_stops_the_run_at_the_preflight_before_anything_is_stored(tmp_path):
    path = league_at(tmp_path, "1-")
    result = referee("run", path)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "preflight: flaky: bot 'flaky' exited with code 1 before connecting" in result.stderr
    assert "  | flaky_start: start 1 fails on purpose" in result.stderr  # its last lines of output
    assert "--skip-broken" in result.stderr
    assert complete_matches(tmp_path / "results.sqlite") == 0
    assert disqualified_rows(tmp_path / "results.sqlite") == []
    # --skip-broken: it is disqualified for the run, the others play, nothing of it is stored.
    skipped = referee("run", path, "--skip-broken")
    assert skipped.returncode == 3, skipped.stdout + skipped.stderr
    assert "disqualified: flaky: bot 'flaky' exited with code 1 before connecting" in skipped.stderr
    assert [sorted(line["seats"]) for line in export(path)] == [["heuristic", "random"]] * 2
    assert "disqualified: flaky" in referee("leaderboard", path, check=True).stdout


def test_a_bot_that_starts_but_does_not_answer_fails_the_preflight(tmp_path):
    path = league_at(tmp_path, "0")
    # It says hello, then exits instead of answering (misbehaving.py reads only its first argument).
    quitter = "tests/bots/misbehaving.py exit-after-welcome"
    text = path.read_text().replace("tests/bots/flaky_start.py", quitter)
    path.write_text(text)
    result = referee("run", path)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "preflight: flaky: bot 'flaky' " in result.stderr
    assert "  | leaving after the welcome" in result.stderr
    assert complete_matches(tmp_path / "results.sqlite") == 0


def test_the_preflight_also_stops_a_run_on_dask_workers_before_anything_is_stored(tmp_path):
    """With --workers the preflight runs in the referee run process before any worker plays."""
    path = league_at(tmp_path, "1-")
    result = referee("run", path, "--workers", "2")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "preflight: flaky: bot 'flaky' exited with code 1 before connecting" in result.stderr
    assert complete_matches(tmp_path / "results.sqlite") == 0
