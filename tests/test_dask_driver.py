"""The Dask driver end to end: a LocalCluster of two worker processes, real bots, the real CLI.

Principle 9: whichever driver plays a league, its export is byte for byte the same. Each test compares
with the in-process reference run of the small league (``support.leagues.finished``).
"""

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from referee.league.config import LeagueError, load_league
from referee.run.competition import Competition
from referee.run.dask_driver import ClusterError, DaskDriver, Unplayable
from referee.run.host import Host
from support import ROOT
from support.cli import REFEREE, export, referee
from support.leagues import complete_matches, sampled_league, small_league
from support.processes import bot_processes, settle, worker_processes


@pytest.fixture
def cluster():
    """A running cluster of two worker processes, as `dask scheduler` and two `dask worker`s would be."""
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as local,
        Client(local) as client,
    ):
        yield local, client
    assert settle(worker_processes) == []


def test_workers_two_gives_identical_results(finished, tmp_path):
    reference_path, _, reference = finished
    path = small_league(tmp_path)
    run = referee("run", path, "--workers", "2", "--report", tmp_path / "report", check=True)
    assert "Dask LocalCluster: 2 worker processes, dashboard" in run.stderr
    assert "6/6 matches" in run.stdout
    assert (tmp_path / "report" / "index.html").exists()
    assert export(path) == reference
    assert (
        referee("leaderboard", path, "--format", "json", check=True).stdout
        == referee("leaderboard", reference_path, "--format", "json", check=True).stdout
    )
    assert settle(worker_processes) == [], "a worker process outlived referee run"


def test_a_sampled_league_on_workers_gives_identical_results(tmp_path):
    """Both drivers take their matches from ``schedule_of``: a sampled design (which depends on the
    entrants the database saw join) is the same on the workers."""
    here, there = sampled_league(tmp_path / "here"), sampled_league(tmp_path / "there")
    referee("run", here, check=True)
    assert "10/10 matches" in referee("run", there, "--workers", "2", check=True).stdout
    assert export(there) == export(here)
    assert (
        referee("leaderboard", there, "--format", "json", check=True).stdout
        == referee("leaderboard", here, "--format", "json", check=True).stdout
    )
    assert settle(worker_processes) == [], "a worker process outlived referee run"


def test_a_running_cluster_gives_identical_results_and_a_league_key_selects_it(finished, cluster, tmp_path):
    _, reference = finished[0], finished[2]
    local, _ = cluster
    path = small_league(tmp_path)
    path.write_text(path.read_text() + f"dask: {local.scheduler_address}\n")
    run = referee("run", path, check=True)
    assert "6/6 matches" in run.stdout
    assert export(path) == reference


def test_a_worker_killed_mid_match_replays_it_elsewhere_to_the_same_results(finished, cluster, tmp_path):
    reference = finished[2]
    local, client = cluster
    path = small_league(tmp_path)
    process = subprocess.Popen(
        [REFEREE, "run", str(path), "--dask", local.scheduler_address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        replayed = None
        deadline = time.monotonic() + 120
        while replayed is None and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            if complete_matches(tmp_path / "results.sqlite") < 1:
                time.sleep(0.05)
                continue
            pids = client.run(os.getpid)
            busy = [(worker, keys) for worker, keys in client.processing().items() if keys]
            if not busy:
                time.sleep(0.05)
                continue
            victim, (key, *_) = busy[0]
            os.kill(pids[victim], signal.SIGKILL)
            # The scheduler counts a task as suspicious when a worker dies while running it, and runs it
            # again elsewhere; a match that had just ended at the kill is no proof, so then try again.
            while time.monotonic() < deadline:
                suspicious = client.run_on_scheduler(_suspicious, key=key)
                if suspicious is None or suspicious >= 1:
                    replayed = key if suspicious else None
                    break
                time.sleep(0.05)
        out, err = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, out + err
    assert replayed is not None, "no worker was killed while it played a match"
    assert export(path) == reference
    assert settle(bot_processes) == [], "bots outlived their killed worker"


def _suspicious(dask_scheduler, key):
    task = dask_scheduler.tasks.get(key)
    return None if task is None else task.suspicious


def run_on_workers_until(path: Path, stored: int) -> subprocess.Popen[str]:
    """``referee run PATH --workers 2`` started, once ``stored`` matches of it are complete."""
    process = subprocess.Popen(
        [REFEREE, "run", str(path), "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while complete_matches(path.parent / "results.sqlite") < stored and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    return process


def test_a_killed_referee_resumes_on_workers_to_the_same_results(finished, tmp_path):
    reference = finished[2]
    path = small_league(tmp_path)
    process = run_on_workers_until(path, 2)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert 2 <= complete_matches(tmp_path / "results.sqlite") < 6
    assert settle(worker_processes) == [], "workers outlived a referee killed with SIGKILL"
    assert settle(bot_processes) == []
    referee("run", path, "--workers", "2", check=True)
    assert export(path) == reference


def test_ctrl_c_closes_the_local_cluster(tmp_path):
    path = small_league(tmp_path)
    process = run_on_workers_until(path, 1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "run again to resume" in err
    assert worker_processes() == [], "Ctrl-C left worker processes behind"
    assert settle(bot_processes) == []


def test_an_unreachable_scheduler_is_one_line_and_stores_nothing(tmp_path):
    path = small_league(tmp_path)
    result = referee("run", path, "--dask", "tcp://127.0.0.1:9", timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert complete_matches(tmp_path / "results.sqlite") == 0
    both = referee("run", path, "--dask", "tcp://127.0.0.1:9", "--workers", "2")
    assert both.returncode == 2


def test_builds_run_on_the_workers_and_a_failed_one_is_the_entrants(finished, tmp_path):
    path = small_league(tmp_path)
    text = path.read_text().replace(
        "  - name: random-inproc\n",
        "  - name: broken\n    command: ./bot.sh\n    build: exit 3\n    cwd: .\n"
        "  - name: built\n    command: python sample_bots/random_bot.py\n"
        f"    build: echo built >> {tmp_path}/builds.txt\n    cwd: {ROOT}\n"
        "  - name: random-inproc\n",
    )
    path.write_text(text)
    result = referee("run", path, "--workers", "2")
    assert result.returncode == 3, result.stderr
    assert "disqualified: broken: build 'exit 3' failed with code 3" in result.stderr
    assert "on worker tcp://" in result.stderr
    lines = export(path)
    assert len(lines) == 12  # C(4,2) tables x 2 rotations: none of broken's 8 is stored
    for line in lines:
        assert "broken" not in line["seats"]
        assert line["forfeits"] == []
    # Each worker builds before its first match of the entrant; the two share this machine's folder, so
    # the second finds the first's build of this run and does not build again.
    assert (tmp_path / "builds.txt").read_text() == "built\n"


def test_a_worker_without_an_entrants_folder_is_named_and_nothing_is_stored(tmp_path):
    league = load_league(small_league(tmp_path))
    gone = tmp_path / "not-on-the-workers"
    entrants = tuple(
        replace(e, spec=replace(e.spec, cwd=gone)) if e.name == "heuristic" else e for e in league.entrants
    )
    competition = Competition.open(replace(league, entrants=entrants))
    store, host = competition.store, Host.of(competition.league, log_dir=tmp_path / "logs")
    with pytest.raises(ClusterError) as error:
        asyncio.run(DaskDriver(competition, host, workers=2).run())
    message = str(error.value)
    assert message.count("worker tcp://") == 2
    assert f"lacks {gone} (heuristic's folder)" in message
    assert store.complete_ids() == set()
    store.close()
    assert settle(worker_processes) == []


class _FakeClient:
    async def nthreads(self):
        return {"tcp://a": 1, "tcp://b": 1, "tcp://c": 1}


@pytest.mark.quick
def test_a_bot_that_fails_to_start_on_one_worker_is_not_disqualified(tmp_path):
    league = load_league(small_league(tmp_path))
    competition = Competition.open(league)
    store, host = competition.store, Host.of(competition.league, log_dir=tmp_path / "logs")
    driver = DaskDriver(competition, host, workers=2)
    asyncio.run(
        driver._unplayable(Unplayable("start", "tcp://a", "random", "did not connect"), _FakeClient())
    )
    assert driver.competition.disqualified == {}
    assert driver.failed_starts == {"random": {"tcp://a": "did not connect"}}
    asyncio.run(
        driver._unplayable(Unplayable("start", "tcp://b", "random", "did not connect"), _FakeClient())
    )
    assert "random" in driver.competition.disqualified
    assert "tcp://a, tcp://b" in driver.competition.disqualified["random"]
    store.close()


@pytest.mark.quick
def test_a_served_bot_that_fails_to_start_is_tried_on_every_worker_before_it_counts(tmp_path):
    """``referee serve`` on a cluster (``DaskDriver.play_one``): a bot that did not start on a worker is
    tried on another, which it then avoids; only once it failed on every worker is it one failed start
    for the server to count (three in a row make it sit out), and the next try may go anywhere."""
    competition = Competition.open(load_league(small_league(tmp_path)))
    host = Host.of(competition.league, log_dir=tmp_path / "logs")
    driver = DaskDriver(competition, host, workers=3)

    def failed(worker: str) -> bool:
        return asyncio.run(driver._elsewhere(Unplayable("start", worker, "random", "no"), _FakeClient()))

    assert failed("tcp://a") is True
    assert failed("tcp://b") is True
    assert driver.failed_starts == {"random": {"tcp://a": "no", "tcp://b": "no"}}
    assert failed("tcp://c") is False
    assert driver.failed_starts == {}
    assert competition.disqualified == {}
    competition.store.close()


@pytest.mark.quick
def test_the_league_keys_workers_and_dask_are_read_and_exclusive(tmp_path):
    path = small_league(tmp_path)
    text = path.read_text()
    path.write_text(text + "workers: 3\n")
    assert load_league(path).workers == 3
    path.write_text(text + "workers: 3\ndask: tcp://scheduler:8786\n")
    with pytest.raises(LeagueError, match=r"give workers: .* or dask: .*, not both"):
        load_league(path)
    path.write_text(text + "dask: scheduler:8786\n")
    with pytest.raises(LeagueError, match="dask"):
        load_league(path)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
