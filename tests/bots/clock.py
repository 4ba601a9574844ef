"""A random bot that prints the clock of every decision, one JSON line each marked ``CLOCK``, for its log
(a sandboxed bot can write nowhere else that outlives it).

Its first two cards take longer than a 250 ms per-action limit, so the referee draws on its bank and the
clocks that follow must show the smaller bank.
"""

from __future__ import annotations

import json
import time

from pyramid_sdk.actions import Declare
from pyramid_sdk.cards import Card
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class ClockRecorder(RandomBot):
    name = "clock"

    def __init__(self) -> None:
        super().__init__()
        self.plays = 0

    def _write(self, obs: Observation) -> None:
        clock = obs.clock
        assert clock is not None
        entry = {
            "per_action_ms": round(clock.per_action * 1000),
            "bank_ms": round(clock.bank * 1000),
            "time_left_ms": round(clock.time_left * 1000),
            "left_ms": (clock.deadline - time.monotonic()) * 1000,
        }
        print("CLOCK", json.dumps(entry), flush=True)

    def declare(self, obs: Observation) -> Declare:
        self._write(obs)
        return super().declare(obs)

    def play(self, obs: Observation) -> Card:
        self._write(obs)
        self.plays += 1
        if self.plays <= 2:
            time.sleep(0.35)
        return super().play(obs)


if __name__ == "__main__":
    run(ClockRecorder())
