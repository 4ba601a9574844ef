"""The referee's own bugs are loud: logged with their traceback, and a run stops when voids keep coming.
Through the real CLI, with real bot processes where messages are logged."""

import os
import re
from pathlib import Path

from support import ROOT
from support.cli import referee
from support.leagues import write_league

BOTS = ROOT / "tests/bots"

LEAGUE = f"""\
name: Log League
seed: 5
players: 2
time_control: {{per_action: 2s, bank: 20s}}
entrants:
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: {{second}}
"""


def league_at(folder: Path, second: str) -> Path:
    return write_league(folder, LEAGUE.replace("{second}", second))


def test_a_run_whose_matches_keep_going_void_stops_with_one_line_and_the_tracebacks_logged(tmp_path):
    path = league_at(tmp_path, f"breaker\n    module: voider:Breaker\n    cwd: {BOTS}")
    result = referee("run", path)
    assert result.returncode == 1, result.stdout + result.stderr
    log = tmp_path / "league-logs" / "referee.log"
    error = result.stderr.strip().splitlines()[-1]
    assert error == (
        "Error: the referee stopped the run: 5 matches in a row were void, the last one with referee error: "
        f"RuntimeError: a referee bug planted by a test bot; the tracebacks are in {log}"
    )
    text = log.read_text(encoding="utf-8")
    assert text.count("Traceback (most recent call last)") == 5
    assert text.count("RuntimeError: a referee bug planted by a test bot") >= 5
    assert "in apply" in text  # the traceback reaches into the engine, where it failed
    assert (
        len(re.findall(r"ERROR referee\.run\.competition: match \S+ is void \(attempt \d of 3\)", text)) == 5
    )


def test_a_void_match_logs_its_traceback_to_stderr():
    result = referee(
        "match", "sample_bots.random_bot:RandomBot", "tests.bots.voider:Breaker", "--seed", "3", timeout=60
    )
    assert result.returncode == 1
    void = "ERROR referee.match.playing: match match: referee error in deal 1; the match is void"
    assert void in result.stderr
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: the match is void: referee error: RuntimeError: a referee bug planted by a test bot"
    )


def test_log_level_debug_logs_every_message_to_and_from_each_bot(tmp_path):
    quiet = referee(
        "match", "python sample_bots/random_bot.py", "sample_bots.random_bot:RandomBot", "--seed", "4"
    )
    assert quiet.returncode == 0, quiet.stderr
    assert " <- " not in quiet.stderr  # the default level logs no messages
    loud = referee(
        "match",
        "python sample_bots/random_bot.py",
        "sample_bots.random_bot:RandomBot",
        "--seed",
        "4",
        "--log-level",
        "debug",
    )
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout == quiet.stdout  # logging changes nothing in the match
    lines = loud.stderr.splitlines()
    out = [line for line in lines if re.search(r"DEBUG referee\.match\.sessions: s1 random <- ", line)]
    into = [line for line in lines if re.search(r"DEBUG referee\.match\.sessions: s1 random -> ", line)]
    assert "-> hello {" in into[0]
    assert 'token: "(secret)"' in into[0]  # the bot's token is a secret, even in the referee's own log
    assert "<- welcome {" in out[0]
    assert "<- match_start {" in out[1]
    assert "<- match_end {" in out[-1]
    requests = [line for line in out if "<- action_request {" in line]
    replies = [line for line in into if "-> action {" in line]
    assert len(requests) == len(replies) == 16 + 6 * 32  # 2 players: 16 declarations and 6 cards a deal
    assert all(" bank_ms: " in line for line in requests)


def test_a_run_logs_each_match_to_referee_log_and_warns_of_more_matches_than_cpus(tmp_path):
    path = league_at(tmp_path, f"random2\n    module: sample_bots.random_bot:RandomBot\n    cwd: {ROOT}")
    calm = referee("run", path)
    assert calm.returncode == 0, calm.stderr
    assert "warning" not in calm.stderr
    log = (tmp_path / "league-logs" / "referee.log").read_text(encoding="utf-8")
    assert len(re.findall(r"INFO referee\.match\.playing: match \S+: complete in", log)) == 2
    busy = referee("run", path, "--fresh", "--concurrency", "64")
    assert busy.returncode == 0, busy.stderr
    cpus = len(os.sched_getaffinity(0))
    forgotten, warning = busy.stderr.splitlines()[:2]
    assert forgotten.startswith("--fresh: the 2 match(es) stored in ")  # and where their copy is kept
    assert warning == (
        f"warning: concurrency 64 is more than the {cpus} CPU(s) of this machine; bots that wait for a CPU "
        "run out of time, and their timeouts are charged to them"
    )
