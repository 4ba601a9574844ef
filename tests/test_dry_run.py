"""`referee run --dry-run` with nothing stored to time (issue #24): it times the bots on a few deals
of a sample match and estimates a match from their start and decisions, through the real CLI, and the
estimate is held against the real run of the same league."""

import os
import re
import sqlite3

import pytest

from referee.run.dry_run import EXIT_PREFLIGHT
from referee.starter import node_problem
from support import ROOT
from support.cli import referee

DECISIONS = 16 + 32 * 6  # a seat's decisions in a 2-player match: 16 declarations, a card a trick

LEAGUE = f"""\
name: Steady League
seed: 5
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 1
entrants:
  - name: steady
    command: python tests/bots/misbehaving.py steady-30ms   # 30 ms a decision, asleep
    cwd: {ROOT}
  - name: quick
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""


def test_the_estimate_comes_from_timing_the_bots_and_matches_the_real_run(tmp_path):
    league = tmp_path / "league.yaml"
    league.write_text(LEAGUE, encoding="utf-8")
    dry = referee("run", league, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert list(tmp_path.iterdir()) == [league]  # it started the bots, and wrote nothing
    timed = re.search(r"^timed on 1 sample\(s\) of 4 deals \(start, decision\): (.*)$", dry.stdout, re.M)
    speeds = {
        name: (float(start), float(decision) / 1000)
        for name, start, decision in re.findall(r"(\S+) (\d+\.\d\d)s (\d+\.\d\d)ms", timed.group(1))
    }
    assert set(speeds) == {"quick", "steady"}
    assert 0.03 <= speeds["steady"][1] < 0.06  # its 30 ms, and the round trip
    assert speeds["quick"][0] == 0.0  # in-process: no process to start
    each = float(re.search(r"\((\d+\.\d)s a match: each seat's start and 208 decisions", dry.stdout)[1])
    expected = sum(start + DECISIONS * decision for start, decision in speeds.values())
    assert abs(each - expected) <= 0.05 + 0.01 * expected  # the printed figures, rounded
    estimate = int(re.search(r"^estimate: (\d+)s at 1 match at once", dry.stdout, re.MULTILINE).group(1))
    assert abs(estimate - 2 * each) <= 1  # its two matches, one at a time

    run = referee("run", league)
    assert run.returncode == 0, run.stdout + run.stderr
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        played = [row[0] for row in db.execute("SELECT elapsed FROM matches")]
    assert len(played) == 2
    # The steady bot's 30 ms sleeps make most of a match; the estimate adds its start, which the run
    # hides behind the previous match or the preflight.
    for elapsed in played:
        assert 0.8 * (each - speeds["steady"][0]) <= elapsed <= 1.25 * each


def test_a_bot_that_cannot_be_timed_is_named_and_counted_roughly(tmp_path):
    league = tmp_path / "league.yaml"
    league.write_text(
        LEAGUE.replace("tests/bots/misbehaving.py steady-30ms", "-c \"raise SystemExit('no model file')\""),
        encoding="utf-8",
    )
    dry = referee("run", league, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert list(tmp_path.iterdir()) == [league]
    lines = dry.stdout.splitlines()
    said = [line for line in lines if line.startswith("not timed: ")]
    assert len(said) == 1
    assert said[0].startswith("not timed: steady: bot 'steady' exited with code 1 before connecting")
    assert "'no model file'" in said[0]
    assert said[0].endswith(
        "(the run's preflight would stop there, exit 4; counted as 0.4s a start, 2ms a decision)"
    )
    # 0.4 s and 208 decisions at 2 ms for it, the in-process bot as timed
    each = float(re.search(r"\((\d+\.\d)s a match: each seat's start and 208 decisions", dry.stdout)[1])
    assert 0.8 <= each < 1.0


@pytest.mark.skipif(bool(node_problem()) and not os.environ.get("CI"), reason="no Node.js SDK here")
def test_the_dry_run_of_a_fresh_init_league_builds_its_node_bot_in_a_copy_and_times_it(tmp_path):
    """A fresh `referee init` league: its Node.js bot needs the SDK its build step (npm install) brings.
    The dry run builds it as the run would, in a throwaway copy of its folder, and times the built copy:
    it never predicts the preflight's exit 4 for a league that runs, and builds nothing in the league
    (issue #32, item 7)."""
    init = referee("init", "fresh", cwd=tmp_path, timeout=120)
    assert init.returncode == 0, init.stderr
    league = tmp_path / "fresh" / "league.yaml"
    assert not (tmp_path / "fresh" / "node-bot" / "node_modules").exists()  # nothing built yet
    for path in (tmp_path, tmp_path / "fresh"):  # a sandboxed bot runs as a uid of its own
        path.chmod(0o755)
    dry = referee("run", league, "--dry-run", timeout=300)
    assert dry.returncode == 0, dry.stderr
    assert f"exit {EXIT_PREFLIGHT}" not in dry.stdout, dry.stdout
    assert "not timed" not in dry.stdout, dry.stdout
    folder = tmp_path / "fresh" / "node-bot"
    assert (
        "my-node-bot: its build step (npm install --no-audit --no-fund) run in a throwaway copy of "
        f"{folder}, as the run builds it first; timed there"
    ) in dry.stdout.splitlines(), dry.stdout
    (timed,) = [line for line in dry.stdout.splitlines() if line.startswith("timed on ")]
    assert re.search(r"my-node-bot \d+\.\d\ds \d+\.\d\dms", timed), timed
    assert not (tmp_path / "fresh" / "node-bot" / "node_modules").exists()  # and it built nothing
