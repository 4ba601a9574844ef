#!/usr/bin/env python3
"""Protocol cost: one full 4-player match of four random Python bots, each its own process, over gRPC.

Prints ``us_per_decision`` (the match's wall time divided by its decisions; process start-up is not
counted). Compare in the same run with the raw round trip of one stream on this machine:

    python benchmarks/protocol.py [MATCHES]
    python ../shared/bench/grpc_pingpong.py 1600 1
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pyramid_sdk import Rules, stream, transport
from referee.match.bots import BotSpec
from referee.match.faults import FaultKind
from referee.match.playing import play_match
from referee.match.setup import open_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT


async def main(matches: int) -> None:
    specs = [
        BotSpec.parse(f"{sys.executable} sample_bots/random_bot.py", f"random{i}", ROOT) for i in range(4)
    ]
    async with open_table(specs) as seats:
        elapsed = decisions = 0.0
        for seed in range(matches):
            outcome = await play_match(seats, Rules(players=4), seed, match_id=f"bench-{seed}")
            timeouts = [f for f in outcome.faults if f.kind is FaultKind.TIMEOUT]
            assert not outcome.faults, (
                f"faults in a benchmark match: {outcome.faults[:3]} ({len(timeouts)} timeouts)"
            )
            elapsed += outcome.elapsed
            decisions += sum(len(times) for times in outcome.latencies)
    print(
        f"protocol players=4 matches={matches} decisions={decisions:.0f} "
        f"us_per_decision={elapsed / decisions * 1e6:.1f} match_s={elapsed / matches:.3f} "
        f"grpc_tuned={transport.tuned()} bot_stream={'thread' if stream.single_thread() else 'asyncio'}"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1))
