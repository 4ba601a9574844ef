"""`referee compare A B` from the command line: real bots (in-process and over gRPC in their sandbox),
the real command in a subprocess, its verdict as the exit code."""

import json
import math
import os
import pty
import random
import re
import select
import signal
import subprocess
import time
from collections import Counter

import pytest

from referee.compare import SPRT_MIN_PAIRS, Estimate, Sprt, Verdict
from support import ROOT
from support.cli import REFEREE, referee
from support.processes import bot_processes

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic:HeuristicBot"


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return referee("compare", *args)


def compared(*args: str) -> tuple[int, dict]:
    """Exit code and JSON result of a comparison that ran to a verdict."""
    result = compare(*args, "--json")
    assert result.returncode in (0, 1, 2), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


FORWARD = (HEURISTIC, RANDOM, "--fixed", "--matches", "64", "--seed", "11")
"""Heuristic against random on 64 seeded matches of four: the comparison two tests read as JSON."""


@pytest.fixture(scope="module")
def forward() -> tuple[int, dict]:
    """The JSON result of :data:`FORWARD`, compared once for the tests that only read it."""
    return compared(*FORWARD)


def test_heuristic_against_random_is_better_with_an_interval_above_zero(forward):
    result = compare(*FORWARD)
    assert result.returncode == 0, result.stderr
    assert "verdict: A is better: the 95% CI lies above 0 (exit 0)" in result.stdout
    assert "seed 11 (--seed 11 replays this comparison)" in result.stdout
    assert "matches  A-B +" in result.stderr  # progress, on stderr: stdout is the result's
    code, data = forward
    assert code == 0
    assert data["players"] == 4
    assert data["pairs"] == 32
    assert data["matches"] == 64
    assert data["sprt"] is None
    # Each bot is named as it names itself (HeuristicBot.name), as referee match names its seats.
    assert (data["a"], data["b"]) == ("heuristic", "random")
    assert data["against"] == ["heuristic#2", "heuristic#3", "heuristic#4"]
    low, high = data["ci95"]
    assert 0 < low < data["mean"] < high
    assert data["los"] > 0.99
    # The candidate held every seat equally often, and each pair's difference is its own two totals.
    assert Counter(pair["seat"] for pair in data["differences"]) == dict.fromkeys(range(4), 8)
    assert all(pair["difference"] == pair["a"] - pair["b"] for pair in data["differences"])
    assert sum(pair["difference"] for pair in data["differences"]) / 32 == data["mean"]


def test_random_against_heuristic_is_not_better_on_the_very_same_deals(forward):
    code, data = compared(RANDOM, HEURISTIC, "--fixed", "--matches", "64", "--seed", "11")
    assert code == 1
    assert data["ci95"][1] < 0
    assert data["los"] < 0.01
    # Same deals, seats and opponents as the test above with A and B swapped: every pair is its mirror.
    _, mirrored = forward
    assert [(p["round"], p["seat"], -p["difference"]) for p in data["differences"]] == [
        (p["round"], p["seat"], p["difference"]) for p in mirrored["differences"]
    ]


def test_a_bot_against_itself_differs_by_exactly_zero_in_every_pair():
    # The same seeded bot as a command (its own process, over gRPC, in its sandbox) and in-process: same
    # deals, same seat, same opponents and the same bot seed, so the very same play.
    code, data = compared(
        "python sample_bots/random_bot.py",
        RANDOM,
        "--players",
        "2",
        "--fixed",
        "--matches",
        "8",
        "--seed",
        "5",
    )
    # Both call themselves "random": A and B keep the names of their command lines, to tell them apart.
    assert (data["a"], data["b"]) == ("random_bot", "RandomBot")
    assert data["pairs"] == 4
    assert [pair["difference"] for pair in data["differences"]] == [0, 0, 0, 0]
    assert len({pair["a"] for pair in data["differences"]}) > 1  # real, differing totals, not a stub
    assert data["ci95"] == [0.0, 0.0]
    assert data["los"] == 0.5
    assert code == 1
    assert data["verdict"] == "not_better"


def test_progress_is_one_updating_line_on_a_terminal():
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [REFEREE, "compare", *FORWARD],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
    )
    os.close(terminal)
    shown = b""
    while True:  # read as it comes: a full terminal would stop the referee
        ready, _, _ = select.select([controller], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the other side closed
                chunk = b""
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    os.close(controller)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    text = shown.decode()
    assert "\x1b[2K" in text  # the line is erased and written again in place
    assert "64/64 matches  A-B +" in text
    assert text.count("\n") <= 2, text  # one line, not one per round
    assert out.startswith("A = heuristic, B = random")  # the result alone on stdout


def test_ctrl_c_stops_without_a_verdict_and_leaves_no_bot_behind():
    process = subprocess.Popen(
        [REFEREE, "compare", "python sample_bots/random_bot.py", RANDOM, "--players", "2", "--seed", "9"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not bot_processes() and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted: no verdict; seed 9 (--seed 9 plays the same deals)" in err
    assert out == ""


def test_a_small_difference_on_few_matches_is_undecided():
    code, data = compared(HEURISTIC, RANDOM, "--players", "2", "--fixed", "--matches", "16", "--seed", "1")
    low, high = data["ci95"]
    assert low < 0 < high
    assert code == 2
    assert data["verdict"] == "undecided"


def test_the_sequential_test_is_the_default_and_its_verdict_shows_the_llr_and_bounds():
    result = compare(RANDOM, HEURISTIC, "--seed", "3")
    assert result.returncode == 1, result.stderr
    verdict = result.stdout.splitlines()[-2]
    pattern = r"verdict: A is not better: LLR −\d+\.\d\d, bounds \[−2\.94, 2\.94\] \(exit 1\)"
    assert re.fullmatch(pattern, verdict), verdict
    assert "SPRT: H0 0 vs H1 2 points per match (alpha 0.05, beta 0.05)" in result.stdout
    pairs = int(re.search(r"^(\d+) pairs", result.stdout, re.MULTILINE).group(1))
    assert SPRT_MIN_PAIRS <= pairs < 200  # it stopped long before the 400 matches it may play
    code, data = compared(RANDOM, HEURISTIC, "--seed", "3")
    assert code == 1
    assert data["pairs"] == pairs
    assert data["sprt"]["llr"] <= data["sprt"]["lower"]
    assert verdict.startswith(f"verdict: A is not better: LLR −{-data['sprt']['llr']:.2f},")


def test_sprt_stops_early_on_a_clear_difference():
    for a, b, expected in ((HEURISTIC, RANDOM, 0), (RANDOM, HEURISTIC, 1)):
        code, data = compared(a, b, "--sprt", "--h1", "5", "--matches", "400", "--seed", "3")
        assert code == expected, data
        assert SPRT_MIN_PAIRS <= data["pairs"] < 200
        assert data["pairs"] % 4 == 0
        test = data["sprt"]
        assert (test["h0"], test["h1"], test["alpha"], test["beta"]) == (0.0, 5.0, 0.05, 0.05)
        assert test["llr"] >= test["upper"] if expected == 0 else test["llr"] <= test["lower"]


def test_matches_caps_the_run_in_whole_rounds():
    # 30 matches at 4 seats: 3 whole rounds of 8. Not enough pairs for the test to decide: undecided,
    # although the interval is clear.
    code, data = compared(HEURISTIC, RANDOM, "--sprt", "--matches", "30", "--seed", "3")
    assert data["matches"] == 24
    assert data["pairs"] == 12 < SPRT_MIN_PAIRS
    assert data["ci95"][0] > 0
    assert code == 2
    _, three = compared(HEURISTIC, RANDOM, "--players", "3", "--fixed", "--matches", "30", "--seed", "3")
    assert three["matches"] == 30
    assert Counter(pair["seat"] for pair in three["differences"]) == dict.fromkeys(range(3), 5)


def test_opponents_and_concurrency_change_nothing_but_the_speed():
    args = ("python sample_bots/random_bot.py", HEURISTIC, "--players", "3", "--fixed", "--matches", "12")
    opponents = ("--against", RANDOM, "--against", "python sample_bots/random_bot.py", "--seed", "8")
    _, one = compared(*args, *opponents)
    _, three = compared(*args, *opponents, "--concurrency", "3")
    assert (one["a"], one["b"]) == ("random", "heuristic")  # the process's hello names it
    assert one["against"] == ["random#2", "random#3"]
    assert one == three
    assert len({pair["difference"] for pair in one["differences"]}) > 1


def test_a_candidate_that_crashes_keeps_only_what_it_made_itself():
    # The quitter plays exactly as the good bot (same seeded choices) until its 10th move, then exits:
    # the referee's autopilot finishes its matches, and none of that is the quitter's (RULES.md,
    # "Forfeits"). Its credited points are the good bot's up to the crash and the worst score after,
    # so never more than the good bot's on the same deals, and never less than the lowest total, 24.
    bot = "python tests/bots/misbehaving.py"
    code, data = compared(
        f"{bot} exit-10th", f"{bot} good", "--players", "2", "--fixed", "--matches", "8", "--seed", "1"
    )
    assert code == 1
    pairs = data["differences"]
    assert all(24 <= pair["a"] <= pair["b"] for pair in pairs)
    assert any(pair["a"] > 24 for pair in pairs)  # not 24 for any forfeit: it keeps its own points
    assert all(pair["a_forfeit"] and not pair["b_forfeit"] for pair in pairs)
    assert data["faults"]["a"]["forfeits"] == 4
    assert data["faults"]["b"] == {"faults": 0, "forfeits": 0}


def test_no_verdict_is_one_line_and_exit_code_4():
    usage = [  # wrong flags or arguments: click's usage banner first
        (
            (RANDOM, RANDOM, "--fixed", "--h1", "3"),
            "--h1 apply only to the sequential test, not with --fixed",
        ),
        ((RANDOM,), "compare needs two bots or more, got 1"),
        ((RANDOM, RANDOM, "--rule", "talk=loud"), "talk: must be one of"),
        ((RANDOM, RANDOM, "--players", "5"), "5 is not in the range 2<=x<=4"),
    ]
    unusable = [  # the flags were right: one line and nothing else
        ((RANDOM, "sample_bots.random_bot:Nope"), "has no Bot subclass Nope"),
        ((RANDOM, "python sample_bots/no_such_bot.py"), "no script 'sample_bots/no_such_bot.py' in"),
        ((RANDOM, "python -c \"raise SystemExit('no model file')\""), "its last output: 'no model file'"),
        ((RANDOM, RANDOM, "--sprt", "--h0", "3", "--h1", "1"), "--h1 must be more than --h0"),
        ((RANDOM, RANDOM, "--sprt", "--alpha", "0.7"), "--alpha must lie between 0 and 0.5"),
        ((RANDOM, RANDOM, "--matches", "7"), "--matches 7: less than one round (8 matches at 4 seats)"),
        ((RANDOM, RANDOM, "--players", "2", "--against", RANDOM, "--against", RANDOM), "has 1 seat(s)"),
    ]
    for cases, banner in ((usage, True), (unusable, False)):
        for args, message in cases:
            result = compare(*args)
            assert result.returncode == 4, (args, result.stderr)  # never 2, which is "undecided"
            assert "Traceback" not in result.stderr, result.stderr
            errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
            assert len(errors) == 1, result.stderr
            assert message in errors[0], result.stderr
            assert result.stdout == ""
            if banner:
                assert result.stderr.startswith("Usage: referee compare"), result.stderr
            else:
                assert result.stderr == errors[0] + "\n", result.stderr


def test_a_referee_that_keeps_failing_stops_the_comparison_without_a_verdict():
    result = compare("tests.bots.voider:Breaker", RANDOM, "--seed", "1", "--log-level", "error")
    assert result.returncode == 4
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: the referee stopped the comparison: 5 pairs in a row were void, the last one with referee "
        "error: RuntimeError: a referee bug planted by a test bot"
    ]


@pytest.mark.quick
def test_the_sequential_test_keeps_its_error_rates():
    """Simulated normal pair differences (sd 10, four seats, checked per round as `referee compare`
    does): H1 accepted when the truth is H0, and H0 when it is H1, about as often as alpha and beta say."""
    test = Sprt(h0=0.0, h1=2.0, alpha=0.05, beta=0.05)
    rng = random.Random(16)

    def verdict(truth: float) -> Verdict:
        n, total, squares = 0, 0.0, 0.0
        while n < 2000:
            for _ in range(4):
                x = rng.gauss(truth, 10.0)
                n, total, squares = n + 1, total + x, squares + x * x
            mean = total / n
            estimate = Estimate(n, mean, math.sqrt((squares - n * mean * mean) / (n - 1)))
            decided = test.decide(estimate) if n >= SPRT_MIN_PAIRS else None
            if decided is not None:
                return decided
        return Verdict.UNDECIDED

    runs = 400
    false_h1 = sum(verdict(0.0) is Verdict.BETTER for _ in range(runs)) / runs
    false_h0 = sum(verdict(2.0) is Verdict.NOT_BETTER for _ in range(runs)) / runs
    assert 0.01 < false_h1 < 0.09
    assert 0.01 < false_h0 < 0.09
