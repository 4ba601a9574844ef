"""Every decision carries the seat's clock, in both SDKs, and the Monte Carlo bot budgets from it."""

import asyncio
import json
import os
import shutil
import statistics
import sys

import pytest

from pyramid_sdk import Clock, Match, Rules
from pyramid_sdk.bot import MatchInfo, TimeControl
from referee.league.config import load_league
from referee.match.faults import FaultKind
from referee.match.outcome import MatchStatus
from referee.match.playing import LocalSeat, play_match
from sample_bots.montecarlo import MonteCarloBot, decisions_left
from support import ROOT
from support.arena import RANDOM, play

NODE_READY = bool(os.environ.get("CI")) or (
    shutil.which("node") is not None and (ROOT / "sdk/node/node_modules").is_dir()
)


@pytest.mark.parametrize(
    "command",
    [
        f"{sys.executable} tests/bots/clock.py",
        pytest.param(
            "node tests/bots/clock.js",
            marks=pytest.mark.skipif(not NODE_READY, reason="Node.js or sdk/node/node_modules missing"),
        ),
    ],
    ids=["python", "node"],
)
@pytest.mark.slow
def test_a_bot_process_sees_the_referees_clock_at_every_decision(command, tmp_path):
    outcome, sent = play(
        [command, RANDOM], seed=4, time_control=TimeControl(0.25, 3.0), record_messages=True, log_dir=tmp_path
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert [f.kind for f in outcome.faults if f.seat == 0] == []
    requests = [m.action_request for m in sent[0] if m.WhichOneof("kind") == "action_request"]
    log = (tmp_path / "seat0.log").read_text(encoding="utf-8").splitlines()
    seen = [json.loads(line.removeprefix("CLOCK ")) for line in log if line.startswith("CLOCK ")]
    assert [(r.per_action_ms, r.bank_ms) for r in requests] == [
        (entry["per_action_ms"], entry["bank_ms"]) for entry in seen
    ]
    assert {entry["per_action_ms"] for entry in seen} == {250}
    banks = [entry["bank_ms"] for entry in seen]
    assert banks[0] == 3000
    assert banks[-1] < 3000 - 150  # two slow cards drew on the bank, and the bot was told
    assert banks == sorted(banks, reverse=True)
    for entry in seen:
        assert entry["time_left_ms"] == entry["per_action_ms"] + entry["bank_ms"]
        assert 0 < entry["left_ms"] <= entry["time_left_ms"]


def test_an_in_process_bot_gets_the_clock_too():
    clocks: list[Clock | None] = []

    class Watcher(MonteCarloBot):
        def play(self, obs):
            clocks.append(obs.clock)
            return obs.legal_cards[0]

    seats = [LocalSeat(Watcher(budget=0.01), "watcher"), LocalSeat(MonteCarloBot(budget=0.001), "mc")]
    outcome = asyncio.run(play_match(seats, Rules(players=2), 9, time_control=TimeControl(0.5, 4.0)))
    assert outcome.status is MatchStatus.COMPLETE
    assert clocks
    assert all(clock is not None and clock.per_action == 0.5 and clock.bank <= 4.0 for clock in clocks)


def test_the_monte_carlo_budget_follows_the_clock():
    obs = Match(Rules(players=3), seed=2).observation(0)
    assert obs.clock is None
    assert MonteCarloBot(budget=0.3).time_for(obs) == 0.3  # no clock: the budget
    obs.clock = Clock(per_action=0.1, bank=4.0, received=0.0)
    left = decisions_left(obs)
    assert left == 6 + 6 * 47 + 16  # six cards now, six in each of 47 deals to come, 16 declarations
    assert MonteCarloBot(budget=10).time_for(obs) == pytest.approx(0.1 - 0.02 + 4.0 / left)
    assert MonteCarloBot(budget=0.05).time_for(obs) == 0.05  # the budget still caps it
    obs.clock = Clock(per_action=0.005, bank=0.0, received=0.0)
    assert MonteCarloBot(budget=10).time_for(obs) == 0.0  # under the margin: one world, as fast as it goes


@pytest.mark.slow
def test_the_monte_carlo_bot_uses_its_clock_and_stays_within_it(tmp_path):
    """A process with a large budget and a 100 ms limit: it thinks most of the limit (the old bot stopped
    at half of it) and never times out."""
    per_action = 0.1
    outcome, _ = play(
        [f"{sys.executable} sample_bots/montecarlo.py --budget 10", RANDOM],
        seed=12,
        time_control=TimeControl(per_action, 5.0),
        log_dir=tmp_path,
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert [f for f in outcome.faults if f.kind is FaultKind.TIMEOUT] == []
    thinking = outcome.latencies[0]
    print(f"median {statistics.median(thinking):.3f}s, max {max(thinking):.3f}s")
    assert statistics.median(thinking) > 0.6 * per_action
    assert max(thinking) < per_action + 5.0


class _Counting(MonteCarloBot):
    """Counts the worlds it draws."""

    worlds = 0

    def _sample_hands(self, obs):
        self.worlds += 1
        return super()._sample_hands(obs)


def test_a_monte_carlo_bot_given_a_sample_count_alone_ignores_the_clock():
    """By count, the choices depend on the match seed alone: however late the request (a busy machine),
    it draws exactly its samples. By time, a request already out of time gets one world."""
    match = Match(Rules(players=4), seed=9)
    info = MatchInfo("m", match.declarer, match.seats, match.rules, TimeControl(1.0, 20.0), 77)
    choices = []
    for _ in range(2):
        obs = match.observation(match.declarer)
        obs.clock = Clock(per_action=0.001, bank=0.0, received=0.0)  # long past: no time left at all
        counted = _Counting(samples=3)
        counted.match_start(info)
        choices.append(counted.act(obs))
        assert counted.worlds == 3
    assert choices[0] == choices[1]  # the same seed, the same worlds, the same declaration
    timed = _Counting(budget=0.2)
    timed.match_start(info)
    timed.act(obs)
    assert timed.worlds == 1
    capped = _Counting(budget=0.2, samples=3)  # both: whichever comes first (here the clock)
    capped.match_start(info)
    capped.act(obs)
    assert capped.worlds == 1
    with pytest.raises(ValueError, match="samples: at least 1"):
        MonteCarloBot(samples=0)


def test_the_example_league_thinks_by_count_so_it_repeats_exactly():
    league = load_league(ROOT / "tournaments/example/league.yaml", check_commands=False)
    for entrant in league.entrants:
        command = entrant.spec.command
        if "sample_bots.montecarlo" in command:
            assert "--samples" in command
            assert "--budget" not in command  # a budget would make its choices depend on the machine
            break
    else:
        pytest.fail("the example league has no Monte Carlo bot")
