"""A seeded random bot that writes debug lines: ``python debugger.py [MODE]``.

Every answer carries ``MARKER`` with the deal and the step, and the first one of each match a line made to
break a terminal or a page that shows it unescaped. Modes: ``quiet`` plays the same without a line (the
twin whose play must be the same); ``flood`` lifts the SDK's own cap and sends 1000 bytes with every
answer, and 2000 with its third, so that the referee refuses a text over its cap and then, once the
seat's match total is reached, every further one.
"""

from __future__ import annotations

import sys

import pyramid_sdk.dispatch
from pyramid_sdk.actions import Declare
from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.cards import Card
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot

MARKER = "dbg-7f3a9c-only-for-the-author"
"""In no export, report, page or API answer: the tests look for it everywhere."""
HOSTILE = '</script><b>x</b> & "quoted"\n\x1b[2Jsecond line'


class Debugger(RandomBot):
    name = "debugger"

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.answers = 0

    def match_start(self, info: MatchInfo) -> None:
        super().match_start(info)
        self.answers = 0

    def declare(self, obs: Observation) -> Declare:
        self._note(obs)
        return super().declare(obs)

    def play(self, obs: Observation) -> Card:
        self._note(obs)
        return super().play(obs)

    def _note(self, obs: Observation) -> None:
        self.answers += 1
        if self.mode == "quiet":
            return
        if self.mode == "flood":
            self.debug(MARKER + "x" * (2000 if self.answers == 3 else 1000 - len(MARKER)))
            return
        if self.answers == 1:
            self.debug(HOSTILE)
        self.debug(f"{MARKER} deal {obs.deal_number} answer {self.answers}")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "lines"
    if mode == "flood":
        pyramid_sdk.dispatch.MAX_DEBUG_BYTES = 1 << 20  # type: ignore[misc]  # sends what the SDK would not
    run(Debugger(mode))
