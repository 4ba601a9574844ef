"""The two things the estimator does many thousand times: draw a world a seat cannot tell from the real
one, and play a deal to its end with the reference policy.

In Pyramid any card may be played at any time, so nothing a seat sees narrows down where its unseen cards
are: every deal of the unseen cards to the other seats (and, with fewer than four players, to the
set-aside pile) is equally likely, and a uniform shuffle samples exactly that distribution.

The reference policy is the heuristic sample bot's (:mod:`sample_bots.heuristic`): fast, deterministic and
a fair model of a competent table. A stronger policy would change the figures, not their meaning.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pyramid_sdk.actions import PLAYS, Action, Play
from pyramid_sdk.cards import Card
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Observation, Phase
from sample_bots.heuristic import choose_card, choose_declaration

POLICY = "heuristic"
"""The name the output gives the reference policy."""


def sample_hands(obs: Observation, rng: random.Random) -> list[tuple[Card, ...]]:
    """One world consistent with ``obs``: the seat's own hand as it is, every other seat as many of the
    unseen cards as it still holds.

    >>> from pyramid_sdk import Match, Rules
    >>> obs = Match(Rules(players=3), seed=1).observation(0)
    >>> hands = sample_hands(obs, random.Random(2))
    >>> hands[0] == obs.hand, [len(hand) for hand in hands], len({c for h in hands for c in h})
    (True, [6, 6, 6], 18)
    """
    unseen = list(obs.unseen_cards)
    rng.shuffle(unseen)
    hands: list[tuple[Card, ...]] = []
    for seat in range(obs.players):
        if seat == obs.seat:
            hands.append(obs.hand)
        else:
            size = obs.hand_size(seat)
            hands.append(tuple(unseen[:size]))
            del unseen[:size]
    return hands


def outcome(obs: Observation, hands: Sequence[Sequence[Card]], action: Action | None) -> int:
    """The declarer's points when the world ``hands`` goes on from ``obs`` with ``action`` (``None``: the
    reference policy's own choice), then the reference policy for every seat to the end of the deal."""
    match = Match.from_observation(obs, hands)
    if action is not None:
        match.apply(action)
    if match.phase is Phase.DECLARE:
        seat = match.to_act
        assert seat is not None
        match.apply(choose_declaration(match.observation(seat)))
    while match.phase is Phase.PLAY:
        seat = match.to_act
        assert seat is not None
        hand = match.hand(seat)
        # The last trick plays itself: asking the policy about a single card costs a sixth of a playout.
        match.apply(PLAYS[hand[0].index] if len(hand) == 1 else Play(choose_card(match.observation(seat))))
    return match.pyramids[match.declarer].entries[-1].points
