#!/usr/bin/env python3
"""Analysis time: ``referee analyze``'s estimator on one whole match of heuristic players, in this process.

The match is played first by the heuristic sample bot's policy for every seat (the same policy the
estimator plays its worlds out with), then analysed at the default sample size (or SAMPLES). Compare in
the same run with the plain engine loop, as benchmarks/README.md does:

    python benchmarks/analysis.py [PLAYERS] [SAMPLES]
    python ../shared/bench/reference_engine.py 4 300

Prints one line: ``analysis players=4 samples=8 deals=64 decisions=... s_per_match=... ms_per_decision=...``
(a decision is a declaration or a card with more than one legal choice; forced last cards cost nothing).
"""

from __future__ import annotations

import sys
import time

from pyramid_sdk import Match, Rules
from referee.analysis.estimate import DEFAULT_SAMPLES, analyse
from sample_bots.heuristic import HeuristicBot


def heuristic_match(players: int, seed: int) -> Match:
    match = Match(Rules(players=players), seed)
    bot = HeuristicBot()
    match.play_out(lambda match, seat: bot.act(match.observation(seat)))
    return match


def main() -> None:
    players = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_SAMPLES
    record = heuristic_match(players, seed=1).record()
    start = time.perf_counter()
    analysis = analyse(record, samples)
    elapsed = time.perf_counter() - start
    decisions = sum(1 for d in analysis.decisions if len(d.actions) > 1)
    print(
        f"analysis players={players} samples={samples} deals={len(record.deals)} decisions={decisions} "
        f"s_per_match={elapsed:.1f} ms_per_decision={elapsed / decisions * 1e3:.1f}"
    )


if __name__ == "__main__":
    main()
