"""A random bot that drops its connection in the middle of its first match, once: ``python remote_drop.py
MARKER``. The first process to find no MARKER file makes it and dies at its third decision (its stream
breaks, as a lost network would break it); run it again and the next process plays on normally."""

import os
import sys
from pathlib import Path

from pyramid_sdk.actions import Action
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class DroppingBot(RandomBot):
    name = "dropping"

    def __init__(self, marker: Path) -> None:
        super().__init__()
        self.drop = not marker.exists()
        if self.drop:
            marker.write_text("dropped once\n")
        self.decisions = 0

    def act(self, obs: Observation) -> Action:
        self.decisions += 1
        if self.drop and self.decisions == 3:
            print("dropping the connection now", flush=True)
            os._exit(3)
        return super().act(obs)


if __name__ == "__main__":
    run(DroppingBot(Path(sys.argv[1])))
