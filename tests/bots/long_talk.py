"""A random bot that says ``TEXT`` repeated ``COUNT`` times with its first card of every deal:
``python long_talk.py TEXT COUNT [as-declarer]``. As a defender only, unless ``as-declarer``: then only
as the declarer (which the rules never allow)."""

from __future__ import annotations

import sys

from pyramid_sdk.actions import Play
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class LongTalk(RandomBot):
    name = "long-talk"

    def play(self, obs: Observation) -> Play:
        card = self.rng.choice(obs.legal_cards)
        speaks = obs.is_declarer == (sys.argv[3:] == ["as-declarer"])
        if speaks and not obs.tricks:  # its one card of the deal's first trick
            return Play(card, talk=sys.argv[1] * int(sys.argv[2]))
        return Play(card)


if __name__ == "__main__":
    run(LongTalk())
