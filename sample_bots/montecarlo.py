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

from pyramid_sdk.actions import PLAYS, Action, Declare, Play
from pyramid_sdk.bot import Bot, MatchInfo
from pyramid_sdk.cards import Card
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Observation, Phase

try:
    from sample_bots.heuristic import choose_card
except ModuleNotFoundError:  # run as a script (python sample_bots/montecarlo.py): its folder is on the path
    from heuristic import choose_card  # type: ignore[import-not-found,no-redef]


class MonteCarloBot(Bot):
    """Flat Monte Carlo over sampled deals, with the heuristic bot's play as the playout policy.

    ``budget`` is the thinking time per decision in seconds; the bot also stays under half of the
    match's ``per_action`` time control. ``samples``, when given, caps the worlds drawn per decision, so
    that with a generous budget the bot is deterministic for its seed (tests and measurements use this).
    """

    name = "montecarlo"
    version = "1"

    def __init__(self, budget: float = 0.2, samples: int | None = None, seed: int = 0) -> None:
        self.budget = budget
        self.samples = samples
        self.limit = budget
        self.rng = random.Random(seed)

    def match_start(self, info: MatchInfo) -> None:
        self.rng = random.Random(info.seed)
        self.limit = min(self.budget, info.time_control.per_action / 2)
        if self.samples is None and math.isinf(self.limit):
            raise ValueError("MonteCarloBot needs a finite budget or time control, or a samples cap")

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

        Every world tries every action, so a world is the unit of work: the loop stops when the next
        one would probably not fit in the time left (it always finishes at least one).
        """
        start = time.perf_counter()
        totals = [0.0] * len(actions)
        worlds = 0
        while True:
            hands = self._sample_hands(obs)
            for i, action in enumerate(actions):
                totals[i] += self._playout(obs, hands, action)
            worlds += 1
            elapsed = time.perf_counter() - start
            if worlds == self.samples or elapsed * (worlds + 1) / worlds > self.limit:
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
        points = play_out(match)
        return points if obs.is_declarer else -points


def play_out(match: Match) -> int:
    """Plays the current deal to its end with the heuristic for every seat; the declarer's points."""
    while match.phase is Phase.PLAY:
        seat = match.to_act
        assert seat is not None
        match.apply(Play(choose_card(match.observation(seat))), seat)
    return match.pyramids[match.declarer].entries[-1].points


if __name__ == "__main__":
    import argparse

    from pyramid_sdk.client import run

    parser = argparse.ArgumentParser(description="The Monte Carlo sample bot, connected to a referee.")
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per decision (default 0.2)")
    parser.add_argument("--samples", type=int, default=None, help="at most this many worlds per decision")
    arguments = parser.parse_args()
    run(MonteCarloBot(budget=arguments.budget, samples=arguments.samples))
