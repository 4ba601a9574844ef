"""A random bot whose code stalls once, for ``SECONDS``, at the first decision of its first match, as a
bot stuck in a long computation or a debugger would; gRPC's own threads go on meanwhile, so the
transport's keepalive sees nothing wrong: ``python staller.py SECONDS``."""

import sys
import time

from pyramid_sdk.actions import Action
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class Staller(RandomBot):
    name = "staller"

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.stalled = False

    def act(self, obs: Observation) -> Action:
        if not self.stalled:
            self.stalled = True
            print(f"stalling for {self.seconds:g}s", flush=True)
            time.sleep(self.seconds)
            print("awake again", flush=True)
        return super().act(obs)


if __name__ == "__main__":
    run(Staller(float(sys.argv[1])))
