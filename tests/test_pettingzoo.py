"""The PettingZoo environment passes PettingZoo's own conformance tests, pays the rewards it documents,
takes rule variants as arguments, and a policy trained on it plays a league match as an ordinary bot process,
choosing exactly what it chose in the environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

if not os.environ.get("CI"):  # in CI the extra is installed (README's test command): a missing one fails
    pytest.importorskip("pettingzoo", reason="the pettingzoo extra is not installed: pip install -e '.[dev]'")

import numpy as np
from pettingzoo.test import api_test, seed_test

from pyramid_sdk import IllegalActionError, Match, MatchRecord
from pyramid_sdk.features import ACTIONS, OFFSETS, SIZE, action_of
from pyramid_sdk.pettingzoo_bot import PolicyBot
from pyramid_sdk.pettingzoo_env import PyramidEnv, env, raw_env
from referee.api import match as play_match
from support import ROOT
from support.arena import assert_played_as

sys.path.insert(0, str(ROOT / "tests/bots"))
from policy_bot import linear_policy


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_api_test_passes(players):
    game = env(players=players)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(game, num_cycles=2000)
    # Only the two that the dictionary observation with an action mask, PettingZoo's own format for
    # games with illegal moves (its classic games use it), always draws.
    assert {str(w.message) for w in caught} <= {
        "Observation is not a NumPy array",
        "Observation space for each agent probably should be gymnasium.spaces.box or "
        "gymnasium.spaces.discrete",
    }


@pytest.mark.parametrize("reward", ["deal", "zero-sum"])
def test_pettingzoo_seed_test_passes(reward):
    seed_test(lambda: env(players=3, reward=reward), num_cycles=500)


def play_out(game, policy, seed):
    """Plays a whole episode; each agent's summed rewards, and the environment's match."""
    game.reset(seed=seed)
    returns = dict.fromkeys(game.possible_agents, 0.0)
    for agent in game.agent_iter():
        seen, reward, terminated, truncated, _ = game.last()
        returns[agent] += reward
        game.step(None if terminated or truncated else policy(seen))
    return returns, game.unwrapped.match


def test_deal_rewards_pay_the_declarer_and_sum_to_the_match_totals():
    returns, match = play_out(env(players=4), linear_policy, seed=9)
    assert tuple(returns.values()) == match.totals
    assert match.is_over
    record = match.record()
    assert len(record.deals) == 64
    assert Match.replay(record).record() == record  # every step was a legal move of the real engine


def test_match_rewards_come_once_and_zero_sum_rewards_cancel():
    game = env(players=3, reward="match")
    game.reset(seed=5)
    paid = []
    for agent in game.agent_iter():
        seen, reward, terminated, truncated, _ = game.last()
        if reward:
            paid.append((agent, reward, terminated))
        game.step(None if terminated or truncated else linear_policy(seen))
    totals = game.unwrapped.match.totals
    assert [(agent, reward) for agent, reward, _ in paid] == [
        (f"player_{seat}", float(total)) for seat, total in enumerate(totals) if total
    ]
    assert all(terminated for *_, terminated in paid)
    returns, match = play_out(env(players=3, reward="zero-sum"), linear_policy, seed=5)
    assert sum(returns.values()) == pytest.approx(0.0)
    totals = match.totals
    for seat, agent in enumerate(match.seats):
        others = sum(totals) - totals[seat]
        assert returns[agent] == pytest.approx(totals[seat] - others / 2)


def test_rule_variants_are_environment_arguments():
    game = raw_env(players=2, trick_winner="highest-rank")
    game.reset(seed=3)
    assert game.match.rules.trick_winner == "highest-rank"
    assert game.match.rules.players == 2
    assert game.observe("player_0")["observation"][OFFSETS["highest_rank"]] == 1
    assert game.observe("player_0")["observation"][OFFSETS["players"]] == 1  # two players
    with pytest.raises(ValueError, match="trick_winner"):
        raw_env(trick_winner="lowest")
    with pytest.raises(ValueError, match="reward"):
        raw_env(reward="points")


def test_the_environment_deals_what_the_referee_deals_for_the_same_seed():
    game = raw_env(players=4)
    game.reset(seed=77)
    referee_match = Match(game.rules, 77)
    assert [game.match.hand(seat) for seat in range(4)] == [referee_match.hand(seat) for seat in range(4)]
    assert game.agent_selection == f"player_{referee_match.to_act}"


def test_observations_show_one_seat_only_and_the_mask_is_the_legal_set():
    game = raw_env(players=4)
    game.reset(seed=12)
    for _ in range(30):
        agent = game.agent_selection
        seat = int(agent.split("_")[1])
        seen = game.observe(agent)
        assert seen["observation"].shape == (SIZE,)
        hand = {index for index in range(24) if seen["observation"][OFFSETS["hand"] + index] == 1}
        assert hand == {card.index for card in game.match.hand(seat)}
        legal = {str(action_of(n)) for n in np.flatnonzero(seen["action_mask"])}
        assert legal == {str(action) for action in game.match.legal_actions(seat)}
        unseen = {index for index in range(24) if seen["observation"][OFFSETS["unseen"] + index] == 1}
        for other in range(4):
            if other != seat:  # another hand is among the unseen cards, never in this one
                assert {card.index for card in game.match.hand(other)} <= unseen
        game.step(linear_policy(seen))


def test_an_action_outside_the_mask_is_refused():
    game = raw_env(players=2)
    game.reset(seed=1)
    seen = game.observe(game.agent_selection)
    illegal = int(np.flatnonzero(seen["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="sample with the action mask"):
        game.step(illegal)
    with pytest.raises(ValueError, match="from 0 to 51"):
        action_of(ACTIONS)


def test_render_shows_the_table_as_text():
    game = raw_env(players=3, render_mode="ansi")
    game.reset(seed=2)
    text = game.render()
    assert text.startswith("deal 1 of 48, declare")
    assert text.count("player_") == 4  # the declarer line and one line per seat
    assert isinstance(raw_env(players=2), PyramidEnv)


@pytest.mark.slow
def test_a_policy_plays_a_match_as_bot_processes_exactly_as_in_the_environment(tmp_path):
    _, trained = play_out(env(players=3), linear_policy, seed=2024)
    bot = f"{sys.executable} tests/bots/policy_bot.py"
    played = play_match([bot, bot, bot], seed=2024, cwd=ROOT, logs=tmp_path)
    assert played.faults == ()
    assert played.seats == ("policy_bot", "policy_bot#2", "policy_bot#3")
    assert played.record.deals == trained.record().deals  # same deals, same declarations, same cards
    assert played.totals == trained.totals


def test_the_adapter_is_an_ordinary_bot_in_process_too():
    bot = PolicyBot(linear_policy, name="linear")
    played = play_match([bot, "sample_bots.random_bot:RandomBot"], seed=4, cwd=ROOT)
    assert played.faults == ()
    assert played.seats == ("linear", "RandomBot")


@pytest.mark.slow
def test_the_documented_policy_bot_plays_a_league_as_an_ordinary_entrant(tmp_path):
    text = (ROOT / "docs/PETTINGZOO.md").read_text(encoding="utf-8")
    code = re.search(r"```python policy-bot\n(.*?)```", text, re.DOTALL)
    assert code is not None
    bot_folder = tmp_path / "bots/linear"
    bot_folder.mkdir(parents=True)
    (bot_folder / "my_policy_bot.py").write_text(code.group(1), encoding="utf-8")
    weights = np.random.default_rng(7).normal(size=(SIZE, ACTIONS)).astype(np.float32)
    np.save(bot_folder / "weights.npy", weights)
    for path in (tmp_path, tmp_path / "bots", bot_folder, *bot_folder.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)  # a sandboxed bot runs as a uid of its own
    league = tmp_path / "league.yaml"
    league.write_text(
        f"""\
name: Policy League
seed: 3
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
database: results.sqlite
entrants:
  - name: linear
    command: python my_policy_bot.py
    cwd: bots/linear
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
""",
        encoding="utf-8",
    )
    referee = str(Path(sys.executable).parent / "referee")
    run = subprocess.run(
        [referee, "run", str(league)], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    exported = subprocess.run(
        [referee, "export", str(league)], capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    matches = [json.loads(line) for line in exported]
    assert len(matches) == 2
    assert all(match["status"] == "complete" and match["faults"] == [] for match in matches)
    # In each seat the bot process chose what the same policy chooses from the environment's arrays.

    def policy(seen):
        scores = seen["observation"] @ weights
        return int(np.where(seen["action_mask"] == 1, scores, -np.inf).argmax())

    for match in matches:
        rules = {"players": match["players"], **match["rules"]}
        record = MatchRecord.from_dict({**match, "rules": rules, "complete": True})
        assert_played_as(record, record.seats.index("linear"), PolicyBot(policy))
