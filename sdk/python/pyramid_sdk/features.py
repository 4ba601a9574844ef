"""One seat's observation as arrays, and actions as numbers: what a learning agent sees and does.

The PettingZoo environment (:mod:`pyramid_sdk.pettingzoo_env`) and the adapter that enters a trained
policy in a league (:mod:`pyramid_sdk.pettingzoo_bot`) both build their arrays here, from the same
:class:`~pyramid_sdk.observation.Observation`, so a policy sees in a match exactly what it saw in training.
Needs NumPy (the ``pettingzoo`` extra).

Actions are 52 numbers: ``0-23`` play the card of that deck index (``Card.index``: ``9S`` is 0, ``AC`` is
23), ``24-51`` declare ``(n - 24) // 4`` tricks with suit ``(n - 24) % 4`` as trump (spades, hearts,
diamonds, clubs).

>>> from pyramid_sdk import Match, Rules
>>> obs = Match(Rules(players=2), seed=1).observation(1)
>>> array, mask = observation_array(obs), action_mask(obs)
>>> array.shape, array.dtype, mask.shape, mask.dtype
((306,), dtype('float32'), (52,), dtype('int8'))
>>> [str(action_of(n)) for n in (0, 23, 24, 51)]
['9S', 'AC', '0S', '6C']
>>> all(index_of(action_of(n)) == n for n in range(ACTIONS))
True
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from pyramid_sdk.actions import DECLARATIONS, PLAYS, Action, Declare, Play
from pyramid_sdk.cards import DECK
from pyramid_sdk.observation import Observation, Phase
from pyramid_sdk.rules import QUOTAS, TRICKS_PER_DEAL, TrickWinner

CARDS: Final = len(DECK)
ACTIONS: Final = CARDS + 7 * 4
"""24 plays and 28 declarations."""
SEATS: Final = 4
"""Rows per seat are always four, seen from the observing seat: row 0 is itself, row 1 its left-hand
neighbour (who plays after it) and so on; rows of seats a smaller table does not have stay zero."""
MAX_TOTAL: Final = 160.0

LAYOUT: Final[tuple[tuple[str, int], ...]] = (
    ("hand", CARDS),
    ("played_by_seat", SEATS * CARDS),
    ("current_trick_by_seat", SEATS * CARDS),
    ("unseen", CARDS),
    ("declarer", SEATS),
    ("leader", SEATS),
    ("to_act", SEATS),
    ("declared", 7),
    ("trump", 4),
    ("phase", 2),
    ("taken", SEATS),
    ("remaining", SEATS * 7),
    ("totals", SEATS),
    ("deal_progress", 1),
    ("players", 3),
    ("highest_rank", 1),
)
"""The observation array's parts in order, with their lengths. Cards are deck indexes; seats are
relative to the observer; ``taken`` is tricks / 6, ``remaining`` the declarations of each number still
owed / its quota, ``totals`` points / 160, ``deal_progress`` the deal number / the match's deals."""
SIZE: Final = sum(length for _, length in LAYOUT)
OFFSETS: Final[dict[str, int]] = {
    name: sum(length for _, length in LAYOUT[:i]) for i, (name, _) in enumerate(LAYOUT)
}

FloatArray = npt.NDArray[np.float32]
MaskArray = npt.NDArray[np.int8]


def observation_array(obs: Observation) -> FloatArray:
    """The seat's view as a vector of :data:`SIZE` numbers in [-1, 1], laid out as :data:`LAYOUT`."""
    players = obs.rules.players
    me = obs.seat
    out = np.zeros(SIZE, dtype=np.float32)

    def seat_row(seat: int) -> int:
        return (seat - me) % players

    for card in obs.hand:
        out[OFFSETS["hand"] + card.index] = 1
    played = OFFSETS["played_by_seat"]
    for trick in obs.tricks:
        for seat, card in trick.plays(players):
            out[played + seat_row(seat) * CARDS + card.index] = 1
    current = OFFSETS["current_trick_by_seat"]
    for seat, card in obs.current_trick.plays(players):
        out[played + seat_row(seat) * CARDS + card.index] = 1
        out[current + seat_row(seat) * CARDS + card.index] = 1
    for card in obs.unseen_cards:
        out[OFFSETS["unseen"] + card.index] = 1
    out[OFFSETS["declarer"] + seat_row(obs.declarer)] = 1
    out[OFFSETS["leader"] + seat_row(obs.current_trick.leader)] = 1
    if obs.to_act is not None:
        out[OFFSETS["to_act"] + seat_row(obs.to_act)] = 1
    if obs.declaration is not None:
        out[OFFSETS["declared"] + obs.declaration.tricks] = 1
        out[OFFSETS["trump"] + obs.declaration.trump] = 1
    if obs.phase in (Phase.DECLARE, Phase.PLAY):
        out[OFFSETS["phase"] + (obs.phase is Phase.PLAY)] = 1
    for seat in range(players):
        row = seat_row(seat)
        out[OFFSETS["taken"] + row] = obs.taken[seat] / TRICKS_PER_DEAL
        pyramid = obs.pyramids[seat]
        for number, quota in enumerate(QUOTAS):
            out[OFFSETS["remaining"] + row * 7 + number] = pyramid.remaining[number] / quota
        out[OFFSETS["totals"] + row] = pyramid.total / MAX_TOTAL
    out[OFFSETS["deal_progress"]] = obs.deal_number / obs.rules.deals
    out[OFFSETS["players"] + players - 2] = 1
    out[OFFSETS["highest_rank"]] = obs.rules.trick_winner is TrickWinner.HIGHEST_RANK
    return out


def action_mask(obs: Observation) -> MaskArray:
    """1 for each of the :data:`ACTIONS` numbers that is legal now, else 0 (all 0 when it is not this
    seat's turn)."""
    mask = np.zeros(ACTIONS, dtype=np.int8)
    for action in obs.legal_actions:
        mask[index_of(action)] = 1
    return mask


def index_of(action: Action) -> int:
    """The number of an action (talk is not part of it)."""
    if isinstance(action, Play):
        return action.card.index
    return CARDS + action.tricks * 4 + int(action.trump)


def action_of(index: int) -> Action:
    """The action a number stands for; ``ValueError`` outside ``0 .. ACTIONS - 1``."""
    number = int(index)
    if not 0 <= number < ACTIONS:
        raise ValueError(f"action {index!r}: must be a whole number from 0 to {ACTIONS - 1}")
    if number < CARDS:
        return PLAYS[number]
    declaration: Declare = DECLARATIONS[(number - CARDS) // 4][(number - CARDS) % 4]
    return declaration
