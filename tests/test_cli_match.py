"""`referee match` from the command line: options and the one-line errors a bot author sees."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFEREE = str(Path(sys.executable).parent / "referee")
RANDOM = "sample_bots.random_bot:RandomBot"


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REFEREE, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_rule_options_reach_the_match_under_either_spelling():
    for option in ("--rule", "--rules"):
        result = referee("match", RANDOM, RANDOM, option, "trick_winner=highest-rank", "--seed", "4")
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert "1. " in result.stdout  # the final standings


def test_bad_input_is_one_line_naming_what_is_wrong():
    cases = [
        (("match", RANDOM, RANDOM, "--rule", "players=3"), "'players=3': not a rule option"),
        (("match", RANDOM, RANDOM, "--rules", "trick_winner=nope"), "trick_winner: must be one of"),
        (("match", RANDOM, "sample_bots.random_bot:Nope"), "has no Bot subclass Nope"),
        (("match", RANDOM, "python sample_bots/no_such_bot.py"), "its last output:"),
    ]
    for args, message in cases:
        result = referee(*args)
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr, result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, result.stderr
        assert message in errors[0]
