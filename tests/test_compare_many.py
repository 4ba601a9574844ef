"""`referee compare A B C …` from the command line: a ranking of three bots, one in-process and two as
processes over gRPC in their sandbox, the real command in a subprocess, its ending as the exit code."""

import itertools
import json
import re
import subprocess

import pytest

from support.cli import referee

HEURISTIC = "sample_bots.heuristic:HeuristicBot"
FIELD = (HEURISTIC, "python sample_bots/heuristic.py", "python sample_bots/random_bot.py")
"""The heuristic bot in-process and as a process (the same deterministic play: equal by construction),
and the random bot as a process, well below both."""
TABLE = ("--players", "3", "--margin", "5", "--seed", "5", "--concurrency", "2")


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return referee("compare", *args)


@pytest.fixture(scope="module")
def decided() -> subprocess.CompletedProcess[str]:
    return compare(*FIELD, *TABLE)


def test_a_ranking_stops_once_every_adjacent_pair_is_decided(decided):
    assert decided.returncode == 0, decided.stderr
    assert "Traceback" not in decided.stderr
    lines = decided.stdout.splitlines()
    assert "ranking: HeuristicBot = heuristic > random" in lines, decided.stdout
    assert re.search(
        r"^verdict: every adjacent pair decided after (\d+) tables \(exit 0\)$", decided.stdout, re.M
    )
    assert lines[-1] == "seed 5 (--seed 5 replays this ranking)"


def test_its_progress_is_a_line_per_table_and_one_per_decision(decided):
    progress = decided.stderr.splitlines()
    tables = [line for line in progress if line.startswith("table ")]
    decisions = [line for line in progress if "decided after" in line]
    assert tables[0] in {f"table 1: {', '.join(order)}" for order in _orders()}, progress
    assert len(tables) == int(re.search(r"after (\d+) tables", decided.stdout).group(1))
    assert [line.split(":")[0] for line in decisions] == ["HeuristicBot = heuristic", "heuristic > random"]
    assert all(re.search(r"decided after \d+ tables \(", line) for line in decisions)


def _orders() -> list[tuple[str, ...]]:
    return list(itertools.permutations(("HeuristicBot", "heuristic", "random")))


def test_the_same_seed_replays_the_same_ranking(decided):
    again = compare(*FIELD, *TABLE, "--json")
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["verdict"] == "decided"
    assert result["order"] == ["HeuristicBot", "heuristic", "random"]
    assert [pair["relation"] for pair in result["pairs"]] == ["equal", "better"]
    assert f"{result['tables']} tables ({result['matches']} matches)" in decided.stdout


def test_max_tables_running_out_is_undecided_exit_2():
    result = compare(*FIELD, *TABLE, "--max-tables", "2")
    assert result.returncode == 2, result.stderr
    assert "verdict: undecided: 2 adjacent pair(s) open after --max-tables 2 (exit 2)" in result.stdout
    assert result.stderr.count("table ") == 2
    assert "decided after" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((HEURISTIC,), "compare needs two bots or more, got 1"),
        ((*FIELD[:2], FIELD[0]), f"'{HEURISTIC}' is given twice: each candidate once"),
        ((*FIELD, "--margin", "wide"), "'wide' is not a valid float"),
        ((*FIELD, "--margin", "-1"), "--margin must be a number of points, 0 or more, got -1"),
        ((*FIELD, "--alpha", "0.6"), "--alpha must lie between 0 and 0.5, got 0.6"),
        ((*FIELD, "--h1", "3"), "--h1: only for two bots (A B)"),
        ((*FIELD[:2], "--margin", "3"), "--margin: only for three bots or more"),
        ((*FIELD, "--players", "2", "--against", HEURISTIC), "fill every seat"),
    ],
)
def test_bad_input_is_one_line_and_exit_4(args, message):
    result = compare(*args)
    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert message in errors[0], result.stderr
    assert result.stdout == ""


def test_a_referee_that_keeps_failing_stops_the_ranking_without_a_verdict():
    result = compare(
        "tests.bots.voider:Breaker", *FIELD[:2], "--players", "3", "--seed", "1", "--log-level", "error"
    )
    assert result.returncode == 4
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: the referee stopped the ranking: 5 tables in a row were void, the last one with referee "
        "error: RuntimeError: a referee bug planted by a test bot"
    ]
    assert result.stdout == ""
