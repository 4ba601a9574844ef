"""A random bot that calls itself whatever its arguments say: ``python named.py NAME``."""

import sys

from pyramid_sdk.client import run
from sample_bots.random_bot import RandomBot


class Named(RandomBot):
    name = sys.argv[1]
    version = sys.argv[1]


if __name__ == "__main__":
    run(Named())
