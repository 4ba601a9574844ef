#!/usr/bin/env python3
"""Simulation API throughput: deals played out on sampled worlds (pyramid_sdk.simulation), no observations.

From the first observation of each of N 4-player match seeds, it samples worlds (as a search bot does) and
plays each deal to its end with random legal actions, a declaration then 24 cards: the same work as the
plain loop's deals, with every card checked against the hand. A second figure plays out with the expert
bot's heuristic policy. Compare in the same run with the plain loop:

    python benchmarks/simulation.py [WORLDS]
    python ../shared/bench/reference_engine.py 4 300

Prints one line: ``simulation players=4 worlds=... decisions_per_s=... heuristic_decisions_per_s=...``.
"""

from __future__ import annotations

import random
import sys
import time

from pyramid_sdk import Match, Rules
from pyramid_sdk.cardsets import cards_of
from pyramid_sdk.heuristic import heuristic_card
from pyramid_sdk.simulation import World, play_out, sample_world


def random_play_out(world: World, rng: random.Random) -> int:
    """Plays the deal to its end with random legal actions; the decisions made."""
    declarations = world.legal_declarations()
    world.declare(declarations[rng.randrange(len(declarations))])
    decisions = 1
    while world.to_act is not None:
        hand = cards_of(world.hands[world.to_act])
        world.play(hand[rng.randrange(len(hand))])
        decisions += 1
    return decisions


def main() -> None:
    worlds = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = random.Random(1)
    rules = Rules(players=4)
    observations = []
    for seed in range(100):
        match = Match(rules, seed)
        observations.append(match.observation(match.declarer))
    start = time.perf_counter()
    decisions = sum(random_play_out(sample_world(observations[i % 100], rng), rng) for i in range(worlds))
    random_rate = decisions / (time.perf_counter() - start)
    start = time.perf_counter()
    for i in range(worlds // 4):
        world = sample_world(observations[i % 100], rng)
        world.declare(world.legal_declarations()[0])
        play_out(world, heuristic_card)
    heuristic_rate = worlds // 4 * 25 / (time.perf_counter() - start)
    print(
        f"simulation players=4 worlds={worlds} decisions_per_s={random_rate:.0f} "
        f"heuristic_decisions_per_s={heuristic_rate:.0f}"
    )


if __name__ == "__main__":
    main()
