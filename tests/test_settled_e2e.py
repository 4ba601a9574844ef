"""``schedule.until: settled`` end to end through the real CLI and a real SQLite file: in-process sample
bots of clearly different strength (two random, two heuristic), so that a league of ~100 matches takes
seconds. A run stops before ``max_matches`` with the heuristics on top, and a killed-and-resumed run, a
run at another concurrency and a run on Dask workers play exactly the same matches to the same results.
"""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from referee.results.store import Store
from support import ROOT
from support.cli import REFEREE, export, referee
from support.leagues import complete_matches, write_league

MAX = 400

LEAGUE = """\
name: Settling League
seed: 5
players: 3
schedule: {until: settled, seating: cyclic, max_matches: MAX, batch_tables: 2, confidence: 0.9, margin: 5}
concurrency: CONCURRENCY
entrants:
  - {name: r1, module: "sample_bots.random_bot:RandomBot", cwd: ROOT}
  - {name: h1, module: "sample_bots.heuristic:HeuristicBot", cwd: ROOT}
  - {name: r2, module: "sample_bots.random_bot:RandomBot", cwd: ROOT}
  - {name: h2, module: "sample_bots.heuristic:HeuristicBot", cwd: ROOT}
""".replace("MAX", str(MAX)).replace("ROOT", str(ROOT))


def league_at(folder: Path, concurrency: int = 1) -> Path:
    return write_league(folder, LEAGUE.replace("CONCURRENCY", str(concurrency)))


@pytest.fixture(scope="module")
def settled(tmp_path_factory):
    path = league_at(tmp_path_factory.mktemp("settled"))
    run = referee("run", path, check=True)
    return path, run, export(path)


def test_it_stops_when_settled_before_max_matches_with_the_stronger_bots_on_top(settled):
    path, run, lines = settled
    assert "ranking settled after" in run.stdout
    assert "ranking not settled yet: batch 1 playing (6 matches)\n" in run.stdout  # no ranking yet
    assert "ranking not settled yet: batch 3 playing (18 matches); weakest: " in run.stdout
    assert 12 < len(lines) < MAX
    assert all(line["status"] == "complete" for line in lines)
    batches = sorted({line["round"] for line in lines})
    assert batches == list(range(1, len(batches) + 1))
    assert len(batches) > 2
    assert all(line["table_id"].startswith(f"b{line['round']}") for line in lines)
    board = referee("leaderboard", path, "--format", "json", check=True).stdout
    order = [row["entrant"] for row in json.loads(board)]
    assert set(order[:2]) == {"h1", "h2"}
    # the read-only command rebuilds the same plan from the database, and says it is settled
    table = referee("leaderboard", path, check=True).stdout
    settled_line = next(line for line in run.stdout.splitlines() if line.startswith("ranking settled"))
    assert settled_line in table
    assert f"{len(lines)}/{len(lines)} matches" in run.stdout


def test_a_run_reads_only_each_new_batch_and_gets_the_same_matches(settled):
    """Store.matches(ids), which a run uses between batches, reads exactly those stored matches."""
    path, _, lines = settled
    store = Store(path.parent / "league.sqlite", write=False)
    try:
        every = store.matches()
        ids = [lines[0]["match_id"], lines[-1]["match_id"], "b999:nobody"]
        assert store.matches(ids) == {key: every[key] for key in ids[:2]}
    finally:
        store.close()


def test_a_killed_run_resumes_and_another_concurrency_plays_the_same_matches(settled, tmp_path):
    reference = settled[2]
    path = league_at(tmp_path / "killed", concurrency=2)
    process = subprocess.Popen(
        [REFEREE, "run", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    database = path.parent / "league.sqlite"
    deadline = time.monotonic() + 120
    while complete_matches(database) < 20 and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert 20 <= complete_matches(database) < len(reference)
    referee("run", path, check=True)
    assert export(path) == reference
    other = league_at(tmp_path / "three", concurrency=3)
    referee("run", other, check=True)
    assert export(other) == reference


def test_dask_workers_play_the_same_batches(settled, tmp_path):
    path = league_at(tmp_path)
    run = referee("run", path, "--workers", "2", check=True)
    assert "ranking settled after" in run.stdout
    assert export(path) == settled[2]
