"""The two things the estimator does many thousand times: draw a world a seat cannot tell from the real
one, and play a deal to its end with the reference policy. Both come from the SDK's simulation API
(:mod:`pyramid_sdk.simulation`): a :class:`~pyramid_sdk.simulation.World` copies in one call and plays a
card without building an observation.

In Pyramid any card may be played at any time, so nothing a seat sees narrows down where its unseen cards
are: every deal of them to the other seats (and, with fewer than four players, to the set-aside pile) is
equally likely, and :func:`~pyramid_sdk.simulation.sample_world` draws one uniformly.

The reference policy is the heuristic sample bot's (:mod:`sample_bots.heuristic`): fast, deterministic and
a fair model of a competent table. Its play runs on worlds as the expert bot's ``heuristic_card`` (which
agrees with ``choose_card`` position for position); its declaration is ``choose_declaration``'s. A
stronger policy would change the figures, not their meaning.
"""

from __future__ import annotations

from dataclasses import replace

from pyramid_sdk.actions import Action
from pyramid_sdk.observation import Observation
from pyramid_sdk.simulation import World, play_out
from sample_bots.expert import heuristic_card
from sample_bots.heuristic import choose_declaration

POLICY = "heuristic"
"""The name the output gives the reference policy."""


def outcome(world: World, action: Action | None, declarer_view: Observation | None = None) -> int:
    """The declarer's points when a copy of ``world`` goes on with ``action``, then the reference policy
    for every seat to the end of the deal. ``action`` ``None`` lets the policy declare too, from
    ``declarer_view`` (the declarer's observation at the declaration; only its hand is taken from the
    world). ``world`` itself is left as it was.

    >>> import random
    >>> from pyramid_sdk import Match, Rules
    >>> from pyramid_sdk.simulation import sample_world
    >>> match = Match(Rules(players=4), seed=2)
    >>> view = match.observation(match.declarer)
    >>> world = sample_world(view, random.Random(1))
    >>> outcome(world, None, view) in range(-2, 11), world.declaration is None
    (True, True)
    """
    played = world.copy()
    if action is not None:
        played.apply(action)
    elif played.declaration is None:
        assert declarer_view is not None, "the policy declares from the declarer's view"
        played.declare(choose_declaration(replace(declarer_view, hand=played.hand(played.declarer))))
    play_out(played, heuristic_card)
    return played.points
