"""The Pyramid match state machine: pure, deterministic, and the only place the rules are enforced.

A :class:`Match` is driven by whoever holds it (the referee, a simulating bot, a test) through
:meth:`Match.legal_actions`, :meth:`Match.apply` and :meth:`Match.next_deal`, or played on in one call by
:meth:`Match.play_out`. It does no I/O, reads no clock and uses no global randomness: every deal's cards
and the first dealer are a pure function of the match seed and the deal number, so two matches with the
same seed deal the same hands to the same seats.

>>> match = Match(Rules(players=2), seed=7)
>>> match.phase, match.deal_number, match.to_act == match.declarer
(<Phase.DECLARE: 'declare'>, 1, True)
>>> match.apply(match.legal_actions()[0])
>>> match.phase, str(match.declaration)
(<Phase.PLAY: 'play'>, '0S')
>>> match.play_out()  # every other decision the default action, the deals one after the other
>>> len(match.record().deals), all(p.full for p in match.pyramids)
(32, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Final

from pyramid_sdk.actions import (
    DECLARATIONS,
    PLAYS,
    Action,
    Declare,
    IllegalActionError,
    IllegalTalkError,
    MalformedActionError,
    NotYourTurnError,
    Play,
)
from pyramid_sdk.cards import Card, Suit
from pyramid_sdk.cardsets import (
    BITS,
    CARDS_0,
    CARDS_1,
    CARDS_2,
    PLAYS_0,
    PLAYS_1,
    PLAYS_2,
    cards_of,
    mask_of,
    plays_of,
)
from pyramid_sdk.dealing import CARDS_PER_HAND, deal_hands, first_dealer
from pyramid_sdk.observation import Observation, Phase, TalkMessage, Trick, new_trick
from pyramid_sdk.pyramid import Pyramid
from pyramid_sdk.record import DealRecord, MatchRecord, RecordError, credited_totals
from pyramid_sdk.rules import TRICKS_PER_DEAL, Rules, Talk, trick_winner_index

# CARDS_PER_HAND, deal_hands and first_dealer live in dealing: re-exported, as they always were here.
__all__ = ["CARDS_PER_HAND", "Chooser", "Match", "deal_hands", "first_dealer"]
_deck_position: Final = attrgetter("index")
_LEADING: Final = tuple(Trick(seat, ()) for seat in range(4))
"""Per seat, the empty trick it leads: shared, as tricks are immutable."""


def _shown(value: object) -> str:
    """``value`` for an error message: its repr, short, or its type where even that fails (the value may
    come from an in-process bot, and an error message must never raise)."""
    try:
        text = repr(value)
    except Exception:
        return f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:79] + "…"


class _DeclarationsBySheet(dict[tuple[int, ...], tuple[Declare, ...]]):
    """Memo of ``pyramid.remaining -> legal declarations``, in number then suit order."""

    def __missing__(self, remaining: tuple[int, ...]) -> tuple[Declare, ...]:
        value = self[remaining] = tuple(
            declare for n, left in enumerate(remaining) if left for declare in DECLARATIONS[n]
        )
        return value


_DECLARATIONS_BY_SHEET: Final = _DeclarationsBySheet()
# The phases play_out compares with at every decision, as module names (one look-up, not two).
_DECLARE: Final = Phase.DECLARE
_DEAL_OVER: Final = Phase.DEAL_OVER
_MATCH_OVER: Final = Phase.MATCH_OVER

Chooser = Callable[["Match", int], Action]
"""What :meth:`Match.play_out` asks for every decision: given the match and the seat to act, that seat's
action (one of ``match.legal_actions()``; it is applied with every check, so an illegal one raises). It
gets the whole match, not an observation, because its callers differ in what they read: a random agent
the legal actions, a bot its seat's ``match.observation(seat)``, a test the hands it checks against."""


class Match:
    """One match of Pyramid: ``16 × players`` deals, then totals and ranks.

    Seats are numbered from 0 clockwise; "the player to the left" of seat ``s`` is ``(s + 1) % players``.
    """

    # The match so far (set by _set_match only).
    _first_dealer: int
    _pyramids: tuple[Pyramid, ...]
    _forfeited: tuple[bool, ...]
    _forfeited_in: tuple[int, ...]
    """Per seat, the deal in which it forfeited; 0 while it has not."""
    _deals: list[DealRecord]
    # The current deal (set by _set_deal only); views hand out these tuples as they are, so they are
    # replaced, never mutated.
    _deal_number: int
    _dealer: int
    _declarer: int
    _dealt: tuple[tuple[Card, ...], ...]
    _masks: list[int]
    """Per seat, the cards it holds as a mask (:mod:`pyramid_sdk.cardsets`)."""
    _declaration: Declare | None
    _current: Trick
    _tricks: tuple[Trick, ...]
    _taken: tuple[int, ...]
    _talk: tuple[TalkMessage, ...]
    _talk_counts: list[int]
    _phase: Phase
    _to_act: int | None

    def __init__(self, rules: Rules | None = None, seed: int = 0, seats: Sequence[str] | None = None) -> None:
        self.rules: Final = rules if rules is not None else Rules()
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed: must be a whole number >= 0, got {seed!r}")
        players = self.rules.players
        names = tuple(seats) if seats is not None else tuple(f"seat{seat}" for seat in range(players))
        if len(names) != players:
            raise ValueError(f"seats: {players} players need {players} seat names, got {len(names)}")
        self.seed: Final = seed
        self.seats: Final = names
        self._players = players
        self._set_match(first_dealer(seed, players), (Pyramid(),) * players, (0,) * players)
        self._start_deal(1)

    # -- state ------------------------------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self._players

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def deal_number(self) -> int:
        """The current deal, from 1; after the match, the last deal."""
        return self._deal_number

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def declarer(self) -> int:
        return self._declarer

    @property
    def to_act(self) -> int | None:
        """The seat whose turn it is, or ``None`` between deals and after the match."""
        return self._to_act

    @property
    def declaration(self) -> Declare | None:
        return self._declaration

    @property
    def pyramids(self) -> tuple[Pyramid, ...]:
        return self._pyramids

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(pyramid.total for pyramid in self._pyramids)

    @property
    def forfeited(self) -> tuple[bool, ...]:
        return self._forfeited

    @property
    def is_over(self) -> bool:
        return self._phase is Phase.MATCH_OVER

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds now (for the referee; a bot sees only its own, via its observation)."""
        return cards_of(self._masks[seat])

    @property
    def credited_totals(self) -> tuple[int, ...]:
        """Per seat, the points it is credited with (:attr:`MatchRecord.credited_totals`): its total,
        but a forfeited seat's declarations from the deal it forfeited in on count at their worst."""
        forfeits = [seat for seat, deal in enumerate(self._forfeited_in) if deal]
        deals = [self._forfeited_in[seat] for seat in forfeits]
        return credited_totals(self.totals, self._deals, forfeits, deals)

    def ranks(self) -> tuple[int, ...]:
        """Per seat, 1 = best by credited total (the total, unless the seat forfeited); equal totals
        share a rank; a forfeited seat ranks below every seat that did not forfeit.

        >>> m = Match(Rules(players=3)); m._pyramids = (Pyramid(total=5), Pyramid(total=9), Pyramid(total=5))
        >>> m.ranks()
        (2, 1, 2)
        >>> m.forfeit(1); m.ranks()
        (1, 3, 1)
        """
        keys = [
            (forfeited, -total)
            for forfeited, total in zip(self._forfeited, self.credited_totals, strict=True)
        ]
        return tuple(1 + sum(other < key for other in keys) for key in keys)

    # -- actions ----------------------------------------------------------------------------------------

    def legal_actions(self, seat: int | None = None) -> tuple[Action, ...]:
        """What ``seat`` (default: the seat to act) may do now; empty when it is not that seat's turn.

        Declarations come in number then suit order, plays in the hand's deck order. Each is talk-free;
        a defender may attach talk to a play (see :meth:`say` for the limits).
        """
        acting = self._to_act
        if acting is None or (seat is not None and seat != acting):
            return ()
        if self._phase is Phase.PLAY:
            return plays_of(self._masks[acting])
        return _DECLARATIONS_BY_SHEET[self._pyramids[acting].remaining]

    def apply(self, action: Action, seat: int | None = None) -> None:
        """Carries out ``action`` for the seat to act (``seat``, when given, must be that seat).

        Raises :class:`IllegalActionError` (or a subclass) for anything the rules do not allow, and then
        changes nothing; :class:`MalformedActionError` (a subclass) when the action's fields have the
        wrong types (``Declare(3.0, …)``, ``Declare(True, …)``, ``Play("AS")``).
        """
        acting = self._to_act
        if acting is None:
            raise IllegalActionError(f"no seat acts in phase {self._phase}")
        if seat is not None and seat != acting:
            raise NotYourTurnError(f"seat {seat} acted, but it is seat {acting}'s turn")
        if self._phase is Phase.PLAY:
            if type(action) is not Play:
                raise IllegalActionError(f"seat {acting} must play a card, not {_shown(action)}")
            card = action.card
            if type(card) is not Card:
                raise MalformedActionError(f"seat {acting}: a play is a Card, not {_shown(card)}")
            mask = self._masks[acting]
            bit = BITS[card.index]
            if not mask & bit:
                raise IllegalActionError(f"seat {acting} cannot play {card}: it is not in the seat's hand")
            if action.talk is not None:
                self._check_talk(acting, action.talk)
                self._add_talk(acting, action.talk)
            # The card leaves the hand and joins the trick; this runs for 24 of every 25 decisions, so
            # it is written out here rather than in a method of its own.
            self._masks[acting] = mask ^ bit
            current = self._current
            cards = (*current.cards, card)
            if len(cards) < self._players:
                self._current = new_trick(current.leader, cards, None)
                self._to_act = (acting + 1) % self._players
            else:
                self._finish_trick(current.leader, cards)
        else:
            if type(action) is not Declare:
                raise IllegalActionError(f"seat {acting} must declare tricks and trump, not {_shown(action)}")
            tricks = action.tricks
            if type(tricks) is not int or type(action.trump) is not Suit:
                raise MalformedActionError(
                    f"seat {acting}: a declaration is a whole number of tricks (an int) and a Suit, "
                    f"not a {type(tricks).__name__} and a {type(action.trump).__name__}"
                )
            if not self._pyramids[acting].can_declare(tricks):
                open_numbers = " ".join(map(str, self._pyramids[acting].open_numbers))
                raise IllegalActionError(
                    f"seat {acting} cannot declare {action}: its open numbers are {open_numbers}"
                )
            self._declaration = action
            self._phase = Phase.PLAY

    def say(self, seat: int, text: str) -> None:
        """Table talk by a defender during the play phase, outside its own turn too.

        Raises :class:`IllegalTalkError` when talk is off, the seat is the declarer, the phase is not
        play, the text is empty, not printable or too long, or the seat has used its messages for this
        trick.
        """
        self._check_talk(seat, text)
        self._add_talk(seat, text)

    def arrange(self, hands: Sequence[Sequence[Card]]) -> None:
        """Replaces the current deal's hands before anything is declared: for hand-made test positions and
        for simulations. The record then holds these hands, so it no longer replays from the seed.
        """
        if self._phase is not Phase.DECLARE:
            raise IllegalActionError(
                f"hands can be arranged only before the declaration, not in {self._phase}"
            )
        arranged = tuple(tuple(sorted(hand, key=_deck_position)) for hand in hands)
        cards = [card for hand in arranged for card in hand]
        if len(arranged) != self._players or any(len(hand) != CARDS_PER_HAND for hand in arranged):
            raise ValueError(f"arrange: need {self._players} hands of {CARDS_PER_HAND} cards")
        if not all(isinstance(card, Card) for card in cards) or len(set(cards)) != len(cards):
            raise ValueError("arrange: hands must hold distinct cards")
        self._dealt = arranged
        self._masks = [mask_of(hand) for hand in arranged]

    def next_deal(self) -> None:
        """Moves from a finished deal to the next one."""
        if self._phase is not Phase.DEAL_OVER:
            raise IllegalActionError(f"next_deal() needs phase {Phase.DEAL_OVER}, not {self._phase}")
        self._start_deal(self._deal_number + 1)

    def forfeit(self, seat: int) -> None:
        """Marks ``seat`` as forfeited in the current deal: it ranks below every other seat, and its
        declarations from this deal on are credited at their worst. Its play goes on (the referee plays
        :meth:`default_action` for it). Forfeiting again changes nothing."""
        self._check_seat(seat)
        if not self._forfeited_in[seat]:
            self._mark_forfeit(seat, self._deal_number)

    def default_action(self, seat: int | None = None) -> Action:
        """The deterministic action the referee substitutes when a bot faults, and autopilot's choice.

        Declaring: trump is the suit the hand holds most of (the stronger cards break ties, then suit
        order); the number is the open one nearest to the count of trumps and aces held (the lower on a
        tie). Playing: the lowest card by rank, then suit order.
        """
        acting = self._to_act
        if acting is None or (seat is not None and seat != acting):
            raise NotYourTurnError(f"seat {seat} has no action to default: it is not its turn")
        hand = cards_of(self._masks[acting])
        if self._phase is Phase.PLAY:
            return PLAYS[min(hand, key=lambda card: (card.rank, card.suit)).index]
        trump = max(
            Suit,
            key=lambda suit: (
                sum(card.suit is suit for card in hand),
                sum(card.rank for card in hand if card.suit is suit),
                -suit,
            ),
        )
        strength = sum(1 for card in hand if card.suit is trump or card.rank == 5)
        tricks = min(self._pyramids[acting].open_numbers, key=lambda n: (abs(n - strength), n))
        return DECLARATIONS[tricks][trump]

    def play_out(self, choose: Chooser | None = None, until: Phase = Phase.MATCH_OVER) -> None:
        """Plays on from where the match stands until it next *enters* phase ``until``, or is over:
        every action is ``choose(match, seat)`` for the seat to act (:meth:`default_action` without a
        ``choose``), and a finished deal is followed by :meth:`next_deal`.

        ``until`` names where the caller stops to look: ``Phase.DEAL_OVER`` at the end of the deal in
        play (between deals, of the next one), ``Phase.DECLARE`` at the start of the next deal (to
        forfeit a seat there, say), ``Phase.PLAY`` once the next declaration is made, and by default the
        end of the match. A call always moves on, so ``n`` calls with ``until=Phase.DEAL_OVER`` play
        ``n`` deals. This is the loop that simulations, tests and benchmarks would each write; the
        referee's runner, which waits on bots under a clock, keeps its own.

        >>> match = Match(Rules(players=2), seed=7)
        >>> match.play_out(until=Phase.DEAL_OVER)
        >>> match.phase, match.deal_number
        (<Phase.DEAL_OVER: 'deal-over'>, 1)
        >>> match.play_out(lambda match, seat: match.legal_actions()[-1], until=Phase.PLAY)
        >>> match.deal_number, str(match.declaration)
        (2, '6C')
        >>> match.play_out()
        >>> match.is_over, len(match.record().deals)
        (True, 32)
        """
        chosen = Match.default_action if choose is None else choose
        apply = self.apply  # this loop plays whole matches in the benchmarks: the look-ups hoisted
        while True:
            phase = self._phase
            if phase is _DEAL_OVER:
                self.next_deal()
                if until is _DECLARE:
                    return
            elif phase is _MATCH_OVER:
                return
            else:
                seat = self._to_act
                assert seat is not None  # a seat acts in every phase but the two over
                apply(chosen(self, seat), seat)
                if self._phase is not phase and self._phase is until:
                    return

    # -- views ------------------------------------------------------------------------------------------

    def observation(self, seat: int) -> Observation:
        """Everything ``seat`` may know now, and its legal actions."""
        acting = self._to_act
        talk = self._talk
        if talk and (self.rules.talk is Talk.DEFENDERS and seat == self._declarer):
            talk = ()
        mask = self._masks[seat]
        if seat != acting:
            legal: tuple[Action, ...] = ()
        elif self._phase is Phase.PLAY:  # legal_actions() written out: this runs once per decision
            legal = PLAYS_0[mask & 255] + PLAYS_1[mask >> 8 & 255] + PLAYS_2[mask >> 16]
        else:
            legal = _DECLARATIONS_BY_SHEET[self._pyramids[seat].remaining]
        return Observation(
            seat,
            self.rules,
            self._phase,
            self._deal_number,
            self._dealer,
            self._declarer,
            acting,
            CARDS_0[mask & 255] + CARDS_1[mask >> 8 & 255] + CARDS_2[mask >> 16],
            self._declaration,
            self._current,
            self._tricks,
            self._taken,
            self._pyramids,
            talk,
            legal,
            self._forfeited,
        )

    def record(self) -> MatchRecord:
        """Everything that happened so far; ``complete`` once the match is over."""
        return MatchRecord(
            seats=self.seats,
            seed=self.seed,
            rules=self.rules,
            deals=tuple(self._deals),
            totals=self.totals,
            ranks=self.ranks(),
            forfeits=tuple(seat for seat, deal in enumerate(self._forfeited_in) if deal),
            complete=self.is_over,
            forfeit_deals=tuple(deal for deal in self._forfeited_in if deal),
        )

    @classmethod
    def from_observation(cls, obs: Observation, hands: Sequence[Sequence[Card]]) -> Match:
        """A match standing where ``obs`` stands, with ``hands`` as every seat's current cards.

        For simulating bots: sample the hands the seat cannot see (consistent with ``obs``), then play
        the deal out with :meth:`apply`. Later deals of such a match are drawn from seed 0, so simulate
        to the end of the current deal only. ``hands[obs.seat]`` must be the observing seat's own hand.

        The state goes through the same two setters as a new match's, so ``observation(obs.seat)`` of
        the result equals ``obs`` (talk and the per-trick talk limits included) and no field can be left
        behind when the engine gains one.
        """
        if obs.phase not in (Phase.DECLARE, Phase.PLAY):
            raise ValueError(f"from_observation: nothing to simulate in phase {obs.phase}")
        match = cls(obs.rules, 0)
        players = match._players
        current = tuple(tuple(sorted(hand, key=_deck_position)) for hand in hands)
        if len(current) != players or current[obs.seat] != obs.hand:
            raise ValueError("from_observation: need one hand per seat, the observing seat's as observed")
        for seat in range(players):
            if len(current[seat]) != obs.hand_size(seat):
                raise ValueError(f"from_observation: seat {seat} must hold {obs.hand_size(seat)} cards")
        forfeited_in = tuple(obs.deal_number if forfeited else 0 for forfeited in obs.forfeited)
        match._set_match((obs.dealer - obs.deal_number + 1) % players, obs.pyramids, forfeited_in)
        match._set_deal(
            obs.deal_number,
            current,
            phase=obs.phase,
            declaration=obs.declaration,
            current_trick=obs.current_trick,
            tricks=obs.tricks,
            talk=obs.talk,
        )
        return match

    @classmethod
    def replay(cls, record: MatchRecord) -> Match:
        """Plays ``record`` again through the rules and returns the resulting match.

        Raises :class:`RecordError` naming the first deal where the record disagrees with the rules:
        other hands than the seed deals, an illegal declaration or card, a wrong trick winner or score.
        """
        match = cls(record.rules, record.seed, record.seats)
        for seat, since in zip(record.forfeits, record.forfeit_deals, strict=True):
            match._check_seat(seat)
            match._mark_forfeit(seat, since)  # only ranks and credited totals read it, at the end
        for deal in record.deals:
            where = f"deal {deal.number}"
            if match._phase is Phase.DEAL_OVER:
                match.next_deal()
            if match._phase is Phase.MATCH_OVER:
                raise RecordError(f"{where}: the match was already over")
            expected = (match._deal_number, match._dealer, match._declarer, match._dealt)
            if (deal.number, deal.dealer, deal.declarer, deal.hands) != expected:
                raise RecordError(f"{where}: number, dealer, declarer or hands differ from the seed's deal")
            try:
                match.apply(deal.declaration)
                for number, trick in enumerate(deal.tricks, start=1):
                    if trick.leader != match._current.leader:
                        raise RecordError(
                            f"{where}, trick {number}: led by seat {trick.leader}, not the winner"
                        )
                    # The record keeps talk in the order said, per trick: saying it all before the trick's
                    # first card keeps that order and the per-trick limits.
                    for message in deal.talk:
                        if message.trick == number:
                            match.say(message.seat, message.text)
                    for position, card in enumerate(trick.cards):
                        match.apply(PLAYS[card.index], trick.seat_of(position, match._players))
                    if match._tricks[number - 1] != trick:
                        raise RecordError(f"{where}, trick {number}: recorded winner {trick.winner} is wrong")
            except (IllegalActionError, IndexError) as exc:
                raise RecordError(f"{where}: {exc}") from exc
            if match._deals[-1] != deal:
                raise RecordError(f"{where}: the record's taken, points or talk differ from the rules'")
        if (record.totals, record.ranks, record.complete) != (match.totals, match.ranks(), match.is_over):
            raise RecordError("totals, ranks or completeness differ from the rules'")
        return match

    # -- internals --------------------------------------------------------------------------------------

    def _set_match(self, first: int, pyramids: tuple[Pyramid, ...], forfeited_in: tuple[int, ...]) -> None:
        """The one place the match-wide state is set: by a new match and by :meth:`from_observation`.
        ``forfeited_in`` is per seat the deal it forfeited in, 0 if it has not."""
        self._first_dealer = first
        self._pyramids = pyramids
        self._forfeited_in = forfeited_in
        self._forfeited = tuple(bool(deal) for deal in forfeited_in)
        self._deals = []

    def _mark_forfeit(self, seat: int, deal: int) -> None:
        self._forfeited_in = tuple(deal if s == seat else d for s, d in enumerate(self._forfeited_in))
        self._forfeited = tuple(bool(d) for d in self._forfeited_in)

    def _set_deal(
        self,
        number: int,
        dealt: tuple[tuple[Card, ...], ...],
        *,
        phase: Phase = Phase.DECLARE,
        declaration: Declare | None = None,
        current_trick: Trick | None = None,
        tricks: tuple[Trick, ...] = (),
        talk: tuple[TalkMessage, ...] = (),
    ) -> None:
        """The one place a deal's state is set, for a new deal and for :meth:`from_observation` alike
        (OpenSpiel's games build a state in one constructor path, so a copy cannot forget a field).

        Everything that follows from the arguments is derived here rather than passed in: the dealer and
        declarer from the deal number, the seat to act from the trick in play, the tricks taken from the
        finished tricks, and each seat's talk in this trick (its per-trick limit) from the talk.
        """
        players = self._players
        self._deal_number = number
        self._dealer = (self._first_dealer + number - 1) % players
        self._declarer = declarer = (self._dealer + 1) % players
        self._dealt = dealt
        self._masks = [mask_of(hand) for hand in dealt]
        self._declaration = declaration
        self._current = current = current_trick if current_trick is not None else Trick(declarer, ())
        self._tricks = tricks
        taken = [0] * players
        for trick in tricks:
            if trick.winner is not None:
                taken[trick.winner] += 1
        self._taken = tuple(taken)
        self._talk = talk
        counts = [0] * players
        for message in talk:
            if message.trick == len(tricks) + 1:
                counts[message.seat] += 1
        self._talk_counts = counts
        self._phase = phase
        if phase is Phase.DECLARE:
            self._to_act = declarer
        elif phase is Phase.PLAY:
            self._to_act = (current.leader + len(current.cards)) % players
        else:
            self._to_act = None

    def _start_deal(self, number: int) -> None:
        self._set_deal(number, deal_hands(self.seed, number, self._players))

    def _finish_trick(self, leader: int, cards: tuple[Card, ...]) -> None:
        """Scores a complete trick: its winner takes it and leads the next, or the deal is scored."""
        players = self._players
        assert self._declaration is not None
        winner = (
            leader + trick_winner_index(cards, self._declaration.trump, self.rules.trick_winner)
        ) % players
        self._tricks = (*self._tricks, new_trick(leader, cards, winner))
        taken = list(self._taken)
        taken[winner] += 1
        self._taken = tuple(taken)
        self._current = _LEADING[winner]
        self._talk_counts = [0] * players
        if len(self._tricks) < TRICKS_PER_DEAL:
            self._to_act = winner
        else:
            self._score_deal()

    def _score_deal(self) -> None:
        declaration = self._declaration
        assert declaration is not None
        declarer = self._declarer
        taken = self._taken[declarer]
        pyramids = list(self._pyramids)
        pyramids[declarer] = pyramids[declarer].add(declaration.tricks, taken)
        self._pyramids = tuple(pyramids)
        self._deals.append(
            DealRecord(
                number=self._deal_number,
                dealer=self._dealer,
                declarer=declarer,
                hands=self._dealt,
                declaration=declaration,
                tricks=self._tricks,
                taken=taken,
                points=pyramids[declarer].entries[-1].points,
                talk=self._talk,
            )
        )
        self._to_act = None
        self._phase = Phase.MATCH_OVER if self._deal_number == self.rules.deals else Phase.DEAL_OVER

    def _check_seat(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self._players:
            raise IllegalActionError(f"no seat {seat!r} at a table of {self._players}")

    def _check_talk(self, seat: int, text: object) -> None:
        try:
            self._check_seat(seat)
        except IllegalActionError as exc:
            raise IllegalTalkError(str(exc)) from None
        rules = self.rules
        if rules.talk is Talk.OFF:
            raise IllegalTalkError("table talk is off in this match")
        if self._phase is not Phase.PLAY:
            raise IllegalTalkError(f"table talk is allowed only while cards are played, not in {self._phase}")
        if seat == self._declarer:
            raise IllegalTalkError(f"seat {seat} is the declarer, and the declarer never talks")
        if not isinstance(text, str) or not text or not text.isprintable():
            raise IllegalTalkError(f"seat {seat}: a talk message must be non-empty printable text")
        if len(text) > rules.talk_max_length:
            raise IllegalTalkError(
                f"seat {seat}: talk message of {len(text)} characters, the limit is {rules.talk_max_length}"
            )
        if self._talk_counts[seat] >= rules.talk_max_per_trick:
            raise IllegalTalkError(f"seat {seat}: at most {rules.talk_max_per_trick} talk messages per trick")

    def _add_talk(self, seat: int, text: str) -> None:
        self._talk_counts[seat] += 1
        self._talk = (*self._talk, TalkMessage(seat, len(self._tricks) + 1, text))
