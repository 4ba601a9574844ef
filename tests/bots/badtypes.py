"""In-process bots whose actions have the wrong types: faults of theirs, never a void match."""

from __future__ import annotations

from typing import Any

from pyramid_sdk.actions import Declare
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class FloatDeclarer(RandomBot):
    """Declares a legal number of tricks as a float: ``Declare(3.0, trump)``."""

    name = "floaty"

    def declare(self, obs: Observation) -> Declare:
        choice = super().declare(obs)
        return Declare(float(choice.tricks), choice.trump)  # type: ignore[arg-type]


class CodePlayer(RandomBot):
    """Plays a card's code, a string, instead of the card."""

    name = "codes"

    def play(self, obs: Observation) -> Any:
        return super().play(obs).code
