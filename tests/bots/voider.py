"""An in-process bot that trips the referee itself: a way to make a real match void, end to end.

Nothing a bot answers can void a match: the engine checks the types of every action as well as the
rules, and a bad action is the bot's fault. But an in-process bot runs inside the referee, with all its
power. This one plants a bug in the engine, which strikes the next time the engine applies an action: on the
referee's side of the table, right after the bot returned a legal card. That is exactly what a void
match is for.
"""

from __future__ import annotations

from typing import Any

from pyramid_sdk.cards import Card
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot

MESSAGE = "a referee bug planted by a test bot"


class Breaker(RandomBot):
    name = "breaker"

    def play(self, obs: Observation) -> Card:
        original = Match.apply

        def broken(match: Match, *args: Any, **kwargs: Any) -> None:
            setattr(Match, "apply", original)  # noqa: B010 (one failure per card it plays)
            raise RuntimeError(MESSAGE)

        setattr(Match, "apply", broken)  # noqa: B010
        return super().play(obs)
