"""The expert sample bot plays real matches as its own process over gRPC: it stays within the clock it
is given, and with a sample count it is deterministic for its match seed."""

import random
import statistics
import sys

import pytest

from pyramid_sdk import Match, Phase, Rules
from pyramid_sdk.bot import TimeControl
from referee.match.faults import FaultKind
from referee.match.outcome import MatchStatus
from sample_bots.expert import ExpertBot
from sample_bots.montecarlo import MonteCarloBot
from support.arena import RANDOM, play

HEURISTIC = f"{sys.executable} sample_bots/heuristic.py"


@pytest.mark.slow
def test_the_expert_with_a_sample_count_replays_exactly():
    command = f"{sys.executable} sample_bots/expert.py --samples 3"
    runs = [
        play([command, HEURISTIC, RANDOM], seed=21, time_control=TimeControl(5.0, 60.0))[0] for _ in range(2)
    ]
    for outcome in runs:
        assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
        assert [f for f in outcome.faults if f.seat == 0] == []
    assert runs[0].record == runs[1].record
    # Not trivially so: another sample count plays differently somewhere in 48 deals.
    other, _ = play(
        [f"{sys.executable} sample_bots/expert.py --samples 1", HEURISTIC, RANDOM],
        seed=21,
        time_control=TimeControl(5.0, 60.0),
    )
    assert other.record.deals != runs[0].record.deals


@pytest.mark.slow
def test_the_expert_thinks_within_the_clock_it_is_given(tmp_path):
    """A large budget and a 100 ms limit: it uses most of the limit and never times out."""
    per_action = 0.1
    outcome, _ = play(
        [f"{sys.executable} sample_bots/expert.py --budget 10", RANDOM],
        seed=12,
        time_control=TimeControl(per_action, 5.0),
        log_dir=tmp_path,
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert [f for f in outcome.faults if f.kind is FaultKind.TIMEOUT] == []
    thinking = outcome.latencies[0]
    assert statistics.median(thinking) > 0.5 * per_action
    assert max(thinking) < per_action + 5.0


def test_without_the_declaration_reading_it_chooses_as_the_monte_carlo_bot():
    """Same seed, same count, no inference: the same worlds and the same playout policy, so the same
    choices (the expert is the Monte Carlo search on faster worlds, not a different search)."""
    compared = [compare_for_two_deals(seed) for seed in range(2)]
    assert sum(compared) > 50


def compare_for_two_deals(seed: int) -> int:
    """Plays two deals of a match by random legal actions, every decision first asked of both bots (who
    must agree); the decisions compared."""
    rng = random.Random(seed)
    compared = 0

    def compare(match, seat):
        nonlocal compared
        obs = match.observation(seat)
        expert = ExpertBot(samples=3, seed=seed, infer=False)
        montecarlo = MonteCarloBot(samples=3, seed=seed)
        if obs.phase is Phase.PLAY:
            assert expert.play(obs) == montecarlo.play(obs)
        else:
            assert expert.declare(obs) == montecarlo.declare(obs)
        compared += 1
        return rng.choice(match.legal_actions())

    match = Match(Rules(players=3), seed)
    match.play_out(compare, until=Phase.DEAL_OVER)
    match.play_out(compare, until=Phase.DEAL_OVER)
    return compared
