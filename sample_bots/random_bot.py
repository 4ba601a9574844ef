"""The simplest legal bot: every declaration and card uniformly at random.

It is the baseline the other bots are measured against, and the smallest complete example of the
:class:`~pyramid_sdk.bot.Bot` API. Its generator is seeded from ``info.seed`` in :meth:`match_start`, so a
match replays exactly when the referee reuses the seed.
"""

from __future__ import annotations

import random

from pyramid_sdk.actions import Declare
from pyramid_sdk.bot import Bot, MatchInfo
from pyramid_sdk.cards import Card
from pyramid_sdk.observation import Observation


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    name = "random"
    version = "1"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def match_start(self, info: MatchInfo) -> None:
        """Reseed for every match: the same ``info.seed`` gives the same choices."""
        self.rng = random.Random(info.seed)

    def declare(self, obs: Observation) -> Declare:
        return self.rng.choice(obs.legal_declarations)

    def play(self, obs: Observation) -> Card:
        return self.rng.choice(obs.legal_cards)


if __name__ == "__main__":
    from pyramid_sdk.client import run

    run(RandomBot())
