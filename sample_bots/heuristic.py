"""A rule-of-thumb bot: counts its likely tricks to declare, then plays to hit (or break) the number.

Its strategy is the SDK's heuristic (:mod:`pyramid_sdk.heuristic`, which explains it): the same rules
that ``referee analyze`` plays its simulations out with, and the Monte Carlo and expert bots too, so the
library keeps them and this bot is their one-screen wrapper. To try a variation, copy the functions from
there into your own bot and change them; editing the library's would change the analysis's figures.
"""

from __future__ import annotations

from pyramid_sdk.actions import Declare
from pyramid_sdk.bot import Bot
from pyramid_sdk.cards import Card
from pyramid_sdk.heuristic import choose_card, choose_declaration
from pyramid_sdk.observation import Observation


class HeuristicBot(Bot):
    """Declares from a count of likely tricks and plays to make (or break) the declared number."""

    name = "heuristic"
    version = "1"

    def declare(self, obs: Observation) -> Declare:
        return choose_declaration(obs)

    def play(self, obs: Observation) -> Card:
        return choose_card(obs)


if __name__ == "__main__":
    from pyramid_sdk.client import run

    run(HeuristicBot())
