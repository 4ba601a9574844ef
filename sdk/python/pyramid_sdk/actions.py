"""What a seat can do: declare (tricks and trump) or play a card, and the errors for doing it wrong.

Actions are small immutable values that parse and print, so logs, golden files and the CLI share one
notation: a declaration is its number and trump letter (``3H``: three tricks, hearts trump), a play is
the card's code (``QS``). The two never collide, since no card has a rank from 0 to 6.

Text that is no action at all (:class:`InvalidActionError`) and an action the rules forbid now
(:class:`IllegalActionError`) are different errors, as python-chess keeps ``InvalidMoveError`` apart from
``IllegalMoveError``: the first is a typo to fix, the second a move to rethink.

>>> parse_action("3H")
Declare(tricks=3, trump=<Suit.HEARTS: 1>)
>>> str(parse_action("qs"))
'QS'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pyramid_sdk.cards import DECK, Card, CardError, Suit


class InvalidActionError(ValueError):
    """Text that is not an action in our notation (``7S``, ``XY``): it says nothing about the rules.

    >>> parse_action("7S")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pyramid_sdk.actions.InvalidActionError: unknown action '7S': expected a declaration like '3H' or ...
    """


class IllegalActionError(ValueError):
    """An action the rules do not allow in the current state. The state is left unchanged."""


class MalformedActionError(IllegalActionError):
    """An action whose fields have the wrong types: a float, bool or string for the number of tricks, a
    number for the trump, a string for the card. The rules were not consulted; the state is unchanged.

    >>> from pyramid_sdk import Match
    >>> Match().apply(Declare(3.0, Suit.CLUBS))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pyramid_sdk.actions.MalformedActionError: seat ...: a declaration is a whole number of tricks (an int) ...
    """


class NotYourTurnError(IllegalActionError):
    """A seat acted while another seat (or no seat) was to act."""


class IllegalTalkError(IllegalActionError):
    """A table-talk message the rules do not allow: wrong seat or phase, too long, too many, or talk off."""


@dataclass(frozen=True, slots=True)
class Declare:
    """The declarer's announcement: how many tricks he will take, and the trump suit."""

    tricks: int
    trump: Suit

    def __str__(self) -> str:
        return f"{self.tricks}{self.trump.code}"

    @property
    def human(self) -> str:
        return f"{self.tricks} {self.trump.symbol}"


@dataclass(frozen=True, slots=True)
class Play:
    """Playing a card, optionally with a table-talk message said before it (defenders only)."""

    card: Card
    talk: str | None = None

    def __str__(self) -> str:
        return self.card.code

    @property
    def human(self) -> str:
        return self.card.human


Action = Declare | Play

DECLARATIONS: Final[tuple[tuple[Declare, ...], ...]] = tuple(
    tuple(Declare(tricks, suit) for suit in Suit) for tricks in range(7)
)
"""``DECLARATIONS[n]`` are the four declarations of ``n`` tricks, one per trump suit, in suit order."""

PLAYS: Final[tuple[Play, ...]] = tuple(Play(card) for card in DECK)
"""``PLAYS[card.index]`` is the talk-free play of ``card``; the engine hands these out, never copies."""

ACTIONS: Final[tuple[Action, ...]] = (*PLAYS, *(declaration for row in DECLARATIONS for declaration in row))
"""Every action without talk: the 24 plays and the 28 declarations, each one interned object."""


def parse_action(text: str) -> Action:
    """Parses ``3H`` (declare three, hearts trump) or a card code such as ``QS``; raises
    :class:`InvalidActionError` for anything else. Whether the action is legal is the engine's question."""
    cleaned = text.strip().upper()
    if len(cleaned) == 2 and cleaned[0] in "0123456":
        try:
            return DECLARATIONS[int(cleaned[0])][Suit.parse(cleaned[1])]
        except CardError:
            pass
    try:
        return PLAYS[Card.parse(cleaned).index]
    except CardError:
        raise InvalidActionError(
            f"unknown action {text!r}: expected a declaration like '3H' or a card like 'QS'"
        ) from None
