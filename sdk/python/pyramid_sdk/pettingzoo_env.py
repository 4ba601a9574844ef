"""Pyramid as a PettingZoo AEC environment, for reinforcement learning (the ``pettingzoo`` extra).

One episode is one whole match: ``16 × players`` deals, every declaration and every card a step of the
agent whose turn it is. Agents are ``player_0`` … ``player_{n-1}``, in seat order (clockwise).

- **Observation**: ``{"observation": float32[306], "action_mask": int8[52]}``, built by
  :mod:`pyramid_sdk.features` from exactly what the seat may know (its hand, the cards played and by
  whom, the declaration, tricks taken, every pyramid); never another hand. Seats are seen from the
  observer, so one policy can play every seat.
- **Action**: ``Discrete(52)``: 0-23 play that card, 24-51 declare (see :mod:`pyramid_sdk.features`).
  Sample with the mask; an action outside it raises :class:`~pyramid_sdk.actions.IllegalActionError`.
  Agents do not talk (table talk is text, which this action space leaves out).
- **Reward** (``reward=``): ``"deal"`` (default): when a deal ends, the declarer gets its points for it
  (``10 - 2·|taken - declared|``), everyone else 0. An agent's return over the episode is then its match
  total, the game's own score, and each deal's points arrive the moment the deal that earned them ends,
  not 32 to 64 deals later. ``"match"``: each agent gets its match total once, at the end: the same return,
  with the credit assignment left to the learner. ``"zero-sum"``: the declarer gets its points and each
  defender ``-points / (players - 1)``: defenders are paid for making the declarer miss, as the game's
  ranking pays them, and the rewards of every step sum to zero.
- **Rule variants** are arguments: ``players`` (2-4), ``trick_winner`` (``"led-suit"`` or
  ``"highest-rank"``), as in a league file's ``rules:``.
- ``reset(seed=N)`` deals exactly the cards a referee deals for match seed ``N`` (``referee match --seed N``,
  ``referee.api.match(..., seed=N)``); without a seed, the environment's own generator draws one.

>>> from pyramid_sdk.pettingzoo_env import env
>>> game = env(players=2)
>>> game.reset(seed=1)
>>> game.agent_selection, game.observation_space("player_0")["observation"].shape
('player_0', (306,))
>>> rewards = {agent: 0.0 for agent in game.possible_agents}
>>> for agent in game.agent_iter():
...     seen, reward, terminated, truncated, info = game.last()
...     rewards[agent] += reward
...     game.step(None if terminated or truncated else int(seen["action_mask"].argmax()))
>>> totals = game.unwrapped.match.totals
>>> tuple(rewards.values()) == totals, len(game.unwrapped.match.record().deals)
(True, 32)
"""

from __future__ import annotations

from typing import Any, Final

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from pyramid_sdk.actions import IllegalActionError
from pyramid_sdk.engine import Match
from pyramid_sdk.features import ACTIONS, SIZE, action_mask, action_of, observation_array
from pyramid_sdk.observation import Phase
from pyramid_sdk.rules import Rules
from pyramid_sdk.seeds import SEED_BITS

REWARDS: Final = ("deal", "match", "zero-sum")


class PyramidEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """The raw environment; :func:`env` wraps it in PettingZoo's order-enforcing checks."""

    metadata: Final = {"render_modes": ["ansi", "human"], "name": "pyramid_v0", "is_parallelizable": False}

    def __init__(
        self,
        players: int = 4,
        trick_winner: str = "led-suit",
        reward: str = "deal",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward: must be one of {', '.join(REWARDS)}, got {reward!r}")
        if render_mode not in (None, "ansi", "human"):
            raise ValueError(f"render_mode: must be ansi, human or None, got {render_mode!r}")
        self.rules = Rules.from_dict({"players": players, "trick_winner": trick_winner, "talk": "off"})
        self.reward_mode = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(-1.0, 1.0, (SIZE,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (ACTIONS,), np.int8),
            }
        )
        self._observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self._action_spaces = {agent: gymnasium.spaces.Discrete(ACTIONS) for agent in self.possible_agents}
        self._rng = np.random.default_rng()
        self.match = Match(self.rules, 0, self.possible_agents)

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            match_seed = seed
        else:
            match_seed = int(self._rng.integers(0, 2**SEED_BITS - 1, dtype=np.uint64))
        self.match = Match(self.rules, match_seed, self.possible_agents)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._select()

    def observe(self, agent: str) -> dict[str, np.ndarray[Any, Any]]:
        obs = self.match.observation(self._seat[agent])
        return {"observation": observation_array(obs), "action_mask": action_mask(obs)}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        seat = self._seat[agent]
        chosen = action_of(action)
        if chosen not in match.legal_actions(seat):
            raise IllegalActionError(
                f"{agent} cannot take action {int(action)} ({chosen}) now: sample with the action mask"
            )
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        match.apply(chosen, seat)
        if match.phase in (Phase.DEAL_OVER, Phase.MATCH_OVER):  # the last deal ends the match at once
            self._score_deal()
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        if match.phase is Phase.MATCH_OVER:
            if self.reward_mode == "match":
                for other in self.agents:
                    self.rewards[other] = float(match.totals[self._seat[other]])
            self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        self._select()
        if self.render_mode == "human":
            self.render()

    def _score_deal(self) -> None:
        if self.reward_mode == "match":
            return
        deal = self.match.record().deals[-1]
        declarer = self.possible_agents[deal.declarer]
        self.rewards[declarer] = float(deal.points)
        if self.reward_mode == "zero-sum":
            share = -deal.points / (self.rules.players - 1)
            for other in self.agents:
                if other != declarer:
                    self.rewards[other] = share

    def _select(self) -> None:
        acting = self.match.to_act
        if acting is not None:
            self.agent_selection = self.possible_agents[acting]
        else:  # the match is over: every agent is done, in seat order
            self.agent_selection = self.agents[0]

    def render(self) -> str | None:
        """The table as text, all hands shown (``ansi`` returns it, ``human`` prints it)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode: pass render_mode='ansi'")
            return None
        match = self.match
        lines = [f"deal {match.deal_number} of {self.rules.deals}, {match.phase}"]
        declaration = match.declaration
        said = f": {declaration.human}" if declaration is not None else ""
        lines.append(f"declarer {self.possible_agents[match.declarer]}{said}")
        for seat, agent in enumerate(self.possible_agents):
            marker = "*" if seat == match.to_act else " "
            hand = " ".join(card.human for card in match.hand(seat))
            lines.append(f"{marker}{agent}  total {match.totals[seat]:>4}  {hand}")
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def raw_env(**kwargs: Any) -> PyramidEnv:
    """The environment without wrappers."""
    return PyramidEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The environment, wrapped as PettingZoo's own games are: out-of-bounds actions are caught, and calls
    out of order (``step`` before ``reset``) say so."""
    game: AECEnv = wrappers.AssertOutOfBoundsWrapper(PyramidEnv(**kwargs))
    return wrappers.OrderEnforcingWrapper(game)
