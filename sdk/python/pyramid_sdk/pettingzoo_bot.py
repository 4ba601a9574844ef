"""The adapter that enters a policy trained on the PettingZoo environment in a league as an ordinary bot.

A trained policy is any function from what the environment's agent observed, ``{"observation": array,
"action_mask": mask}`` (:mod:`pyramid_sdk.features`), to an action number: a :data:`TrainedPolicy`, named
apart from the playout policies of :mod:`pyramid_sdk.simulation`, which play a simulated deal on.
:class:`PolicyBot` builds that same dictionary from the observation the referee sends, so the policy
plays a match exactly as it played in training; run it like any other bot::

    # my_policy_bot.py
    from pyramid_sdk.client import run
    from pyramid_sdk.pettingzoo_bot import PolicyBot

    weights = numpy.load("weights.npz")          # from the bot's own folder
    run(PolicyBot(lambda seen: int(numpy.argmax(seen["observation"] @ weights["w"] + ...)), name="mine"))

>>> from pyramid_sdk import Match, Rules
>>> first_legal = lambda seen: int(seen["action_mask"].argmax())
>>> bot = PolicyBot(first_legal, name="first")
>>> match = Match(Rules(players=2), seed=4)
>>> str(bot.act(match.observation(match.to_act)))
'0S'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pyramid_sdk.actions import Action, Declare, Play
from pyramid_sdk.bot import Bot
from pyramid_sdk.cards import Card
from pyramid_sdk.features import action_mask, action_of, observation_array
from pyramid_sdk.observation import Observation

TrainedPolicy = Callable[[Mapping[str, np.ndarray[Any, Any]]], Any]
"""``{"observation": ..., "action_mask": ...}`` -> an action number (an ``int`` or a NumPy integer)."""


def observe(obs: Observation) -> dict[str, np.ndarray[Any, Any]]:
    """What the environment's agent gets for this observation: the same arrays, the same keys."""
    return {"observation": observation_array(obs), "action_mask": action_mask(obs)}


class PolicyBot(Bot):
    """A :class:`Bot` that asks ``policy`` for every decision. An action outside the mask is sent as it
    is: the referee records it as an illegal action and plays a default (docs/PROTOCOL.md, faults)."""

    def __init__(self, policy: TrainedPolicy, name: str = "policy", version: str = "0") -> None:
        self.policy = policy
        self.name = name
        self.version = version

    def act(self, obs: Observation) -> Action:
        return action_of(int(self.policy(observe(obs))))

    def declare(self, obs: Observation) -> Declare:
        action = self.act(obs)
        if not isinstance(action, Declare):
            raise ValueError(f"the policy chose {action} where a declaration is due")
        return action

    def play(self, obs: Observation) -> Card | Play:
        action = self.act(obs)
        if not isinstance(action, Play):
            raise ValueError(f"the policy chose {action} where a card is due")
        return action
