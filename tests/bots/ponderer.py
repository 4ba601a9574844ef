"""A random bot that thinks for ``SECONDS`` on the first decision of every match, without reading its
socket meanwhile (as a Python bot's SDK does not while the bot thinks): ``python ponderer.py SECONDS``."""

import sys
import time

from pyramid_sdk.actions import Action
from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class Ponderer(RandomBot):
    name = "ponderer"

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.first = True

    def match_start(self, info: MatchInfo) -> None:
        super().match_start(info)
        self.first = True

    def act(self, obs: Observation) -> Action:
        if self.first:
            self.first = False
            print(f"thinking for {self.seconds:g}s", flush=True)
            time.sleep(self.seconds)
        return super().act(obs)


if __name__ == "__main__":
    run(Ponderer(float(sys.argv[1])))
