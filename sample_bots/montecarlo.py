"""A simulating bot: guesses the hidden cards many times, plays each guess out, keeps what worked best.

Pyramid hides only where the unseen cards are, and nothing in the rules narrows that down (there is no
duty to follow suit, so a discard reveals no void). So a world is drawn by shuffling
``obs.unseen_cards`` and dealing each other seat as many cards as it holds; with fewer than four players
the cards left over are the set-aside ones. For every world, every candidate action is played to the end
of the deal by the fast heuristic policy, on the same world (common random numbers: the comparison
between actions is then far less noisy than the values themselves). The action with the best mean
wins: for the declarer his deal score, for a defender minus the declarer's score.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Final

from pyramid_sdk.actions import PLAYS, Action, Declare, Play
from pyramid_sdk.bot import Bot, MatchInfo
from pyramid_sdk.cards import Card
from pyramid_sdk.engine import Match
from pyramid_sdk.heuristic import choose_card
from pyramid_sdk.observation import Observation, Phase

DEFAULT_BUDGET: Final = 0.2
"""Seconds per decision at most, unless told otherwise (and unless only a sample count is given)."""
MARGIN: Final = 0.2
"""Share of the per-action limit kept back for the wire, the referee and a slow world."""
MIN_MARGIN: Final = 0.01
"""Seconds kept back at least, however short the per-action limit."""


def decisions_left(obs: Observation) -> int:
    """How many more decisions this seat makes in the match, this one included: the cards it still
    holds, six for each deal to come, and its open declarations."""
    deals_to_come = obs.rules.deals - obs.deal_number
    return obs.hand_size(obs.seat) + 6 * deals_to_come + sum(obs.my_pyramid.remaining)


class MonteCarloBot(Bot):
    """Flat Monte Carlo over sampled deals, with the heuristic bot's play as the playout policy.

    Two ways to bound its thinking:

    - by time: ``budget`` caps the seconds per decision (default 0.2); within it, the bot thinks as long
      as the decision's clock allows (:meth:`time_for`). Its choices then depend on the machine's speed.
    - by count: ``samples`` alone draws exactly that many worlds per decision, whatever the clock says,
      so the bot's choices are a function of its match seed: a league replays exactly (the example
      league plays it this way). Give both and whichever comes first stops it.
    """

    name = "montecarlo"
    version = "3"

    def __init__(self, budget: float | None = None, samples: int | None = None, seed: int = 0) -> None:
        if samples is not None and samples < 1:
            raise ValueError(f"samples: at least 1 world per decision, got {samples}")
        self.samples = samples
        self.timed = budget is not None or samples is None
        """Whether time stops the thinking; not with a sample count alone."""
        self.budget = DEFAULT_BUDGET if budget is None else budget
        self.rng = random.Random(seed)

    def match_start(self, info: MatchInfo) -> None:
        self.rng = random.Random(info.seed)
        clock_limit = info.time_control.per_action + info.time_control.bank
        if self.samples is None and math.isinf(min(self.budget, clock_limit)):
            raise ValueError("MonteCarloBot needs a finite budget or time control, or a samples cap")

    def time_for(self, obs: Observation) -> float:
        """Seconds to think about this decision, counted from when the request arrived.

        The per-action limit, less a margin for the wire (the referee's clock counts it), plus an even
        share of the bank over the decisions left in the match, so the bank is never spent early; at
        most ``budget``. Without a clock (a simulation, a test) it is ``budget``.

        >>> from pyramid_sdk import Clock, Match, Rules
        >>> obs = Match(Rules(players=2), seed=1).observation(1)
        >>> obs.clock = Clock(per_action=1.0, bank=20.8, received=0.0)
        >>> decisions_left(obs), round(MonteCarloBot(budget=5).time_for(obs), 3)
        (208, 0.9)
        >>> MonteCarloBot(budget=0.2).time_for(obs)
        0.2
        """
        clock = obs.clock
        if clock is None:
            return self.budget
        margin = max(MIN_MARGIN, MARGIN * clock.per_action)
        share = clock.bank / max(1, decisions_left(obs))
        return max(0.0, min(self.budget, clock.per_action - margin + share))

    def declare(self, obs: Observation) -> Declare:
        # Every legal declaration (up to 7 numbers x 4 trumps) is played out in the same worlds. Unlike
        # the heuristic, no SLOT_COST is added: measured, it did not help here (see README.md).
        declarations = obs.legal_declarations
        means = self._evaluate(obs, declarations)
        return declarations[means.index(max(means))]

    def play(self, obs: Observation) -> Card:
        cards = obs.legal_cards
        if len(cards) == 1:
            return cards[0]
        means = self._evaluate(obs, [PLAYS[card.index] for card in cards])
        return cards[means.index(max(means))]

    def _evaluate(self, obs: Observation, actions: Sequence[Action]) -> list[float]:
        """Mean outcome of each action over as many sampled worlds as the cap and the time allow.

        Every world tries every action, so a world is the unit of work: the loop stops after
        ``samples`` worlds or, when timed, when the next one would probably end after the decision's
        time (:meth:`time_for`, from when the request arrived); it always finishes at least one.
        """
        start = time.monotonic()
        stop_at = (obs.clock.received if obs.clock is not None else start) + self.time_for(obs)
        totals = [0.0] * len(actions)
        worlds = 0
        while True:
            hands = self._sample_hands(obs)
            for i, action in enumerate(actions):
                totals[i] += self._playout(obs, hands, action)
            worlds += 1
            now = time.monotonic()
            if worlds == self.samples or (self.timed and now + (now - start) / worlds > stop_at):
                return [total / worlds for total in totals]

    def _sample_hands(self, obs: Observation) -> list[Sequence[Card]]:
        """One guess at every hand, consistent with what ``obs`` shows: the seat's own hand as it is,
        every other seat as many unseen cards as it still holds."""
        unseen = list(obs.unseen_cards)
        self.rng.shuffle(unseen)
        hands: list[Sequence[Card]] = []
        for seat in range(obs.players):
            if seat == obs.seat:
                hands.append(obs.hand)
            else:
                size = obs.hand_size(seat)
                hands.append(unseen[:size])
                del unseen[:size]
        return hands

    def _playout(self, obs: Observation, hands: Sequence[Sequence[Card]], action: Action) -> int:
        """Our gain from the deal when we take ``action`` in the world ``hands``."""
        match = Match.from_observation(obs, hands)
        match.apply(action, obs.seat)
        points = heuristic_playout(match)
        return points if obs.is_declarer else -points


def heuristic_playout(match: Match) -> int:
    """Plays the current deal, its declaration made, to its end with the heuristic for every seat; the
    declarer's points."""
    match.play_out(lambda match, seat: Play(choose_card(match.observation(seat))), until=Phase.DEAL_OVER)
    return match.pyramids[match.declarer].entries[-1].points


if __name__ == "__main__":
    import argparse

    from pyramid_sdk.client import run

    parser = argparse.ArgumentParser(description="The Monte Carlo sample bot, connected to a referee.")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help=f"at most this many seconds per decision (default {DEFAULT_BUDGET}, none with --samples alone)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help="exactly this many worlds per decision, whatever the clock: the bot's choices then depend on "
        "its match seed alone, so a league replays exactly (with --budget, whichever comes first)",
    )
    arguments = parser.parse_args()
    if arguments.samples is not None and arguments.samples < 1:
        parser.error("--samples: at least 1")
    run(MonteCarloBot(budget=arguments.budget, samples=arguments.samples))
