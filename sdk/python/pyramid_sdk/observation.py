"""What one seat may know at a moment of the match (GAME.md, "What a bot may know").

An :class:`Observation` is built by the engine for one seat and holds nothing else: the seat's own hand,
the cards played in this deal and by whom, the declaration, tricks taken, every pyramid, the table talk
this seat may see. Other hands, the set-aside cards and the deck order are never in it, which is why the
referee can send it to an untrusted bot as it is.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from pyramid_sdk.actions import Action, Declare, Play
from pyramid_sdk.cards import DECK, Card, Suit
from pyramid_sdk.pyramid import Pyramid
from pyramid_sdk.rules import TRICKS_PER_DEAL, Rules


class Phase(enum.StrEnum):
    """Where the match stands; each phase has its own legal actions."""

    DECLARE = "declare"
    """The declarer announces tricks and trump."""
    PLAY = "play"
    """Cards are played, one trick after another."""
    DEAL_OVER = "deal-over"
    """All six tricks are played and the deal is scored; nobody acts until the next deal starts."""
    MATCH_OVER = "match-over"
    """Every pyramid is full."""


@dataclass(frozen=True, slots=True)
class Trick:
    """A trick: who led, the cards in play order starting with the leader, and who won (``None`` while
    it is being played)."""

    leader: int
    cards: tuple[Card, ...]
    winner: int | None = None

    def seat_of(self, position: int, players: int) -> int:
        """The seat that played ``cards[position]``."""
        return (self.leader + position) % players

    def plays(self, players: int) -> tuple[tuple[int, Card], ...]:
        """``(seat, card)`` pairs in play order."""
        return tuple(((self.leader + i) % players, card) for i, card in enumerate(self.cards))


_new_object: Final = object.__new__
_set_leader: Final = vars(Trick)["leader"].__set__
_set_cards: Final = vars(Trick)["cards"].__set__
_set_winner: Final = vars(Trick)["winner"].__set__


def new_trick(leader: int, cards: tuple[Card, ...], winner: int | None) -> Trick:
    """``Trick(leader, cards, winner)``, built at a third of the cost: the engine makes one per card
    played, and a frozen dataclass's ``__init__`` goes through ``object.__setattr__`` field by field.
    This writes the slots directly, which is what that ``__init__`` ends up doing.

    >>> new_trick(2, (), 1) == Trick(2, (), 1)
    True
    """
    trick: Trick = _new_object(Trick)
    _set_leader(trick, leader)
    _set_cards(trick, cards)
    _set_winner(trick, winner)
    return trick


@dataclass(frozen=True, slots=True)
class TalkMessage:
    """A defender's table-talk message, said during trick ``trick`` (1-6) of the current deal."""

    seat: int
    trick: int
    text: str


@dataclass(frozen=True, slots=True)
class Clock:
    """The time a seat has for the decision it is asked for, as the referee counts it: a search can
    budget from it, as lichess-bot passes the clock to every search.

    The referee's clock runs from when it sends the request until the reply arrives, so the time on
    the wire counts too: aim a little before :attr:`deadline`. ``received`` and ``deadline`` are
    ``time.monotonic()`` readings of the bot's own process.

    >>> clock = Clock(per_action=1.0, bank=19.5, received=100.0)
    >>> clock.time_left, clock.deadline
    (20.5, 120.5)
    """

    per_action: float
    """Seconds this decision may take without drawing on the bank."""
    bank: float
    """Seconds left in the match's bank before this decision; it pays for any time over ``per_action``,
    and at zero a slow answer is a timeout."""
    received: float
    """``time.monotonic()`` when the SDK read the request (when the referee's seat called the bot, for an
    in-process bot)."""

    @property
    def time_left(self) -> float:
        """Seconds before this decision times out: the per-action limit plus the bank."""
        return self.per_action + self.bank

    @property
    def deadline(self) -> float:
        """``time.monotonic()`` at which this decision times out, by the bot's reading of the time."""
        return self.received + self.per_action + self.bank


@dataclass(slots=True)
class Observation:
    """One seat's view of the match. ``legal_actions`` is empty unless it is this seat's turn.

    Every field is an immutable value shared with the engine, and each request gets a fresh
    observation, so a bot that reassigns a field harms nobody. The class itself is not frozen because
    it is built once per decision: a frozen dataclass of this size costs seven times as much to build.
    """

    seat: int
    rules: Rules
    phase: Phase
    deal_number: int
    """1 to ``rules.deals``."""
    dealer: int
    declarer: int
    to_act: int | None
    """The seat whose turn it is, or ``None`` between deals and after the match."""
    hand: tuple[Card, ...]
    """This seat's cards, in deck order."""
    declaration: Declare | None
    current_trick: Trick
    tricks: tuple[Trick, ...]
    """This deal's finished tricks, in order."""
    taken: tuple[int, ...]
    """Tricks won in this deal, per seat."""
    pyramids: tuple[Pyramid, ...]
    """Every seat's pyramid, per seat; totals are ``pyramids[s].total``."""
    talk: tuple[TalkMessage, ...]
    """The table talk of this deal that this seat may see."""
    legal_actions: tuple[Action, ...]
    forfeited: tuple[bool, ...]
    clock: Clock | None = field(default=None, compare=False)
    """This seat's time for the decision, set by the SDK on every observation that asks for one (and by
    the referee for an in-process bot); ``None`` where no clock runs: in the engine's own observations,
    simulations and :meth:`Bot.deal_end`. It is not part of the game state, so equality ignores it."""

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def my_hand(self) -> tuple[Card, ...]:
        return self.hand

    @property
    def my_turn(self) -> bool:
        return self.to_act == self.seat

    @property
    def is_declarer(self) -> bool:
        return self.declarer == self.seat

    @property
    def trump(self) -> Suit | None:
        return self.declaration.trump if self.declaration is not None else None

    @property
    def declared(self) -> int | None:
        return self.declaration.tricks if self.declaration is not None else None

    @property
    def my_pyramid(self) -> Pyramid:
        return self.pyramids[self.seat]

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(p.total for p in self.pyramids)

    @property
    def legal_cards(self) -> tuple[Card, ...]:
        """The cards this seat may play now (every card of the hand, on its turn in the play phase)."""
        return tuple(a.card for a in self.legal_actions if isinstance(a, Play))

    @property
    def legal_declarations(self) -> tuple[Declare, ...]:
        return tuple(a for a in self.legal_actions if isinstance(a, Declare))

    @property
    def tricks_left(self) -> int:
        """Tricks of this deal not yet won by anybody, the current one included."""
        return TRICKS_PER_DEAL - len(self.tricks)

    @property
    def played_cards(self) -> frozenset[Card]:
        """Every card played in this deal so far, the current trick included."""
        cards = {card for trick in self.tricks for card in trick.cards}
        cards.update(self.current_trick.cards)
        return frozenset(cards)

    @property
    def unseen_cards(self) -> tuple[Card, ...]:
        """Cards this seat has not seen: in another hand or set aside. Simulating bots sample these."""
        known = self.played_cards | set(self.hand)
        return tuple(card for card in DECK if card not in known)

    def hand_size(self, seat: int) -> int:
        """How many cards ``seat`` still holds: public, since every seat starts with six."""
        played = len(self.tricks) + (1 if seat in self._seats_in_current_trick else 0)
        return TRICKS_PER_DEAL - played if self.phase in (Phase.DECLARE, Phase.PLAY) else 0

    @property
    def _seats_in_current_trick(self) -> tuple[int, ...]:
        trick = self.current_trick
        return tuple((trick.leader + i) % self.rules.players for i in range(len(trick.cards)))
