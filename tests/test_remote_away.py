"""A remote entrant that is away or revoked stops no local play in ``referee run`` (issue #32, item 11):
the real CLI listening for remote bots, real remote bot processes, the real results database. Its matches
wait for it without holding a worker, for the league's ``remote: wait`` once (not once per match), and a
revoked one is left out with one line."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

from support.cli import referee
from support.net import free_port
from support.remote import issue, remote_env, start_bot, start_referee, stop, wait_for

PY = sys.executable
LOCAL = ("l0", "l1", "l2", "l3")


def league(folder: Path, remote: str, wait: str) -> Path:
    """Four in-process entrants (quick matches) and one remote entrant: 20 matches of two players, 8 of
    them with the remote entrant, two at a time."""
    entrants = "".join(f"  - {{name: {name}, module: sample_bots.random_bot:RandomBot}}\n" for name in LOCAL)
    path = folder / "league.yaml"
    path.write_text(
        "name: Away League\nseed: 11\nplayers: 2\n"
        "schedule: {format: round-robin, rounds: 1, seating: balanced}\n"
        "time_control: {per_action: 2s, bank: 20s}\nconcurrency: 2\ndatabase: results.sqlite\n"
        f"remote: {{wait: {wait}}}\nentrants:\n{entrants}  - name: {remote}\n    remote: true\n",
        encoding="utf-8",
    )
    return path


def export_lines(path: Path) -> dict[str, str]:
    """Each stored match's export line as printed, by match id: compared as text, byte for byte."""
    result = referee("export", path, check=True)
    return {json.loads(line)["match_id"]: line for line in result.stdout.splitlines()}


def stored(path: Path, name: str, without: bool = False) -> dict[str, float]:
    """When each stored match with ``name`` in a seat (or ``without`` it) was stored."""
    database = path.parent / "results.sqlite"
    if not database.exists():
        return {}
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT m.match_id, m.finished_at, group_concat(s.entrant) FROM matches m "
            "JOIN seats s USING (match_id) GROUP BY m.match_id"
        ).fetchall()
    return {mid: float(at) for mid, at, seats in rows if (name in seats.split(",")) != without}


def test_local_matches_go_on_while_a_remote_entrant_is_away_and_it_costs_the_wait_once(tmp_path):
    away = tmp_path / "away"
    away.mkdir()
    path = league(away, "far", "8s")
    issue(path, "far")
    began = time.time()
    result = referee("run", path, "--listen", f"127.0.0.1:{free_port()}", timeout=120)
    ended = time.time()
    assert result.returncode == 3, result.stdout + result.stderr
    local = stored(path, "far", without=True)
    assert len(local) == 12
    # Every local match was stored while the remote entrant was still waited for: none waited on it.
    assert max(local.values()) - began < 8, sorted(at - began for at in local.values())
    # Its 8 matches cost the league's wait once: three missed starts disqualify it, at the deadline.
    assert ended - began < 8 + 10
    lines = result.stderr.splitlines()
    assert (
        "disqualified: far: did not start 3 times in a row: remote entrant 'far' was not connected within "
        "8s (docs/REMOTE.md: its author starts the bot with its token)"
    ) in lines, result.stderr
    assert any(line.startswith("8 match(es) not played") for line in lines), result.stderr
    assert stored(path, "far") == {}  # no forfeit invented

    # The same league with the remote bot there: the local matches are the same, byte for byte.
    there = tmp_path / "there"
    there.mkdir()
    path_there = league(there, "far", "60s")
    token = issue(path_there, "far")
    port = free_port()
    run_log = there / "run.log"
    run = start_referee("run", path_there, "--listen", f"127.0.0.1:{port}", log=run_log)
    wait_for(run_log, "listening for remote entrants")
    bot = start_bot(
        [PY, "-m", "sample_bots.random_bot"], remote_env(f"127.0.0.1:{port}", token, None), there / "bot.log"
    )
    assert stop(run, 300) == 0, run_log.read_text()
    assert stop(bot) == 0
    everything = export_lines(path_there)
    assert len(everything) == 20
    alone = export_lines(path)
    assert set(alone) == set(local)
    assert {match_id: everything[match_id] for match_id in alone} == alone


def test_a_revoked_remote_entrant_is_left_out_with_one_line_and_waited_for_no_more(tmp_path):
    path = league(tmp_path, "far", "120s")
    token = issue(path, "far")
    port = free_port()
    run_log = tmp_path / "run.log"
    began = time.time()
    run = start_referee("run", path, "--listen", f"127.0.0.1:{port}", log=run_log)
    wait_for(run_log, "listening for remote entrants")
    bot = start_bot(  # half a second a match, so that the revoke comes while it has matches left
        [PY, "tests/bots/ponderer.py", "0.5"],
        remote_env(f"127.0.0.1:{port}", token, None),
        tmp_path / "bot.log",
    )
    deadline = time.monotonic() + 120
    while not stored(path, "far"):
        assert time.monotonic() < deadline, run_log.read_text()
        time.sleep(0.05)
    assert referee("token", "revoke", path, "far").returncode == 0
    code = stop(run, 100)
    ended = time.time()
    stop(bot)  # told its token is no good: it stops by itself
    output = run_log.read_text()
    assert code == 3, output
    assert ended - began < 60  # not the league's wait of 120 s
    assert len(stored(path, "far", without=True)) == 12  # every local match
    played = len(stored(path, "far"))
    assert 1 <= played < 8
    reason = (
        f"disqualified: far: its token was revoked, so it cannot connect (`referee token issue {path} far` "
        "gives it a new one)"
    )
    assert output.splitlines().count(reason) == 1, output
    assert f"{8 - played} match(es) not played" in output
    assert "Traceback" not in output
