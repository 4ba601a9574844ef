"""The heuristic: a rule of thumb that counts likely tricks to declare, then plays to hit (or break) the
number. It is the playout policy of ``referee analyze`` (docs/ANALYSIS.md), the heuristic sample bot's
play, and the policy the Monte Carlo and expert sample bots play their simulations out with.

It lives in the library, not among the sample bots, because the analysis measures every decision against
its playouts: its figures must change only when this module does, never because somebody edited an
example written for bot authors to copy. The sample bots import it from here.

Pyramid turns on one fact: the declarer scores only for hitting his number *exactly*. So while he still
needs tricks the defenders beat him, and once he has enough they feed him more (whoever leads a trick
wins it unless somebody plays over him, so an overfed declarer keeps winning). Every play below first
asks "does the declarer still need tricks?", then tries to win or to lose the trick as cheaply as it
can.

One core, :func:`play_card` and :func:`best_declaration`, takes the facts it reads as arguments, and two
faces call it: for an :class:`~pyramid_sdk.observation.Observation` (:func:`choose_declaration`,
:func:`choose_card`: what a bot gets) and for a :class:`~pyramid_sdk.simulation.World`
(:func:`heuristic_declaration`, :func:`heuristic_card`, the latter a
:data:`~pyramid_sdk.simulation.Policy` for :func:`~pyramid_sdk.simulation.play_out`: no observation is
built). Both read only what the seat to act may know, and choose alike (``tests/test_heuristic.py``).

>>> import random
>>> from pyramid_sdk import Match, Rules
>>> from pyramid_sdk.simulation import play_out, sample_world
>>> match = Match(Rules(players=3), seed=5)
>>> obs = match.observation(match.to_act)
>>> world = sample_world(obs, random.Random(1))
>>> world.declare(heuristic_declaration(world))
>>> world.declaration == choose_declaration(obs)  # the declarer's own hand: the same declaration
True
>>> play_out(world, heuristic_card)
>>> world.is_over, world.points in range(-2, 11)
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final

from pyramid_sdk.actions import Declare
from pyramid_sdk.cards import DECK, Card, Suit
from pyramid_sdk.cardsets import cards_of
from pyramid_sdk.observation import Observation
from pyramid_sdk.rules import TRICKS_PER_DEAL, TrickWinner

if TYPE_CHECKING:  # a bot that plays the heuristic need not load the simulation (nor the engine under it)
    from pyramid_sdk.simulation import World

TRUMP_VALUE: Final = (0.25, 0.3, 0.4, 0.55, 0.75, 0.95)
"""Rough chance, by rank (9 to A), that a trump of that rank takes a trick."""
SIDE_VALUE: Final = {
    TrickWinner.LED_SUIT: (0, 0, 0, 0, 0.1, 0.35),
    TrickWinner.HIGHEST_RANK: (0, 0, 0, 0, 0.2, 0.5),
}
"""The same for a card of another suit, by trick-winner rule: only high cards count."""
SLOT_COST: Final = {
    TrickWinner.LED_SUIT: (5.6, 0.7, 1.3, 2.7, 4.6, 6.6, 8.6),
    TrickWinner.HIGHEST_RANK: (1.9, 0.4, 1.2, 2.7, 4.6, 6.6, 8.6),
}
"""What each number costs, per trick-winner rule, if it is left for a random hand: 10 minus the mean
score of declaring it with the best trump (``python -m sample_bots.strength --slot-costs``). A number
is spent now when this hand beats that, so a hard number (a 6, or a 0 under ``led-suit``, where an
overfed declarer keeps winning) goes to the hand that suits it rather than to whatever comes last.
The analysis adds it to a declaration's value too (``referee.analysis.estimate.slot_value``)."""
_FULL_DECK: Final = (1 << len(DECK)) - 1
"""The mask of every card: :data:`pyramid_sdk.simulation.FULL_DECK`, not imported from there (above)."""


def power(card: Card, led: Suit, trump: Suit, rule: TrickWinner) -> int:
    """How strongly ``card`` plays in a trick led in ``led``: -1 cannot win, a higher value beats a lower."""
    if card.suit is trump:
        return 20 + card.rank
    if card.suit is led or rule is TrickWinner.HIGHEST_RANK:
        return 10 + card.rank
    return -1


def estimate_tricks(hand: Iterable[Card], trump: Suit, rule: TrickWinner) -> float:
    """The tricks ``hand`` should take with ``trump``: a sum of per-card chances."""
    side = SIDE_VALUE[rule]
    return sum(TRUMP_VALUE[c.rank] if c.suit is trump else side[c.rank] for c in hand)


def best_declaration(hand: Sequence[Card], legal: Sequence[Declare], rule: TrickWinner) -> Declare:
    """The legal declaration nearest the estimate for its trump (each trick off costs 2 points), less
    what its number would cost if it were left for a worse-suited hand later; the first of equals."""
    estimate = {suit: estimate_tricks(hand, suit, rule) for suit in Suit}
    cost = SLOT_COST[rule]
    return max(legal, key=lambda d: cost[d.tricks] - 2 * abs(d.tricks - estimate[d.trump]))


def choose_declaration(obs: Observation) -> Declare:
    """:func:`best_declaration` for the seat of ``obs``, which must be the declarer, to declare."""
    return best_declaration(obs.hand, obs.legal_declarations, obs.rules.trick_winner)


def heuristic_declaration(world: World) -> Declare:
    """:func:`best_declaration` for the declarer of ``world``, from his hand there, before the
    declaration: the analysis's playouts declare with it."""
    return best_declaration(world.hand(world.declarer), world.legal_declarations(), world.trick_winner)


def hidden_top(obs: Observation) -> list[int]:
    """Per suit, the highest rank this seat has not seen yet (-1 if none): what could still beat it.

    Works on deck indexes (``suit * 6 + rank``) rather than on ``obs.unseen_cards`` because the Monte
    Carlo bot calls this in every step of every playout.
    """
    seen = {card.index for trick in (*obs.tricks, obs.current_trick) for card in trick.cards}
    seen.update(card.index for card in obs.hand)
    high = [-1, -1, -1, -1]
    for index in range(24):  # ascending ranks within each suit: the last hidden one is the highest
        if index not in seen:
            high[index // 6] = index % 6
    return high


def top_power(high: list[int], led: Suit, trump: Suit, rule: TrickWinner) -> int:
    """The strongest a hidden card could play in a trick led in ``led``, given :func:`hidden_top`."""
    if high[trump] >= 0:
        return 20 + high[trump]
    rank = max(high) if rule is TrickWinner.HIGHEST_RANK else high[led]
    return 10 + rank if rank >= 0 else -1


def choose_card(obs: Observation) -> Card:
    """Win the trick if our side wants it and can, else lose it while shedding the riskiest card."""
    assert obs.declaration is not None
    trick = obs.current_trick
    return play_card(
        obs.legal_cards,
        trick.cards,
        trick.leader,
        hidden_top(obs),
        obs.declaration,
        obs.rules.trick_winner,
        (obs.players, obs.seat, obs.declarer),
        obs.taken[obs.declarer],
        obs.tricks_left,
    )


def heuristic_card(world: World) -> Card:
    """:func:`choose_card` for the seat to act of ``world``: the analysis's playout policy, and the expert
    bot's. It reads what that seat may know only: its hand, the cards played, the trick, the declaration
    and the tricks taken."""
    seat = world.to_act
    declaration = world.declaration
    assert seat is not None
    assert declaration is not None
    hand = cards_of(world.hands[seat])
    if len(hand) == 1:
        return hand[0]
    unseen = _FULL_DECK ^ world.played ^ world.hands[seat]
    return play_card(
        hand,
        world.trick,
        world.leader,
        [((unseen >> (6 * suit)) & 63).bit_length() - 1 for suit in range(4)],  # hidden_top, from masks
        declaration,
        world.trick_winner,
        (world.players, seat, world.declarer),
        world.taken[world.declarer],
        TRICKS_PER_DEAL - world.tricks_played,
    )


def play_card(
    hand: Sequence[Card],
    trick: Sequence[Card],
    leader: int,
    high: list[int],
    declaration: Declare,
    rule: TrickWinner,
    seats: tuple[int, int, int],
    taken: int,
    tricks_left: int,
) -> Card:
    """The heuristic's card from the facts it reads, so that an observation and a world both ask it: the
    seat's ``hand``, the ``trick`` so far and its ``leader``, :func:`hidden_top`, ``seats`` as
    ``(players, seat, declarer)``, the declarer's ``taken`` tricks and the tricks left in the deal."""
    players, seat, declarer = seats
    trump = declaration.trump
    need = declaration.tricks - taken
    is_declarer = seat == declarer
    by_value = _by_value(trump)
    if is_declarer:
        # Winning a trick means leading the next one, and a declarer who has enough is then fed: so he
        # takes tricks only when he must, and keeps his sure winners (nothing hidden beats them) for last.
        sure = sum(power(c, c.suit, trump, rule) >= top_power(high, c.suit, trump, rule) for c in hand)
        wants = need > 0 and (need >= tricks_left or need > sure)
    else:
        wants = need > 0  # beat a declarer who needs tricks, feed one who has enough
    if not trick:
        # On lead: the leader wins unless somebody plays over him, so lead high to win and low to lose;
        # a defender attacks with his best side card and keeps his trumps to beat the declarer.
        if wants and not is_declarer:
            return max(hand, key=lambda card: (card.suit is not trump, card.rank))
        return max(hand, key=by_value) if wants else min(hand, key=by_value)

    led = trick[0].suit
    powers = [power(card, led, trump, rule) for card in trick]
    best = max(powers)
    winning_seat = (leader + powers.index(best)) % players
    declarer_played = any((leader + i) % players == declarer for i in range(len(trick)))
    winners = sorted((c for c in hand if power(c, led, trump, rule) > best), key=by_value)
    losers = sorted((c for c in hand if power(c, led, trump, rule) <= best), key=by_value)
    # The strongest card a seat after us may hold (none when we play last).
    top = -1 if len(trick) == players - 1 else top_power(high, led, trump, rule)

    if is_declarer:
        if wants and winners:
            # The cheapest card nobody after him can beat, else his strongest.
            return next((c for c in winners if power(c, led, trump, rule) >= top), winners[-1])
        if need > 0:
            return losers[0] if losers else winners[0]  # waiting: keep the good cards
        return losers[-1] if losers else winners[-1]  # enough: shed the card most likely to win later
    if wants:
        if not declarer_played and best < top:
            # Ahead of the declarer: take the trick with a card nobody can beat, if we hold one.
            unbeatable = next((c for c in winners if power(c, led, trump, rule) >= top), None)
            if unbeatable is not None:
                return unbeatable
        if winning_seat == declarer and winners:
            return winners[0]  # beat him as cheaply as possible
        return losers[0] if losers else winners[0]
    if declarer_played and winning_seat != declarer:
        return max(hand, key=by_value)  # he loses this one anyway: shed a high card
    return losers[-1] if losers else winners[0]


def _by_value(trump: Suit) -> Callable[[Card], tuple[bool, int]]:
    """Sort key for how valuable a card is to keep: trumps first, then by rank."""
    return lambda card: (card.suit is trump, card.rank)


__all__ = [
    "SIDE_VALUE",
    "SLOT_COST",
    "TRUMP_VALUE",
    "best_declaration",
    "choose_card",
    "choose_declaration",
    "estimate_tricks",
    "heuristic_card",
    "heuristic_declaration",
    "hidden_top",
    "play_card",
    "power",
    "top_power",
]
