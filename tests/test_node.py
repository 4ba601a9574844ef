"""Bots in another language: the Node.js SDK's own tests, and Node bots against Python bots over gRPC."""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyramid_sdk import Match
from referee.match.faults import FaultKind
from referee.match.outcome import MatchStatus
from sample_bots.random_bot import RandomBot
from support import ROOT
from support.arena import FAST, RANDOM, assert_no_unknown_cards, assert_played_as, play

NODE_SDK = ROOT / "sdk/node"
NODE_BOT = "node sample_bots/node/heuristic.js"

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and (shutil.which("node") is None or not (NODE_SDK / "node_modules").is_dir()),
    reason="Node.js or sdk/node/node_modules missing: run `npm ci --prefix sdk/node` (the README does)",
)


def test_the_node_sdk_tests_pass():
    result = subprocess.run(
        ["node", "--test", "test/"], cwd=NODE_SDK, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# fail 0" in result.stdout


def test_a_four_player_match_of_python_and_node_bots(tmp_path):
    outcome, sent = play(
        [NODE_BOT, RANDOM, NODE_BOT, RANDOM], seed=31, record_messages=True, log_dir=tmp_path
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert outcome.faults == ()
    record = outcome.record
    assert Match.replay(record).record() == record
    assert len(record.deals) == 64
    for seat in (1, 3):
        assert_played_as(record, seat, RandomBot())
    for seat in range(4):
        assert_no_unknown_cards(record, seat, sent[seat])
    node_points = record.totals[0] + record.totals[2]
    python_points = record.totals[1] + record.totals[3]
    assert node_points > python_points  # the Node heuristic beats random play


def test_a_node_bot_that_throws_faults_instead_of_hanging(tmp_path):
    started = time.monotonic()
    outcome, _ = play(["node tests/bots/throwing.js", RANDOM], seed=3, log_dir=tmp_path)
    assert outcome.status is MatchStatus.COMPLETE
    faults = [f for f in outcome.faults if f.seat == 0]
    assert [f.kind for f in faults] == [FaultKind.MALFORMED] * 3
    assert faults[0].detail == "the bot raised Error: this bot has a bug"  # ActionReply.error
    assert outcome.record.forfeits == (0,)
    assert time.monotonic() - started < 20  # answered at once: no time limit was spent
    assert "this bot has a bug" in (tmp_path / "seat0.log").read_text()


def test_referee_check_passes_the_node_sample_bot():
    referee = str(Path(sys.executable).parent / "referee")
    result = subprocess.run(
        [referee, "check", "--cwd", str(ROOT), "--", "node", "sample_bots/node/heuristic.js"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout


def test_the_writing_a_bot_node_example_plays_a_match(tmp_path):
    text = (ROOT / "docs/WRITING_A_BOT.md").read_text(encoding="utf-8")
    code = re.search(r"```js bot\n(.*?)```", text, re.DOTALL).group(1)
    assert len(code.strip().splitlines()) <= 25
    (tmp_path / "my_bot.js").write_text(code, encoding="utf-8")
    (tmp_path / "node_modules").mkdir()  # as `npm install` of the SDK's tarball leaves it (a link here)
    (tmp_path / "node_modules/pyramid-arena-sdk").symlink_to(NODE_SDK)
    tmp_path.chmod(0o755)  # a sandboxed bot runs as a uid of its own
    outcome, _ = play([f"node {tmp_path / 'my_bot.js'}", RANDOM], seed=8, log_dir=tmp_path, paths=(tmp_path,))
    assert outcome.status is MatchStatus.COMPLETE
    assert outcome.faults == ()
    assert outcome.record.seats == ("seat0", "seat1")


@pytest.mark.parametrize(
    ("behaviour", "kind", "detail"),
    [
        ("throw", FaultKind.MALFORMED, "the bot raised Error: this bot has a bug"),
        ("sleep", FaultKind.TIMEOUT, "no answer within"),
        ("crash", FaultKind.DISCONNECT, "closed its stream"),
        ("illegal", FaultKind.ILLEGAL_ACTION, "not in the seat's hand"),
        ("wrong-token", FaultKind.DISCONNECT, "before connecting"),
    ],
)
def test_misbehaving_node_bots_fault_and_the_match_completes(behaviour, kind, detail, tmp_path):
    outcome, _ = play(
        [f"node tests/bots/misbehaving.js {behaviour}", RANDOM],
        seed=4,
        time_control=FAST,
        absent_ok=True,
        log_dir=tmp_path,
    )
    assert outcome.status is MatchStatus.COMPLETE
    faults = [f for f in outcome.faults if f.seat == 0]
    assert faults
    assert {f.kind for f in faults} == {kind}
    assert detail in faults[0].detail
    assert outcome.record.forfeits == (0,)
    assert not [f for f in outcome.faults if f.seat == 1]
    assert_played_as(outcome.record, 1, RandomBot())
    if behaviour == "wrong-token":
        assert "UNAUTHENTICATED" in (tmp_path / "seat0.log").read_text()
