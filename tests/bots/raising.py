"""A Python bot whose play() goes wrong on every card: ``python raising.py raise`` raises
``ValueError("oops")``; ``python raising.py none`` returns None. The SDK must say which, at once."""

import sys

from pyramid_sdk import Bot, Card, Declare, Observation, Play
from pyramid_sdk.client import run


class Raising(Bot):
    name = "raising"

    def declare(self, obs: Observation) -> Declare:
        return obs.legal_declarations[0]

    def play(self, obs: Observation) -> Card | Play:
        if sys.argv[1] == "raise":
            raise ValueError("oops")
        return None  # type: ignore[return-value]  # the bug this bot has on purpose


if __name__ == "__main__":
    run(Raising())
