"""Errors that show their cause (issue #24, item 4), and the protocol's answers on talk and names (item
10): real bot processes, through the real CLI where a user would see the text."""

import os
import shutil
import sys

import pytest

from pyramid_sdk import Rules
from referee.match.faults import FaultKind
from referee.match.outcome import MatchStatus
from referee.match.playing import MAX_ERROR
from support import ROOT
from support.arena import FAST, RANDOM, misbehaving, play
from support.cli import referee

HAS_NODE = bool(os.environ.get("CI")) or (
    shutil.which("node") is not None and (ROOT / "sdk/node/node_modules").is_dir()
)
needs_node = pytest.mark.skipif(not HAS_NODE, reason="Node.js or sdk/node/node_modules missing")


@pytest.mark.parametrize(
    ("bot", "words"),
    [
        pytest.param(
            "python tests/bots/piecewise.py",
            "bot 'piecewise' exited with code 2 before connecting; its last output: "
            "\"loading model | fatal: cannot open model file 'weights.bin'\"",
            id="a line written in pieces, whole",
        ),
        pytest.param(
            "node tests/bots/missing_module.js",
            "bot 'missing_module' exited with code 1 before connecting; its last output: "
            "\"Error: Cannot find module 'left-pad-is-not-installed' | Require stack: | - ",
            id="node's missing module, not its version line",
            marks=needs_node,
        ),
        pytest.param(
            "python tests/bots/never_runs.py",
            "bot 'never_runs' exited with code 0 before connecting: it ended without playing; "
            "did it call run(MyBot()) (from pyramid_sdk.client import run)?; "
            "its last output: 'defined the bot'",
            id="python without run()",
        ),
        pytest.param(
            "node -e 0",
            "bot 'node' exited with code 0 before connecting: it ended without playing; "
            'did it call main(new MyBot()) (const { main } = require("pyramid-arena-sdk"))?',
            id="node without main()",
            marks=needs_node,
        ),
        pytest.param(
            "sh -c 'exit 0'",
            "bot 'sh' exited with code 0 before connecting: it ended without playing; a bot connects to "
            "PYRAMID_ADDRESS and plays until the referee ends its stream (docs/PROTOCOL.md)",
            id="any program",
        ),
    ],
)
def test_a_bot_that_cannot_start_is_one_line_that_says_why(bot, words):
    result = referee("match", bot, "sample_bots.random_bot:RandomBot")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"Error: {words}"), result.stderr
    assert "Node.js v" not in result.stderr


@pytest.mark.parametrize(
    ("how", "detail"),
    [
        ("raise", "the bot raised ValueError: oops"),
        ("none", "the bot raised TypeError: play() returned None, not a card"),
    ],
)
def test_a_python_bot_whose_play_goes_wrong_is_told_what_happened(how, detail):
    result = referee("match", f"python tests/bots/raising.py {how}", "sample_bots.random_bot:RandomBot")
    assert result.returncode == 0, result.stderr
    faults = [line for line in result.stdout.splitlines() if line.startswith("fault: ")]
    assert len(faults) == 3  # then it forfeits
    assert all(line.endswith(f" malformed: {detail}") for line in faults), faults


def test_check_keeps_the_bots_output_with_logs_and_says_where(tmp_path):
    logs = tmp_path / "logs"
    result = referee("check", "--logs", str(logs), "--", "python", "tests/bots/raising.py", "raise")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.endswith("malformed: the bot raised ValueError: oops") for line in lines), lines
    assert f"  log           {logs / 'raising.log'} (what the bot printed)" in lines
    log = (logs / "raising.log").read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log
    assert 'raise ValueError("oops")' in log
    clean = referee("check", "--logs", str(logs), "--", "python", "sample_bots/random_bot.py")
    assert clean.returncode == 0
    assert "  log " not in clean.stdout  # said only when there is something to read in it


def test_the_error_field_is_one_bounded_line_and_a_client_without_it_still_works():
    outcome, _ = play([misbehaving("error-field"), RANDOM], seed=3, time_control=FAST)
    faults = [f for f in outcome.faults if f.seat == 0]
    assert [f.kind for f in faults] == [FaultKind.MALFORMED] * 2
    assert faults[0].detail == "the action carries neither a declaration nor a card"
    assert faults[1].detail.startswith("the bot raised Boom | ?éé")
    assert len(faults[1].detail) == len("the bot raised ") + MAX_ERROR
    assert faults[1].detail.endswith("…")
    assert outcome.record.forfeits == ()


@needs_node
def test_a_node_bot_that_throws_sends_what_it_threw(tmp_path):
    outcome, _ = play(["node tests/bots/misbehaving.js throw", RANDOM], seed=4, log_dir=tmp_path)
    details = {f.detail for f in outcome.faults if f.seat == 0}
    assert details == {"the bot raised Error: this bot has a bug"}


# -- item 10: what the protocol's text says, as the referee and both SDKs do it -------------------------

TALK = Rules(players=2, talk="open", talk_max_length=80)


def _talk_outcome(command: str):
    outcome, _ = play([command, RANDOM], seed=12, rules=TALK, max_faults=100)
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    said = [message.text for deal in outcome.record.deals for message in deal.talk if message.seat == 0]
    return [f for f in outcome.faults if f.seat == 0], said


LANGUAGES = [
    pytest.param(f"{sys.executable} tests/bots/long_talk.py", id="python"),
    pytest.param("node tests/bots/long_talk.js", id="node", marks=needs_node),
]


@pytest.mark.parametrize("bot", LANGUAGES)
@pytest.mark.parametrize("char", ["é", "😀"])  # two UTF-8 bytes; four, and two UTF-16 units
def test_talk_limits_count_characters_as_code_points(bot, char):
    faults, said = _talk_outcome(f"{bot} {char} 80")
    assert faults == []
    assert said
    assert all(text == char * 80 for text in said)
    faults, said = _talk_outcome(f"{bot} {char} 81")
    assert said == []
    assert faults
    assert {f.kind for f in faults} == {FaultKind.TALK}
    assert all(f.detail == "seat 0: talk message of 81 characters, the limit is 80" for f in faults)


@pytest.mark.parametrize("bot", LANGUAGES)
def test_the_declarer_never_talks_under_open_talk(bot):
    faults, said = _talk_outcome(f"{bot} hello 1 as-declarer")
    assert said == []
    assert faults
    assert {f.kind for f in faults} == {FaultKind.TALK}
    assert all("is the declarer, and the declarer never talks" in f.detail for f in faults)


def test_a_bots_own_name_is_kept_to_forty_printable_characters():
    name = "  Ω-bot\t" + "y" * 60 + "  "
    result = referee("match", f"python tests/bots/named.py '{name}'", "sample_bots.random_bot:RandomBot")
    assert result.returncode == 0, result.stderr
    seats = next(line for line in result.stdout.splitlines() if line.startswith("seats: "))
    assert seats == f"seats: 0={'Ω-bot?' + 'y' * 34}, 1=random"
