"""``referee serve --workers N`` (docs/SERVER.md, "On a cluster"): the served league played on a real Dask
LocalCluster by a real server process, its results compared byte for byte with the in-process reference
run of the small league (``support.leagues.finished``), as the Dask driver's own tests compare
``referee run --workers`` (principle 9). A match played on a worker is watched live through the view
its worker relays. Remote entrants are played by the server, where the door is, and
the others on the workers."""

from __future__ import annotations

import re
import signal
import sys
import urllib.parse
import urllib.request

from distributed import Client, LocalCluster

from support import ROOT
from support.cli import export, referee
from support.leagues import MODULE_BOTS, small_league
from support.net import free_port
from support.processes import bot_processes, settle, worker_processes
from support.remote import end, interrupt, issue, remote_env, start_bot, start_referee, wait_for
from support.serve import get, serve, stored, until
from support.serve import wait_for as wait_for_value

PY = sys.executable
PUBLIC_VIEW = {
    "cards_left", "clocks", "current_trick", "deal", "dealer", "declaration", "declarer", "forfeited",
    "phase", "pyramids", "taken", "talk", "to_act", "tricks",
}  # fmt: skip
"""The keys of what every seat sees (``referee.match.watch.public_view``, with the seats' clocks a
``LiveMatch`` adds): no hand, no legal actions."""


def stop(served_process) -> tuple[str, str]:
    """Ctrl-C, as a person stops the server: its output, once it has ended."""
    served_process.send_signal(signal.SIGINT)
    out, err = served_process.communicate(timeout=60)
    assert served_process.returncode == 0, err
    return out, err


def test_a_league_served_on_two_workers_stores_what_a_local_run_stores(finished, tmp_path):
    reference_path, _, reference = finished
    path = small_league(tmp_path)
    served = serve(tmp_path, path.read_text(), "--workers", "2")
    league = next(served)
    until("every match stored", lambda: league.stored() == 6, timeout=300)
    out, err = stop(league.process)
    assert "Dask LocalCluster: 2 worker processes" in err
    assert "Traceback" not in err
    assert "stopped; 6 match(es) played and stored in this session" in out
    assert settle(worker_processes) == [], "a worker process outlived referee serve"
    assert settle(bot_processes) == []
    served.close()
    assert export(path) == reference
    assert (
        referee("leaderboard", path, "--format", "json", check=True).stdout
        == referee("leaderboard", reference_path, "--format", "json", check=True).stdout
    )
    played_on = re.findall(r"match (\S+): played on worker tcp://", league.log())
    assert sorted(played_on) == sorted(match["match_id"] for match in reference)


def test_a_league_served_on_a_running_cluster_stores_what_a_local_run_stores(finished, tmp_path):
    """``referee serve --dask ADDRESS``: the running cluster (as ``dask scheduler`` and two ``dask
    worker``s would be) plays the league; the server's Ctrl-C leaves the cluster running, without a bot."""
    reference = finished[2]
    path = small_league(tmp_path)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        served = serve(tmp_path, path.read_text(), "--dask", cluster.scheduler_address)
        league = next(served)
        until("every match stored", lambda: league.stored() == 6, timeout=300)
        out, err = stop(league.process)
        assert "Traceback" not in err
        assert "stopped; 6 match(es) played" in out
        served.close()
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        assert settle(bot_processes) == []
    played_on = re.findall(r"match \S+: played on worker (\S+)", league.log())
    assert len(played_on) == 6
    assert set(played_on) <= workers
    assert settle(worker_processes) == []
    assert export(path) == reference


WATCHED = f"""\
name: Watched On Workers
seed: 6
players: 2
schedule: {{format: round-robin, rounds: 1, seating: single}}
time_control: {{per_action: 5s, bank: 60s}}
concurrency: 1
database: results.sqlite
remote: {{wait: 1s}}
entrants:
  - name: slow
    command: python tests/bots/slow_talker.py 0.05
    cwd: {ROOT}
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: far
    remote: true
"""


def test_a_remote_entrant_plays_where_the_door_is_and_the_others_on_the_workers(tmp_path):
    """The slow bot's match with the in-process one goes to a worker while ``far``'s bot is away; its
    worker relays its view, which the API and the live page show as it plays. Once ``far``'s bot
    connects, its matches are played by the server (never on a worker), and Ctrl-C leaves no process
    behind."""
    path = tmp_path / "league.yaml"
    path.write_text(WATCHED)
    token = issue(path, "far")
    http, door = free_port(), free_port()
    log = tmp_path / "serve.log"
    served = start_referee(
        "serve", path, "--http", f"127.0.0.1:{http}", "--listen", f"127.0.0.1:{door}", "--workers", "2",
        log=log,
    )  # fmt: skip
    bot = None
    try:
        wait_for(log, "Dask LocalCluster: 2 worker processes", timeout=120)
        (match,) = wait_for_value(lambda: get(http, "/api/v1/live")["in_play"])
        assert match["seats"] == ["random", "slow"] or match["seats"] == ["slow", "random"]
        assert match["on_worker"] is True
        quoted = urllib.parse.quote(match["match_id"], safe="")
        # Its worker relays its view as it plays: what every seat sees, never a hand.
        one = wait_for_value(lambda: (got := get(http, f"/api/v1/live/{quoted}")).get("view") and got)
        assert one["on_worker"] is True
        assert set(one["view"]) == PUBLIC_VIEW
        assert one["view"]["tricks"] or one["view"]["current_trick"]["cards"] or one["view"]["declaration"]
        later = wait_for_value(lambda: get(http, f"/api/v1/live/{quoted}")["view"] != one["view"])
        assert later
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/live/{quoted}", timeout=30) as answer:
            assert "played on a worker of the cluster, which relays its view" in answer.read().decode()
        until("the local match stored", lambda: len(stored(http)) == 1, timeout=120)
        env = remote_env(f"127.0.0.1:{door}", token, None)
        bot = start_bot([PY, "-m", "sample_bots.random_bot"], env, tmp_path / "bot.log")
        until("far's matches stored", lambda: len(stored(http)) == 3, timeout=180)
        matches = stored(http)
        assert all(m["status"] == "complete" and m["faults"] == [] for m in matches), matches
    finally:
        code = interrupt(served)
        if bot is not None:
            wait_for(tmp_path / "bot.log", "the referee was interrupted; reconnecting")
            end(bot)
    output = log.read_text()
    assert code == 0, output
    assert "Traceback" not in output
    worker_log = (tmp_path / "results-logs" / "referee.log").read_text()
    on_workers = re.findall(r"match (\S+): played on worker tcp://", worker_log)
    assert on_workers == [match["match_id"]]
    far = [m["match_id"] for m in matches if "far" in m["seats"]]
    assert len(far) == 2
    assert not set(far) & set(on_workers)
    assert all(m["remote_entrants"] == ["far"] for m in matches if "far" in m["seats"])
    assert settle(worker_processes) == [], "a worker process outlived referee serve"
    assert settle(bot_processes) == []


def test_an_unreachable_scheduler_is_one_line_and_exit_1(tmp_path):
    path = small_league(tmp_path)
    http = free_port()
    result = referee("serve", path, "--http", f"127.0.0.1:{http}", "--dask", "tcp://127.0.0.1:9", timeout=120)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("serve: cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    both = referee("serve", path, "--workers", "2", "--dask", "tcp://127.0.0.1:9", timeout=60)
    assert both.returncode == 2
    assert "give --workers (a cluster on this machine) or --dask (a running one)" in both.stderr


DUEL = f"""\
name: Duel On A Worker
seed: 3
players: 2
schedule: {{format: round-robin, rounds: 1, seating: single}}
database: results.sqlite
entrants:
{MODULE_BOTS}"""


def test_a_new_entrant_added_while_served_on_a_worker_plays_there_without_a_restart(tmp_path):
    """The league file changes while the server plays on its cluster: the workers are set up again for
    the league as it now reads, and the newcomer's matches (a command bot, a process on the worker) are
    played there."""
    served = serve(tmp_path, DUEL, "--workers", "1")
    duel = next(served)
    until("the first match stored", lambda: duel.stored() == 1, timeout=180)
    league = tmp_path / "league.yaml"
    newcomer = f"  - name: newcomer\n    command: python sample_bots/random_bot.py\n    cwd: {ROOT}\n"
    league.write_text(league.read_text() + newcomer)
    until("the newcomer's matches stored", lambda: duel.stored() == 3, timeout=180)
    matches = stored(duel.port)
    assert sum("newcomer" in m["seats"] for m in matches) == 2
    assert all(m["status"] == "complete" and m["faults"] == [] for m in matches), matches
    out, err = stop(duel.process)
    assert "Traceback" not in err
    assert "stopped; 3 match(es) played" in out
    played_on = re.findall(r"match (\S+): played on worker tcp://", duel.log())
    assert sorted(played_on) == sorted(m["match_id"] for m in matches)
    assert settle(worker_processes) == [], "a worker process outlived referee serve"
    assert settle(bot_processes) == []
    served.close()
