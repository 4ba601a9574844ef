"""How a deal's cards are dealt: a pure function of the match seed and the deal number.

Every deal's hands and the first dealer come from :func:`pyramid_sdk.seeds.derive_seed`, so two matches
with the same seed deal the same hands to the same seats, on every machine.
"""

from __future__ import annotations

import random
from operator import itemgetter
from typing import Final

from pyramid_sdk.cards import DECK, Card
from pyramid_sdk.seeds import derive_seed

CARDS_PER_HAND: Final = 6


def first_dealer(seed: int, players: int) -> int:
    """The seat that deals first, drawn by lot from the match seed."""
    return derive_seed(seed, "first-dealer") % players


def deal_hands(seed: int, number: int, players: int) -> tuple[tuple[Card, ...], ...]:
    """The hands of deal ``number`` (from 1), one per seat in deck order; the rest of the deck is set aside.

    Seat ``s`` gets cards ``6s .. 6s+5`` of the shuffled deck, whoever deals, so a given seed gives a seat
    the same cards whatever the number of players or the entrants in the seats.

    The shuffle is ``random.Random(derive_seed(seed, "deal", number)).shuffle`` of the deck, written out
    over deck positions (the same draws, so the same deals) because a deal is made every 25 decisions
    and the library call with its key-sorted hands cost a tenth of the engine's time.

    >>> order = list(DECK); random.Random(derive_seed(7, "deal", 3)).shuffle(order)
    >>> deal_hands(7, 3, 4) == tuple(tuple(sorted(order[6 * s : 6 * s + 6])) for s in range(4))
    True
    """
    order = list(range(len(DECK)))
    getrandbits = random.Random(derive_seed(seed, "deal", number)).getrandbits
    for i, bits in _SHUFFLE_STEPS:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        order[i], order[j] = order[j], order[i]
    return tuple(
        [
            itemgetter(*sorted(order[seat * CARDS_PER_HAND : (seat + 1) * CARDS_PER_HAND]))(DECK)
            for seat in range(players)
        ]
    )


_SHUFFLE_STEPS: Final = tuple((i, (i + 1).bit_length()) for i in range(len(DECK) - 1, 0, -1))
"""``random.shuffle``'s steps for the deck: position ``i`` swaps with a uniform draw from ``0..i``, drawn
as ``bits`` random bits and redrawn while above ``i`` (``Random._randbelow``)."""
