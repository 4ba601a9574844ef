#!/usr/bin/env python3
"""Engine throughput: full matches between in-process random agents through the public engine API.

Every decision builds the acting seat's observation (with its legal actions), exactly what the referee
will send a bot, then applies a random legal action with all the engine's checks. Compare in the same run
with the plain loop that checks nothing:

    python benchmarks/engine.py [PLAYERS] [MATCHES]
    python ../shared/bench/reference_engine.py 4 300

Prints one line: ``engine players=4 matches=... matches_per_s=... decisions_per_s=... us_per_decision=...``.
"""

from __future__ import annotations

import random
import sys
import time

from pyramid_sdk import Action, Match, Rules
from pyramid_sdk.rules import TRICKS_PER_DEAL


def play_match(rules: Rules, seed: int, rng: random.Random) -> int:
    """One match played out; its decisions (a declaration and six tricks of cards per deal)."""

    def choose(match: Match, seat: int) -> Action:
        legal = match.observation(seat).legal_actions
        return legal[rng.randrange(len(legal))]

    Match(rules, seed).play_out(choose)
    return rules.deals * (1 + TRICKS_PER_DEAL * rules.players)


def main() -> None:
    players = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    matches = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rules = Rules(players=players)
    rng = random.Random(1)
    start = time.perf_counter()
    decisions = sum(play_match(rules, seed, rng) for seed in range(matches))
    elapsed = time.perf_counter() - start
    print(
        f"engine players={players} matches={matches} matches_per_s={matches / elapsed:.1f} "
        f"decisions_per_s={decisions / elapsed:.0f} us_per_decision={elapsed / decisions * 1e6:.2f}"
    )


if __name__ == "__main__":
    main()
