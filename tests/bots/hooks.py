"""A random bot that prints what its hooks saw, one JSON line each (marked ``HOOK``), for its log: a
sandboxed bot can write nowhere else that outlives it."""

from __future__ import annotations

import json
import sys
import threading

from pyramid_sdk.bot import MatchInfo, MatchResult
from pyramid_sdk.client import run
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot


class Recorder(RandomBot):
    name = "hooks"

    def _write(self, **entry: object) -> None:
        print("HOOK", json.dumps(entry), flush=True)

    def match_start(self, info: MatchInfo) -> None:
        super().match_start(info)
        print(f"match {info.match_id}, seat {info.seat}, bot seed {info.seed}", file=sys.stderr)
        # The thread that plays is the only Python thread with the SDK's own stream; gRPC's asyncio API
        # adds its poller thread.
        self._write(
            hook="match_start",
            seat=info.seat,
            threads=threading.active_count(),
            match_id=info.match_id,
            seed=info.seed,
        )

    def deal_end(self, obs: Observation) -> None:
        self._write(
            hook="deal_end",
            deal=obs.deal_number,
            phase=str(obs.phase),
            tricks=[[card.code for card in trick.cards] for trick in obs.tricks],
            totals=list(obs.totals),
        )

    def match_end(self, result: MatchResult) -> None:
        self._write(hook="match_end", totals=list(result.totals))


if __name__ == "__main__":
    run(Recorder())
