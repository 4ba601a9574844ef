"""A random bot that first prints the names of its environment variables, one JSON line marked ``ENV``,
for its log: the test compares them with the table in docs/PROTOCOL.md ("Shape")."""

from __future__ import annotations

import json
import os

from pyramid_sdk.client import run
from sample_bots.random_bot import RandomBot

if __name__ == "__main__":
    values = {name: os.environ[name] for name in ("PYRAMID_ADDRESS", "HOME", "TMPDIR", "PYTHONUNBUFFERED")}
    print("ENV", json.dumps({"names": sorted(os.environ), "values": values}), flush=True)
    run(RandomBot())
