"""Sets of cards as 24-bit masks (bit ``card.index``), for the engine and simulations.

A hand changes with every card played and is read as a sorted tuple at every decision; as a mask, playing
a card is one ``^`` and reading the hand back is three table look-ups and two tuple joins, where a
tuple rebuilt card by card cost the engine a fifth of its time. The tables hold every subset of each
third of the deck (3 × 256 tuples, built at import in well under a millisecond; halves of 4096 would
save one join but cost 25 ms at every start of a bot process).

>>> from pyramid_sdk.cards import Card
>>> hand = Card.parse_many("AC 9S KH")
>>> mask = mask_of(hand)
>>> cards_of(mask)
(Card.parse('9S'), Card.parse('KH'), Card.parse('AC'))
>>> [str(play) for play in plays_of(mask ^ BITS[Card.parse("KH").index])]
['9S', 'AC']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, TypeVar

from pyramid_sdk.actions import PLAYS, Play
from pyramid_sdk.cards import DECK, Card

_T = TypeVar("_T")
_CHUNK: Final = 8
_LOW: Final = (1 << _CHUNK) - 1

BITS: Final[tuple[int, ...]] = tuple(1 << index for index in range(len(DECK)))
"""``BITS[card.index]`` is the card's bit."""


def _subsets(items: Sequence[_T]) -> tuple[tuple[_T, ...], ...]:
    """Per mask of ``len(items)`` bits, its items in order (each from a smaller mask: cheap to build)."""
    table: list[tuple[_T, ...]] = [()]
    for mask in range(1, 1 << len(items)):
        low = (mask & -mask).bit_length() - 1
        table.append((items[low], *table[mask & (mask - 1)]))
    return tuple(table)


CARDS_0, CARDS_1, CARDS_2 = (_subsets(DECK[start : start + _CHUNK]) for start in (0, 8, 16))
"""Per byte of a mask (bits 0-7, 8-15, 16-23), its cards: ``cards_of`` written out, where a function
call would cost as much as the look-ups (the engine does so once per decision)."""
PLAYS_0, PLAYS_1, PLAYS_2 = (_subsets(PLAYS[start : start + _CHUNK]) for start in (0, 8, 16))
"""The same for the talk-free plays."""


def mask_of(cards: Iterable[Card]) -> int:
    """The mask of ``cards``."""
    mask = 0
    for card in cards:
        mask |= BITS[card.index]
    return mask


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of ``mask``, in deck order."""
    return CARDS_0[mask & _LOW] + CARDS_1[mask >> 8 & _LOW] + CARDS_2[mask >> 16]


def plays_of(mask: int) -> tuple[Play, ...]:
    """The talk-free plays of the cards of ``mask`` (the engine's interned ones), in deck order."""
    return PLAYS_0[mask & _LOW] + PLAYS_1[mask >> 8 & _LOW] + PLAYS_2[mask >> 16]
