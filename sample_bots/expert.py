"""The expert sample bot: determinized search on the simulation API, within the clock it is given.

It is the Monte Carlo bot's search (sample the hidden cards, play every candidate out in the same worlds,
keep the best mean) on :mod:`pyramid_sdk.simulation` instead of full matches: a world copies in one call
and a card is played without building an observation, so the same time buys many more worlds. The
playouts use the heuristic bot's play on a :class:`World` (:func:`pyramid_sdk.heuristic.heuristic_card`,
also the analysis's playout policy): it reads only what the seat to act may know (its hand, the cards
played, the trick, the declaration, the tricks taken). A defender also reads the declaration: worlds where
the declarer's sampled hand is worth about what he declared count more (:func:`declarer_weight`), since
his trump and number say something of his cards. ``README.md`` in this folder has the measurements
behind each choice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Final

from pyramid_sdk.actions import Action
from pyramid_sdk.heuristic import estimate_tricks, heuristic_card
from pyramid_sdk.observation import Observation
from pyramid_sdk.simulation import World, play_out, sample_world

try:
    from sample_bots.montecarlo import MonteCarloBot
except ModuleNotFoundError:  # run as a script (python sample_bots/expert.py): its folder is on the path
    from montecarlo import MonteCarloBot  # type: ignore[import-not-found,no-redef]

INFERENCE_WIDTH: Final = 1.0
"""How far (in estimated tricks) a sampled declarer hand may be from his declaration before its world
counts e^-1/2 as much as one that matches: the width of a Gaussian weight."""


def declarer_weight(obs: Observation, world: World) -> float:
    """How much a world counts for a defender, by how well the declarer's sampled cards fit his number.

    The declarer's cards as dealt are his sampled hand plus what he has played; his estimated tricks with
    his trump (the heuristic's count) against his number gives a Gaussian weight. The declarer himself,
    and everybody before the declaration, weighs every world alike.
    """
    declaration = obs.declaration
    if declaration is None or obs.seat == obs.declarer:
        return 1.0
    played = [card for trick in (*obs.tricks, obs.current_trick) for card in trick.plays(obs.players)]
    dealt = [*world.hand(obs.declarer), *(card for seat, card in played if seat == obs.declarer)]
    gap = estimate_tricks(dealt, declaration.trump, obs.rules.trick_winner) - declaration.tricks
    return math.exp(-0.5 * (gap / INFERENCE_WIDTH) ** 2)


class ExpertBot(MonteCarloBot):
    """Determinized search: :class:`MonteCarloBot`'s budgeting and choice, on fast simulated worlds.

    ``budget`` caps the seconds per decision (default 0.2) and the bot thinks as long as the clock
    (``obs.clock``) allows within it; ``samples`` alone fixes the worlds per decision, so its choices are
    a function of its match seed (``info.seed``) and ``samples``: deterministic. Given both, whichever
    comes first stops it; the clock always does.
    """

    name = "expert"
    version = "1"

    def __init__(
        self, budget: float | None = None, samples: int | None = None, seed: int = 0, infer: bool = True
    ) -> None:
        super().__init__(budget=budget, samples=samples, seed=seed)
        self.infer = infer

    def _evaluate(self, obs: Observation, actions: Sequence[Action]) -> list[float]:
        """Weighted mean outcome of each action over as many worlds as the cap and the clock allow."""
        start = time.monotonic()
        stop_at = (obs.clock.received if obs.clock is not None else start) + self.time_for(obs)
        deadline = obs.clock.deadline if obs.clock is not None else math.inf
        sign = 1 if obs.is_declarer else -1
        totals = [0.0] * len(actions)
        weights = 0.0
        worlds = 0
        while True:
            world = sample_world(obs, self.rng)
            weight = declarer_weight(obs, world) if self.infer else 1.0
            for i, action in enumerate(actions):
                trial = world.copy()
                trial.apply(action)
                play_out(trial, heuristic_card)
                totals[i] += weight * trial.points
            weights += weight
            worlds += 1
            now = time.monotonic()
            per_world = (now - start) / worlds
            if (
                worlds == self.samples
                or (self.timed and now + per_world > stop_at)
                or now + per_world > deadline - 0.05
            ):
                return [sign * total / max(weights, 1e-12) for total in totals]


if __name__ == "__main__":
    import argparse

    from pyramid_sdk.client import run

    parser = argparse.ArgumentParser(description="The expert sample bot, connected to a referee.")
    parser.add_argument("--budget", type=float, default=None, help="at most this many seconds per decision")
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help="exactly this many worlds per decision (the clock permitting): deterministic for a match seed",
    )
    parser.add_argument("--no-infer", action="store_true", help="weigh every sampled world alike")
    arguments = parser.parse_args()
    if arguments.samples is not None and arguments.samples < 1:
        parser.error("--samples: at least 1")
    run(ExpertBot(budget=arguments.budget, samples=arguments.samples, infer=not arguments.no_infer))
