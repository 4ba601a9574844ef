"""Start failures are not results: through the real CLI, with real bot processes (issue #15)."""

import sqlite3
from pathlib import Path

from test_tournament_e2e import ROOT, export, referee

LEAGUE = f"""\
name: Start Failures
seed: 5
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 1
sandbox: none   # the flaky bot keeps its one state, a marker file, outside /tmp
database: results.sqlite
entrants:
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: heuristic
    command: python sample_bots/heuristic.py
    cwd: {ROOT}
  - name: flaky
    command: python tests/bots/flaky_start.py {{marker}}
    cwd: {ROOT}
"""


def league_at(folder: Path, marker: str) -> Path:
    path = folder / "league.yaml"
    path.write_text(LEAGUE.replace("{marker}", marker), encoding="utf-8")
    return path


def disqualified_rows(database: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT name, reason FROM disqualified").fetchall()


def test_a_bot_that_fails_its_first_start_and_then_works_forfeits_nothing(tmp_path):
    marker = tmp_path / "started"
    path = league_at(tmp_path, str(marker))
    result = referee("run", path)
    assert marker.exists()
    lines = export(path)
    assert len(lines) == 6  # C(3,2) tables x 2 seatings, all played
    assert all(line["forfeits"] == [] and line["faults"] == [] for line in lines), lines
    assert "disqualified" not in result.stderr
    assert disqualified_rows(tmp_path / "results.sqlite") == []


def test_a_bot_that_never_starts_is_disqualified_with_nothing_stored_and_a_later_run_clears_it(tmp_path):
    path = league_at(tmp_path, "never")
    result = referee("run", path, check=False)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "disqualified: flaky: did not start 3 times in a row" in result.stderr
    lines = export(path)
    assert len(lines) == 2  # only random v heuristic, both seatings; nothing of flaky's
    assert all("flaky" not in line["seats"] and line["forfeits"] == [] for line in lines)
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        assert db.execute("SELECT count(*) FROM seats WHERE entrant = 'flaky'").fetchone()[0] == 0
    board = referee("leaderboard", path)
    row = next(line for line in board.stdout.splitlines() if " flaky " in line)
    assert row.split()[6] == "0"  # its row says 0 matches: no invented forfeit
    assert "disqualified: flaky: did not start 3 times in a row" in board.stdout
    assert "disqualified: flaky" in referee("leaderboard", path, "--format", "json").stderr
    [(name, _)] = disqualified_rows(tmp_path / "results.sqlite")
    assert name == "flaky"
    # Fixed: the next run plays its matches (none was stored, so none is missing a replay) and clears it.
    league_at(tmp_path, str(tmp_path / "fixed"))
    (tmp_path / "fixed").write_text("fixed\n", encoding="utf-8")
    again = referee("run", path)
    assert "6/6 matches" in again.stdout
    assert disqualified_rows(tmp_path / "results.sqlite") == []
    assert "disqualified" not in referee("leaderboard", path).stdout
