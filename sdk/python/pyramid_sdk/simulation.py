"""Fast simulation of the rest of a deal: copy a position, play on without observations, sample worlds.

A search bot (or an analysis) asks the same question thousands of times per decision: "if the hidden
cards lay like this and everybody played on, what would the declarer score?". :class:`Match` answers it
too, but it checks every action for an untrusted bot and keeps a record; a :class:`World` holds only
what playing on needs (hands as masks, :mod:`pyramid_sdk.cardsets`), copies in one call and plays a card
in a few attribute writes. Its rules are the engine's own functions (:func:`trick_winner_index`,
:func:`score`), and ``tests/test_simulation.py`` plays worlds and matches side by side.

What a seat may know (GAME.md) fixes how to sample: its own hand, every card played, and how many cards
each other seat holds. The set-aside cards (with fewer than four players) are never shown, and no rule
narrows the rest down (there is no duty to follow suit, so a discard reveals no void), so every way of
dealing the unseen cards to the other hands and the set-aside pile is equally likely:
:func:`sample_world` draws one uniformly.

>>> import random
>>> from pyramid_sdk import Match, Rules
>>> match = Match(Rules(players=3), seed=5)
>>> world = sample_world(match.observation(match.to_act), random.Random(1))
>>> world.declare(world.legal_declarations()[0])
>>> play_out(world, lowest_card)
>>> world.is_over, world.points in range(-2, 11)
(True, True)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from pyramid_sdk.actions import DECLARATIONS, Action, Declare, IllegalActionError, Play
from pyramid_sdk.cards import DECK, Card
from pyramid_sdk.cardsets import BITS, cards_of, mask_of, plays_of
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Observation, Phase
from pyramid_sdk.rules import TRICKS_PER_DEAL, TrickWinner, score, trick_winner_index

FULL_DECK: Final = (1 << len(DECK)) - 1
"""The mask of all 24 cards."""


@dataclass(slots=True)
class World:
    """The current deal with every hand known, from the declaration (or the card to play) to its score.

    Mutable and cheap: :meth:`copy` before trying an action if the position is needed again. It knows
    nothing of the match beyond this deal (the pyramids matter only through the declarer's open numbers).
    """

    players: int
    trick_winner: TrickWinner
    declarer: int
    open_numbers: tuple[int, ...]
    """The numbers the declarer may still declare (his pyramid's open slots)."""
    hands: list[int]
    """Per seat, its cards as a mask."""
    played: int
    """Every card played in this deal, as a mask."""
    declaration: Declare | None
    leader: int
    trick: list[Card]
    """The cards of the trick being played, the leader's first."""
    taken: list[int]
    tricks_played: int
    to_act: int | None
    """The seat to act, ``None`` once the deal is over."""

    # -- making one ---------------------------------------------------------------------------------------

    @classmethod
    def from_match(cls, match: Match) -> World:
        """The deal ``match`` is playing, every hand as it stands (for the referee's analyses and tests)."""
        return cls.from_observation(
            match.observation(match.to_act if match.to_act is not None else 0),
            [match.hand(seat) for seat in range(match.players)],
        )

    @classmethod
    def from_observation(cls, obs: Observation, hands: Sequence[Sequence[Card]]) -> World:
        """The position ``obs`` shows, with ``hands`` as every seat's current cards (the observing seat's
        must be its own); :func:`sample_world` makes ``hands`` up from what the seat has not seen."""
        if obs.phase not in (Phase.DECLARE, Phase.PLAY):
            raise ValueError(f"World: nothing to simulate in phase {obs.phase}")
        masks = [mask_of(hand) for hand in hands]
        if len(masks) != obs.players or masks[obs.seat] != mask_of(obs.hand):
            raise ValueError("World: need one hand per seat, the observing seat's as observed")
        for seat, hand in enumerate(hands):
            if len(hand) != obs.hand_size(seat):
                raise ValueError(f"World: seat {seat} must hold {obs.hand_size(seat)} cards")
        played = mask_of(card for trick in obs.tricks for card in trick.cards) | mask_of(
            obs.current_trick.cards
        )
        held = played
        for mask, hand in zip(masks, hands, strict=True):
            if held & mask or mask.bit_count() != len(hand):
                raise ValueError("World: the hands must hold distinct cards, none of them played")
            held |= mask
        return cls(
            players=obs.players,
            trick_winner=obs.rules.trick_winner,
            declarer=obs.declarer,
            open_numbers=obs.pyramids[obs.declarer].open_numbers,
            hands=masks,
            played=played,
            declaration=obs.declaration,
            leader=obs.current_trick.leader,
            trick=list(obs.current_trick.cards),
            taken=list(obs.taken),
            tricks_played=len(obs.tricks),
            to_act=obs.to_act,
        )

    def copy(self) -> World:
        """An independent copy (the lists are copied; cards and declarations are shared values)."""
        return World(
            self.players,
            self.trick_winner,
            self.declarer,
            self.open_numbers,
            self.hands.copy(),
            self.played,
            self.declaration,
            self.leader,
            self.trick.copy(),
            self.taken.copy(),
            self.tricks_played,
            self.to_act,
        )

    # -- state --------------------------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        if self.to_act is None:
            return Phase.DEAL_OVER
        return Phase.DECLARE if self.declaration is None else Phase.PLAY

    @property
    def is_over(self) -> bool:
        return self.to_act is None

    @property
    def points(self) -> int:
        """The declarer's score for the deal; only once it is over."""
        if self.declaration is None or self.to_act is not None:
            raise ValueError("World.points: the deal is not over")
        return score(self.declaration.tricks, self.taken[self.declarer])

    def hand(self, seat: int) -> tuple[Card, ...]:
        return cards_of(self.hands[seat])

    def unseen(self, seat: int) -> int:
        """The mask of the cards ``seat`` has not seen: other hands and the set-aside ones."""
        return FULL_DECK ^ self.played ^ self.hands[seat]

    def legal_declarations(self) -> tuple[Declare, ...]:
        if self.declaration is not None or self.to_act is None:
            return ()
        return tuple(declare for n in self.open_numbers for declare in DECLARATIONS[n])

    def legal_cards(self) -> tuple[Card, ...]:
        if self.declaration is None or self.to_act is None:
            return ()
        return cards_of(self.hands[self.to_act])

    def legal_actions(self) -> tuple[Action, ...]:
        if self.declaration is None:
            return self.legal_declarations()
        return plays_of(self.hands[self.to_act]) if self.to_act is not None else ()

    # -- acting -------------------------------------------------------------------------------------------

    def declare(self, declaration: Declare) -> None:
        if self.declaration is not None or self.to_act is None:
            raise IllegalActionError("World.declare: the declaration is already made")
        if declaration.tricks not in self.open_numbers:
            raise IllegalActionError(f"World.declare: {declaration} is not open to the declarer")
        self.declaration = declaration

    def play(self, card: Card) -> None:
        """Plays ``card`` for the seat to act; raises :class:`IllegalActionError` if it does not hold it."""
        seat = self.to_act
        declaration = self.declaration
        if seat is None or declaration is None:
            raise IllegalActionError("World.play: no card is due")
        bit = BITS[card.index]
        if not self.hands[seat] & bit:
            raise IllegalActionError(f"World.play: seat {seat} does not hold {card}")
        self.hands[seat] ^= bit
        self.played |= bit
        trick = self.trick
        trick.append(card)
        players = self.players
        if len(trick) < players:
            self.to_act = (seat + 1) % players
            return
        winner = (self.leader + trick_winner_index(trick, declaration.trump, self.trick_winner)) % players
        self.taken[winner] += 1
        self.tricks_played += 1
        self.trick = []
        self.leader = winner
        self.to_act = winner if self.tricks_played < TRICKS_PER_DEAL else None

    def apply(self, action: Action) -> None:
        if isinstance(action, Play):
            self.play(action.card)
        else:
            self.declare(action)


Policy = Callable[[World], Card]
"""A playout policy: the card the seat to act plays. It must use only what that seat may know: its own
hand (``world.hands[world.to_act]``), ``world.played``, the trick, the declaration and ``taken``.
:func:`lowest_card` is the simplest; :func:`pyramid_sdk.heuristic.heuristic_card` is the one
``referee analyze`` plays out with (with :func:`~pyramid_sdk.heuristic.heuristic_declaration`)."""


def lowest_card(world: World) -> Card:
    """The simplest policy: the lowest card held (by rank, then suit), as the referee's autopilot plays."""
    assert world.to_act is not None
    return min(cards_of(world.hands[world.to_act]), key=lambda card: (card.rank, card.suit))


def play_out(world: World, policy: Policy) -> None:
    """Plays the deal to its end, every seat by ``policy``; the declaration must be made."""
    while world.to_act is not None:
        world.play(policy(world))


def sample_hands(obs: Observation, rng: random.Random) -> list[tuple[Card, ...]]:
    """Every seat's current cards, drawn uniformly among the deals consistent with what ``obs.seat`` has
    seen: its own hand as it is, each other seat as many of the unseen cards as it holds (the rest are
    the set-aside cards)."""
    unseen = list(obs.unseen_cards)
    rng.shuffle(unseen)
    hands: list[tuple[Card, ...]] = []
    for seat in range(obs.players):
        if seat == obs.seat:
            hands.append(obs.hand)
        else:
            size = obs.hand_size(seat)
            hands.append(tuple(sorted(unseen[:size])))
            del unseen[:size]
    return hands


def sample_world(obs: Observation, rng: random.Random) -> World:
    """A :class:`World` standing where ``obs`` stands, the hidden cards drawn by :func:`sample_hands`."""
    return World.from_observation(obs, sample_hands(obs, rng))


__all__ = ["FULL_DECK", "Policy", "World", "lowest_card", "play_out", "sample_hands", "sample_world"]
