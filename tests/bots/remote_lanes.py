"""A random remote bot that plays several matches at once and writes down when each starts and ends:
``python remote_lanes.py EVENTS SECONDS``. Each decision takes SECONDS, so that matches overlap; each line
of EVENTS is ``start|end MATCH_ID MONOTONIC THREAD COPY``, COPY the id of the bot object that played it
(the SDK gives each stream a copy of its own). A match whose end reaches another match's copy writes
``mixed``. How many matches it asks for comes from ``PYRAMID_MAX_MATCHES``."""

import sys
import threading
import time
from pathlib import Path

from pyramid_sdk.actions import Action
from pyramid_sdk.bot import MatchInfo, MatchResult
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot

LOCK = threading.Lock()


class LaneBot(RandomBot):
    name = "lanes"

    def __init__(self, events: Path, think: float) -> None:
        super().__init__()
        self.events, self.think = events, think
        self.match_id: str | None = None

    def _write(self, what: str, match_id: str) -> None:
        thread = threading.current_thread().name.replace(" ", "_")
        line = f"{what} {match_id} {time.monotonic():.6f} {thread} {id(self)}\n"
        with LOCK, self.events.open("a") as out:
            out.write(line)

    def match_start(self, info: MatchInfo) -> None:
        super().match_start(info)
        self.match_id = info.match_id
        self._write("start", info.match_id)

    def act(self, obs: Observation) -> Action:
        time.sleep(self.think)
        return super().act(obs)

    def match_end(self, result: MatchResult) -> None:
        self._write("end" if result.match_id == self.match_id else "mixed", result.match_id)


if __name__ == "__main__":
    run(LaneBot(Path(sys.argv[1]), float(sys.argv[2])))
