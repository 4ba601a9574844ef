"""A random bot that calls itself whatever its arguments say: ``python named.py NAME``."""

import sys

from pyramid_sdk.client import run
from sample_bots.random_bot import RandomBot


def named(name: str) -> RandomBot:
    """The bot's name is read here, when it runs, not when pytest's doctest collection imports this file."""
    bot = RandomBot()
    bot.name = name
    bot.version = name
    return bot


if __name__ == "__main__":
    run(named(sys.argv[1]))
