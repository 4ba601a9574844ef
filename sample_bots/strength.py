"""Measures the sample bots against each other in-process, with duplicate seating so that luck cancels.

Every match seed is played once per cyclic rotation of a table's four bots over the seats, so each bot
holds each seat's cards once. A bot's points are averaged per seed (over the rotations and its seats),
and the 95% interval is taken over the seeds, the independent unit of the experiment.

    .venv/bin/python -m sample_bots.strength --seeds 8 --samples 4
    .venv/bin/python -m sample_bots.strength --slot-costs   # re-measure pyramid_sdk.heuristic.SLOT_COST
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat

from pyramid_sdk.actions import Declare
from pyramid_sdk.bot import Bot, MatchInfo, TimeControl
from pyramid_sdk.cards import Suit
from pyramid_sdk.engine import Match
from pyramid_sdk.rules import Rules, TrickWinner
from pyramid_sdk.seeds import derive_seed
from sample_bots.heuristic import HeuristicBot
from sample_bots.montecarlo import MonteCarloBot, heuristic_playout
from sample_bots.random_bot import RandomBot

TABLES = (
    ("random", "random", "heuristic", "heuristic"),
    ("heuristic", "heuristic", "montecarlo", "montecarlo"),
)
UNLIMITED = TimeControl(per_action=math.inf, bank=math.inf)
"""No clock in a measurement: the ``samples`` cap alone bounds the Monte Carlo bot, so the results do not
depend on the machine and a run replays exactly."""


def make_bot(name: str, samples: int) -> Bot:
    factories: dict[str, Callable[[], Bot]] = {
        "random": RandomBot,
        "heuristic": HeuristicBot,
        "montecarlo": lambda: MonteCarloBot(budget=math.inf, samples=samples),
    }
    return factories[name]()


def play_match(lineup: tuple[str, ...], seed: int, rules: Rules, samples: int) -> tuple[int, ...]:
    """One match with the bots of ``lineup`` in seats 0-3, each seeded from the match seed and its seat.
    Returns the totals per seat."""
    bots = [make_bot(name, samples) for name in lineup]
    match = Match(rules, seed, seats=lineup)
    for seat, bot in enumerate(bots):
        bot.match_start(MatchInfo(str(seed), seat, lineup, rules, UNLIMITED, derive_seed(seed, "bot", seat)))
    match.play_out(lambda match, seat: bots[seat].act(match.observation(seat)))
    return match.totals


def interval(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval, Student's t by its Cornish-Fisher expansion."""
    df = len(values) - 1
    t = 1.96 + 2.37 / df + 2.82 / df**2
    return statistics.fmean(values), t * statistics.stdev(values) / math.sqrt(len(values))


def measure(table: tuple[str, ...], seeds: int, rules: Rules, samples: int, workers: int) -> list[str]:
    """Plays every seed in every rotation of ``table``; the table's rows of the Markdown report."""
    jobs = [(tuple(table[(s + r) % 4] for s in range(4)), seed) for seed in range(seeds) for r in range(4)]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(play_match, *zip(*jobs, strict=True), repeat(rules), repeat(samples)))
    points: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    ranks: dict[str, list[int]] = defaultdict(list)
    for (lineup, seed), totals in zip(jobs, results, strict=True):
        for name, total in zip(lineup, totals, strict=True):
            points[name][seed].append(total)
            ranks[name].append(1 + sum(other > total for other in totals))  # ties share the better rank
    rows = []
    for name in dict.fromkeys(table):
        mean, half = interval([statistics.fmean(per_seed) for per_seed in points[name].values()])
        wins = ranks[name].count(1)
        rows.append(
            f"| {', '.join(table)} | {name} | {mean:.1f} ± {half:.1f} | "
            f"{statistics.fmean(ranks[name]):.2f} | {wins} of {len(ranks[name])} |"
        )
    return rows


def slot_costs(rules: Rules, deals: int) -> tuple[float, ...]:
    """For each number, 10 minus its mean score when declared with the best trump in hindsight on the
    first deal of seeds ``0..deals-1``, every seat playing the heuristic (see
    ``pyramid_sdk.heuristic.SLOT_COST``)."""
    totals = [0] * 7
    for seed in range(deals):
        deal = Match(rules, seed)
        obs = deal.observation(deal.declarer)
        hands = [deal.hand(seat) for seat in range(rules.players)]
        for tricks in range(7):
            scores = []
            for trump in Suit:
                match = Match.from_observation(obs, hands)
                match.apply(Declare(tricks, trump))
                scores.append(heuristic_playout(match))
            totals[tricks] += max(scores)
    return tuple(round(10 - total / deals, 1) for total in totals)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8, help="match seeds per table, each played 4 times")
    parser.add_argument("--samples", type=int, default=4, help="worlds per Monte Carlo decision")
    parser.add_argument("--workers", type=int, default=2, help="processes playing matches")
    parser.add_argument("--rule", choices=[rule.value for rule in TrickWinner], default=TrickWinner.LED_SUIT)
    parser.add_argument(
        "--slot-costs", action="store_true", help="measure pyramid_sdk.heuristic.SLOT_COST instead"
    )
    args = parser.parse_args()
    rules = Rules(players=4, trick_winner=args.rule)
    if args.slot_costs:
        print(f"{rules.trick_winner}: {slot_costs(rules, 300)}")
        return
    print(
        f"4 players, trick_winner={rules.trick_winner}, seeds 0-{args.seeds - 1} x 4 rotations, "
        f"montecarlo samples={args.samples}\n"
    )
    print("| table | bot | points per match (95%) | mean rank | wins (seat-matches) |")
    print("|---|---|---|---|---|")
    for table in TABLES:
        start = time.perf_counter()
        for row in measure(table, args.seeds, rules, args.samples, args.workers):
            print(row, flush=True)
        print(f"<!-- {', '.join(table)}: {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
