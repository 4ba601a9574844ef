"""The two things the estimator does many thousand times: draw a world a seat cannot tell from the real
one, and play a deal to its end with the reference policy. Both come from the SDK's simulation API
(:mod:`pyramid_sdk.simulation`): a :class:`~pyramid_sdk.simulation.World` copies in one call and plays a
card without building an observation.

In Pyramid any card may be played at any time, so nothing a seat sees narrows down where its unseen cards
are: every deal of them to the other seats (and, with fewer than four players, to the set-aside pile) is
equally likely, and :func:`~pyramid_sdk.simulation.sample_world` draws one uniformly.

The reference policy is the SDK's heuristic (:mod:`pyramid_sdk.heuristic`): fast, deterministic and a
fair model of a competent table. Its play runs on worlds as :func:`~pyramid_sdk.heuristic.heuristic_card`
(which agrees with :func:`~pyramid_sdk.heuristic.choose_card`, the heuristic bot's play, position for
position), its declaration as :func:`~pyramid_sdk.heuristic.heuristic_declaration`. It lives in the
library rather than among the sample bots so that editing an example bot cannot change these figures. A
stronger policy would change the figures, not their meaning.
"""

from __future__ import annotations

from pyramid_sdk.actions import Action
from pyramid_sdk.heuristic import heuristic_card, heuristic_declaration
from pyramid_sdk.simulation import World, play_out

POLICY = "heuristic"
"""The name the output gives the reference policy."""


def outcome(world: World, action: Action | None) -> int:
    """The declarer's points when a copy of ``world`` goes on with ``action``, then the reference policy
    for every seat to the end of the deal. ``action`` ``None`` lets the policy declare too, from the
    declarer's hand in the world. ``world`` itself is left as it was.

    >>> import random
    >>> from pyramid_sdk import Match, Rules
    >>> from pyramid_sdk.simulation import sample_world
    >>> match = Match(Rules(players=4), seed=2)
    >>> world = sample_world(match.observation(match.declarer), random.Random(1))
    >>> outcome(world, None) in range(-2, 11), world.declaration is None
    (True, True)
    """
    played = world.copy()
    if action is not None:
        played.apply(action)
    elif played.declaration is None:
        played.declare(heuristic_declaration(played))
    play_out(played, heuristic_card)
    return played.points
