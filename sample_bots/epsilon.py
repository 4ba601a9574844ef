"""The heuristic bot with a share ε of its decisions played at random: a ladder of known strengths.

Each decision is the heuristic bot's with probability 1 − ε, else a uniformly random legal action, from a
generator seeded by ``info.seed``, so a match replays exactly. More randomness can only cost points on
average, so the order of a field of these bots is known by construction (ε 0 strongest, ε 1 the random
bot), which is what ``benchmarks/ranking.py`` and the ranking tests need: a field whose true order is
known, cheap to play in-process. Exact copies (the same class under two names) are equal by construction.
"""

from __future__ import annotations

import random

from pyramid_sdk.actions import Declare
from pyramid_sdk.bot import Bot, MatchInfo
from pyramid_sdk.cards import Card
from pyramid_sdk.heuristic import choose_card, choose_declaration
from pyramid_sdk.observation import Observation


class EpsilonBot(Bot):
    """The heuristic bot, random in a share :attr:`epsilon` of its decisions."""

    name = "epsilon"
    version = "1"
    epsilon = 0.5

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def match_start(self, info: MatchInfo) -> None:
        """Reseed for every match: the same ``info.seed`` gives the same choices."""
        self.rng = random.Random(info.seed)

    def declare(self, obs: Observation) -> Declare:
        if self.rng.random() < self.epsilon:
            return self.rng.choice(obs.legal_declarations)
        return choose_declaration(obs)

    def play(self, obs: Observation) -> Card:
        if self.rng.random() < self.epsilon:
            return self.rng.choice(obs.legal_cards)
        return choose_card(obs)


class Epsilon0(EpsilonBot):
    name, epsilon = "e0", 0.0


class Epsilon25(EpsilonBot):
    name, epsilon = "e25", 0.25


class Epsilon50(EpsilonBot):
    name, epsilon = "e50", 0.5


class Epsilon75(EpsilonBot):
    name, epsilon = "e75", 0.75


class Epsilon100(EpsilonBot):
    name, epsilon = "e100", 1.0


class Epsilon50Twin(Epsilon50):
    """An exact copy of :class:`Epsilon50` under another name: equal by construction."""

    name = "e50-twin"


class Epsilon50Triplet(Epsilon50):
    """A second exact copy of :class:`Epsilon50`."""

    name = "e50-triplet"
