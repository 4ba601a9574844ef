"""A random bot that thinks ``sys.argv[1]`` seconds a decision (default 0.02) and, as a defender, says a
message made to break a page that shows it unescaped, once in the first trick of every odd deal. The
server's tests watch its matches live: slow enough to be seen in play, hostile in what it says."""

from __future__ import annotations

import sys
import time

from pyramid_sdk.actions import Declare, Play
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot

MESSAGE = '<script>alert(1)</script><img src=x onerror="alert(2)"> & <b>bold</b>'


class SlowTalker(RandomBot):
    name = "slow-talker"

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def declare(self, obs: Observation) -> Declare:
        time.sleep(self.delay)
        return super().declare(obs)

    def play(self, obs: Observation) -> Play:  # type: ignore[override]
        time.sleep(self.delay)
        card = self.rng.choice(obs.legal_cards)
        if not obs.is_declarer and obs.deal_number % 2 == 1 and not obs.tricks:
            return Play(card, talk=MESSAGE)
        return Play(card)


if __name__ == "__main__":
    from pyramid_sdk.client import run

    run(SlowTalker(float(sys.argv[1]) if len(sys.argv) > 1 else 0.02))
