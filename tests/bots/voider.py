"""An in-process bot that trips the referee itself: a way to make a real match void, end to end.

Nothing a bot answers can void a match: the engine checks the types of every action as well as the
rules, and a bad action is the bot's fault. But an in-process bot runs inside the referee, with all its
power. This one plants a bug in the engine, which strikes the next time the engine moves a card: on the
referee's side of the table, right after the bot returned a legal card. That is exactly what a void
match is for.
"""

from __future__ import annotations

from typing import Any

from pyramid_sdk import engine
from pyramid_sdk.cards import Card
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot

MESSAGE = "a referee bug planted by a test bot"


class Breaker(RandomBot):
    name = "breaker"

    def play(self, obs: Observation) -> Card:
        # The card the referee applies next either joins the trick (engine.new_trick) or ends it
        # (Match._finish_trick): both are planted, so the bug strikes inside Match.apply either way.
        planted = {"new_trick": engine.new_trick}, {"_finish_trick": Match._finish_trick}

        def broken(*args: Any) -> None:
            for name, original in planted[0].items():  # one failure per card it plays
                setattr(engine, name, original)
            for name, original in planted[1].items():
                setattr(Match, name, original)
            raise RuntimeError(MESSAGE)

        setattr(engine, "new_trick", broken)  # noqa: B010
        setattr(Match, "_finish_trick", broken)  # noqa: B010
        return super().play(obs)
