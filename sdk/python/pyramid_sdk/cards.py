"""The 24-card Pyramid deck: ranks 9 < 10 < J < Q < K < A in four suits.

Every card exists exactly once: :data:`DECK` holds the 24 instances and every parse returns one of
them, so cards compare and hash as cheaply as small integers and can be used as dict keys by the engine
and by bots alike.

>>> card = Card.parse("TS")
>>> card.code, card.human, card.rank.name, card.suit.name
('TS', '10♠', 'TEN', 'SPADES')
>>> Card.parse("10♠") is card
True
>>> sorted(Card.parse_many("AS 9H KS"))
[Card.parse('KS'), Card.parse('AS'), Card.parse('9H')]
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Final


class CardError(ValueError):
    """A card, rank or suit code that does not name one of the 24 cards."""


class Rank(enum.IntEnum):
    """Card ranks, lowest first; the value is the rank's strength."""

    NINE = 0
    TEN = 1
    JACK = 2
    QUEEN = 3
    KING = 4
    ACE = 5

    @property
    def code(self) -> str:
        """One character: ``9 T J Q K A``."""
        return _RANK_CODES[self]

    @property
    def human(self) -> str:
        """As printed on a card: ``9 10 J Q K A``."""
        return _RANK_HUMAN[self]

    @classmethod
    def parse(cls, text: str) -> Rank:
        """Accepts ``9 T J Q K A`` (any case) and ``10``."""
        try:
            return _RANK_BY_CODE[text.strip().upper()]
        except KeyError:
            raise CardError(f"unknown rank {text!r}: expected one of 9 T J Q K A") from None


class Suit(enum.IntEnum):
    """The four suits in the order the deck lists them: spades, hearts, diamonds, clubs."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def code(self) -> str:
        """One letter: ``S H D C``."""
        return _SUIT_CODES[self]

    @property
    def symbol(self) -> str:
        """``♠ ♥ ♦ ♣``."""
        return _SUIT_SYMBOLS[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Accepts ``S H D C`` (any case) and the suit symbols."""
        try:
            return _SUIT_BY_CODE[text.strip().upper()]
        except KeyError:
            raise CardError(f"unknown suit {text!r}: expected one of S H D C") from None


_RANK_CODES: Final = ("9", "T", "J", "Q", "K", "A")
_RANK_HUMAN: Final = ("9", "10", "J", "Q", "K", "A")
_SUIT_CODES: Final = ("S", "H", "D", "C")
_SUIT_SYMBOLS: Final = ("♠", "♥", "♦", "♣")
_RANK_BY_CODE: Final = {code: Rank(i) for i, code in enumerate(_RANK_CODES)} | {"10": Rank.TEN}
_SUIT_BY_CODE: Final = {code: Suit(i) for i, code in enumerate(_SUIT_CODES)} | {
    symbol: Suit(i) for i, symbol in enumerate(_SUIT_SYMBOLS)
}


class Card:
    """One of the 24 cards. Never constructed directly: use :meth:`parse`, :meth:`of` or :data:`DECK`.

    Cards order by deck position, suit first (``9S < AS < 9H``), which is how hands are shown. Trick
    strength is a rule, not a card property: see :mod:`pyramid_sdk.rules`.
    """

    __slots__ = ("code", "human", "index", "rank", "suit")

    rank: Rank
    suit: Suit
    index: int
    code: str
    human: str

    def __init__(self, rank: Rank, suit: Suit, _token: object = None) -> None:
        if _token is not _CONSTRUCTING:
            raise TypeError("cards are unique: use Card.of(rank, suit) or Card.parse(code)")
        self.rank = rank
        self.suit = suit
        self.index = suit * 6 + rank
        self.code = rank.code + suit.code
        self.human = rank.human + suit.symbol

    @staticmethod
    def of(rank: Rank, suit: Suit) -> Card:
        return DECK[suit * 6 + rank]

    @staticmethod
    def from_index(index: int) -> Card:
        """The card at ``index`` (0-23) of the deck order; see :attr:`index`."""
        if not 0 <= index < 24:
            raise CardError(f"card index {index} out of range 0-23")
        return DECK[index]

    @staticmethod
    def parse(text: str) -> Card:
        """Parses a code such as ``9S``, ``TS`` or the human form ``10♠`` (any case)."""
        card = _BY_CODE.get(text)
        if card is not None:
            return card
        cleaned = text.strip().upper() if isinstance(text, str) else ""
        card = _BY_CODE.get(cleaned)
        if card is None:
            raise CardError(
                f"unknown card {text!r}: expected a rank 9 T J Q K A and a suit S H D C, like 'TS' or 'AH'"
            )
        return card

    @staticmethod
    def parse_many(text: str) -> tuple[Card, ...]:
        """Parses codes separated by spaces or commas."""
        return tuple(Card.parse(part) for part in text.replace(",", " ").split())

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card.parse({self.code!r})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __le__(self, other: Card) -> bool:
        return self.index <= other.index

    def __gt__(self, other: Card) -> bool:
        return self.index > other.index

    def __ge__(self, other: Card) -> bool:
        return self.index >= other.index

    def __hash__(self) -> int:
        return self.index

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Card.parse, (self.code,))


_CONSTRUCTING: Final = object()

DECK: Final[tuple[Card, ...]] = tuple(Card(rank, suit, _CONSTRUCTING) for suit in Suit for rank in Rank)
"""All 24 cards in deck order: ``9S TS JS QS KS AS 9H … AC``."""

_BY_CODE: Final[dict[str, Card]] = (
    {card.code: card for card in DECK}
    | {card.rank.human + card.suit.code: card for card in DECK}
    | {card.human: card for card in DECK}
    | {card.rank.code + card.suit.symbol: card for card in DECK}
)


def format_cards(cards: Iterable[Card], *, human: bool = False) -> str:
    """Cards as space-separated codes (or human forms), in the order given."""
    return " ".join(card.human if human else card.code for card in cards)
