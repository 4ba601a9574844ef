"""An in-process bot that trips the referee itself: a way to make a real match void, end to end.

An in-process bot is trusted, so the referee does not check the type of the card it plays; this one
plays an object that raises when the engine compares it with the cards of the hand. The error happens
on the referee's side of the table, which is exactly what a void match is for.
"""

from __future__ import annotations

from pyramid_sdk.actions import Play
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class _Exploding:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("a card that cannot be compared")

    __hash__ = object.__hash__


class Breaker(RandomBot):
    name = "breaker"

    def play(self, obs: Observation) -> Play:  # type: ignore[override]
        return Play(_Exploding())  # type: ignore[arg-type]
