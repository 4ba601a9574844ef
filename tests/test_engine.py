"""Hand-made cases for every rule the engine enforces."""

import itertools
import random

import pytest

from pyramid_sdk import (
    DECK,
    Card,
    Declare,
    IllegalActionError,
    IllegalTalkError,
    InvalidActionError,
    MalformedActionError,
    Match,
    MatchRecord,
    NotYourTurnError,
    Phase,
    Play,
    RecordError,
    Rules,
    Suit,
    Talk,
    TrickWinner,
    deal_hands,
    parse_action,
)


def play_card(match, code, talk=None):
    match.apply(Play(Card.parse(code), talk))


def arranged(players=4, seed=1, **rules):
    """A match whose first deal has hands chosen by the test: seat s holds HANDS[(s - declarer) % n]."""
    match = Match(Rules(players=players, **rules), seed=seed)
    hands = [None] * players
    for offset in range(players):
        hands[(match.declarer + offset) % players] = Card.parse_many(HANDS[offset])
    match.arrange(hands)
    return match


# Declarer's hand first, then the defenders' in clockwise order.
HANDS = [
    "AS KS QS JS TS 9S",
    "AH KH QH JH TH 9H",
    "AD KD QD JD TD 9D",
    "AC KC QC JC TC 9C",
]


def test_first_deal_declarer_is_left_of_dealer_and_leads():
    match = Match(Rules(players=3), seed=5)
    assert match.phase is Phase.DECLARE
    assert match.declarer == (match.dealer + 1) % 3
    assert match.to_act == match.declarer
    match.apply(Declare(2, Suit.HEARTS))
    assert match.phase is Phase.PLAY
    assert match.to_act == match.declarer
    assert match.observation(0).current_trick.leader == match.declarer


def test_legal_declarations_are_open_numbers_times_four_suits():
    match = Match(Rules(players=2), seed=3)
    legal = match.legal_actions()
    assert len(legal) == 28
    assert legal[0] == Declare(0, Suit.SPADES)
    assert set(legal) == {Declare(n, suit) for n in range(7) for suit in Suit}
    assert match.legal_actions((match.to_act + 1) % 2) == ()


def test_declaring_a_used_up_number_is_illegal():
    match = Match(Rules(players=2), seed=3)
    first = match.declarer
    match.apply(Declare(6, Suit.SPADES))
    finish_deal(match)
    match.next_deal()
    match.apply(match.default_action())  # the other seat declares
    finish_deal(match)
    match.next_deal()
    assert match.declarer == first
    assert Declare(6, Suit.SPADES) not in match.legal_actions()
    assert len(match.legal_actions()) == 24
    with pytest.raises(IllegalActionError, match="cannot declare 6S: its open numbers are 0 1 2 3 4 5"):
        match.apply(Declare(6, Suit.SPADES))
    assert match.phase is Phase.DECLARE


def finish_deal(match):
    while match.phase is Phase.PLAY:
        match.apply(match.default_action())


def test_any_card_of_the_hand_is_legal_no_duty_to_follow_suit():
    match = arranged()
    match.apply(Declare(3, Suit.CLUBS))
    play_card(match, "9S")
    assert {str(a) for a in match.legal_actions()} == set(HANDS[1].split())


def test_illegal_actions_raise_typed_errors_and_change_nothing():
    match = arranged()
    declarer = match.declarer
    with pytest.raises(IllegalActionError, match="must declare"):
        play_card(match, "AS")
    with pytest.raises(NotYourTurnError):
        match.apply(Declare(3, Suit.CLUBS), seat=(declarer + 1) % 4)
    match.apply(Declare(3, Suit.CLUBS))
    before = match.observation(declarer)
    with pytest.raises(IllegalActionError, match="cannot play AH: it is not in the seat's hand"):
        play_card(match, "AH")
    with pytest.raises(IllegalActionError, match="must play a card"):
        match.apply(Declare(2, Suit.CLUBS))
    with pytest.raises(IllegalActionError):
        match.apply(Play("AS"))  # a string is not a card
    assert set(before.hand) == set(Card.parse_many(HANDS[0]))
    finish_deal(match)
    with pytest.raises(IllegalActionError, match="no seat acts in phase deal-over"):
        match.apply(Play(Card.parse("AS")))


@pytest.mark.parametrize(
    "action",
    [
        Declare(3.0, Suit.CLUBS),  # a float: once a TypeError deep in the engine, a void match
        Declare(True, Suit.CLUBS),  # a bool: once accepted as a declaration of 1
        Declare("3", Suit.CLUBS),
        Declare(None, Suit.CLUBS),
        Declare(3, 3),  # a number where the Suit belongs
        Declare(3, "C"),
    ],
    ids=["float", "bool", "str", "none", "int-trump", "str-trump"],
)
def test_a_wrongly_typed_declaration_is_malformed_and_changes_nothing(action):
    match = arranged()
    declarer = match.declarer
    before = match.observation(declarer)
    with pytest.raises(MalformedActionError, match=r"a declaration is a whole number of tricks \(an int\)"):
        match.apply(action)
    assert match.observation(declarer) == before
    assert match.phase is Phase.DECLARE
    assert match.pyramids[declarer].remaining == (1, 2, 3, 4, 3, 2, 1)
    assert issubclass(MalformedActionError, IllegalActionError)  # callers catching the rules' error see it


@pytest.mark.parametrize("card", ["AS", 0, None, 1.5], ids=["code", "int", "none", "float"])
def test_a_play_of_something_that_is_no_card_is_malformed_and_changes_nothing(card):
    match = arranged()
    match.apply(Declare(3, Suit.CLUBS))
    before = match.observation(match.declarer)
    with pytest.raises(MalformedActionError, match="a play is a Card, not "):
        match.apply(Play(card))
    assert match.observation(match.declarer) == before
    play_card(match, "AS")  # the real card is still there to play


def test_an_error_message_never_raises_even_for_an_object_whose_repr_does():
    class Unprintable:
        def __repr__(self):
            raise RuntimeError("no repr")

    match = arranged()
    with pytest.raises(IllegalActionError, match="must declare tricks and trump, not a Unprintable"):
        match.apply(Unprintable())
    match.apply(Declare(3, Suit.CLUBS))
    with pytest.raises(MalformedActionError, match="a play is a Card, not a Unprintable"):
        match.apply(Play(Unprintable()))


def test_trick_winner_takes_the_trick_and_leads_next():
    match = arranged()
    d = match.declarer
    match.apply(Declare(1, Suit.CLUBS))
    for code in ("AS", "AH", "AD", "9C"):  # the lowest trump beats three aces
        play_card(match, code)
    obs = match.observation(d)
    assert obs.tricks[0].winner == (d + 3) % 4
    assert obs.taken[(d + 3) % 4] == 1
    assert match.to_act == (d + 3) % 4
    assert obs.current_trick.leader == (d + 3) % 4
    assert obs.current_trick.cards == ()


def test_led_suit_variant_off_suit_never_wins():
    match = arranged(trick_winner=TrickWinner.LED_SUIT)
    d = match.declarer
    match.apply(Declare(1, Suit.CLUBS))
    for code in ("9S", "AH", "AD", "AC"):
        play_card(match, code)
    assert match.observation(0).tricks[0].winner == (d + 3) % 4
    for code in ("KC", "KS", "KH", "KD"):  # clubs lead: the declarer's KS cannot win
        play_card(match, code)
    assert match.observation(0).tricks[1].winner == (d + 3) % 4


def test_highest_rank_variant_off_suit_can_win_and_ties_go_to_the_earliest():
    match = Match(Rules(players=2, trick_winner=TrickWinner.HIGHEST_RANK), seed=1)
    d = match.declarer
    hands = [None, None]
    hands[d] = Card.parse_many("9S KS 9H TH JH QH")
    hands[1 - d] = Card.parse_many("KD AD 9D TD JD QD")
    match.arrange(hands)
    match.apply(Declare(0, Suit.CLUBS))
    play_card(match, "KS")
    play_card(match, "KD")  # equal rank, played later: the leader keeps the trick
    assert match.observation(0).tricks[0].winner == d
    play_card(match, "9S")
    play_card(match, "AD")  # a higher rank of another suit wins
    assert match.observation(0).tricks[1].winner == 1 - d


def test_a_deal_has_six_tricks_and_scores_only_the_declarer():
    match = arranged()
    d = match.declarer
    match.apply(Declare(6, Suit.SPADES))
    match.play_out(until=Phase.DEAL_OVER)  # the declarer holds all the spades (trumps): every trick his
    assert match.phase is Phase.DEAL_OVER
    assert match.to_act is None
    assert match.legal_actions() == ()
    record = match.record()
    deal = record.deals[0]
    assert (deal.number, deal.declarer, deal.taken, deal.points) == (1, d, 6, 10)
    assert len(deal.tricks) == 6
    assert match.pyramids[d].total == 10
    assert [p.total for s, p in enumerate(match.pyramids) if s != d] == [0, 0, 0]
    dealer = match.dealer
    match.next_deal()
    assert match.dealer == (dealer + 1) % 4
    assert match.declarer == (d + 1) % 4
    assert match.deal_number == 2


def test_missing_by_five_scores_zero():
    match = arranged()
    d = match.declarer
    match.apply(Declare(5, Suit.HEARTS))  # the declarer holds no trump, every defender outranks him
    match.play_out(until=Phase.DEAL_OVER)
    deal = match.record().deals[0]
    assert deal.taken == 0
    assert deal.points == 0
    assert match.pyramids[d].entries[0].points == 0


def test_next_deal_only_between_deals():
    match = Match(seed=1)
    with pytest.raises(IllegalActionError, match="next_deal"):
        match.next_deal()


def hand_written_play_out(match, choose=None):
    """The loop :meth:`Match.play_out` replaced, as callers wrote it: what play_out must equal."""
    while match.phase is not Phase.MATCH_OVER:
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        else:
            match.apply(choose(match, match.to_act) if choose else match.default_action())


def random_choice(agent_seed):
    rng = random.Random(agent_seed)
    return lambda match, seat: rng.choice(match.legal_actions(seat))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_play_out_plays_as_the_hand_written_loop_and_replays_exactly(players):
    rules = Rules(players=players, trick_winner=TrickWinner.HIGHEST_RANK)
    records = []
    for agent_seed in (None, 5):
        looped, played, again = (Match(rules, seed=players) for _ in range(3))
        hand_written_play_out(looped, random_choice(agent_seed) if agent_seed else None)
        played.play_out(random_choice(agent_seed) if agent_seed else None)
        again.play_out(random_choice(agent_seed) if agent_seed else None)
        assert played.is_over
        assert played.record() == looped.record() == again.record()
        assert Match.replay(played.record()).record() == played.record()
        records.append(played.record())
    assert records[0] != records[1]  # the chooser's choices were played, not the default actions


def test_play_out_stops_when_the_match_next_enters_until():
    match = Match(Rules(players=2), seed=3)
    match.play_out(until=Phase.DEAL_OVER)
    assert (match.phase, match.deal_number, len(match.record().deals)) == (Phase.DEAL_OVER, 1, 1)
    match.play_out(until=Phase.DEAL_OVER)  # standing there already: on to the end of the next deal
    assert (match.phase, match.deal_number, len(match.record().deals)) == (Phase.DEAL_OVER, 2, 2)
    match.play_out(until=Phase.DECLARE)
    assert (match.phase, match.deal_number, match.declaration) == (Phase.DECLARE, 3, None)
    match.play_out(until=Phase.PLAY)
    assert (match.phase, match.deal_number, len(match.hand(match.to_act))) == (Phase.PLAY, 3, 6)
    match.play_out(until=Phase.PLAY)  # a card played in PLAY does not enter it: the next declaration
    assert (match.phase, match.deal_number, len(match.hand(match.to_act))) == (Phase.PLAY, 4, 6)
    for _ in range(40):  # past the last deal: the end of the match stops every call
        match.play_out(until=Phase.DEAL_OVER)
    assert (match.phase, match.deal_number, len(match.record().deals)) == (Phase.MATCH_OVER, 32, 32)
    whole = Match(Rules(players=2), seed=3)
    whole.play_out()
    assert whole.record() == match.record()


def test_play_out_asks_for_the_seat_to_act_and_refuses_an_illegal_choice():
    match = Match(Rules(players=3), seed=6)
    asked = []

    def choose(seen, seat):
        assert seen is match
        assert seat == match.to_act
        asked.append(seat)
        return match.default_action()

    match.play_out(choose, until=Phase.DEAL_OVER)
    assert asked == [seat for _, seat, _ in actions_of(match.record().deals[0], 3)]
    match.next_deal()
    before = match.record()
    with pytest.raises(IllegalActionError, match="must declare"):
        match.play_out(lambda seen, seat: Play(match.hand(seat)[0]))
    assert match.record() == before
    assert match.phase is Phase.DECLARE


def actions_of(deal, players):
    """``(trick, seat, action)`` of every decision of ``deal`` in play order, the declaration first."""
    actions = [(0, deal.declarer, deal.declaration)]
    for number, trick in enumerate(deal.tricks, start=1):
        actions += [(number, trick.seat_of(i, players), Play(card)) for i, card in enumerate(trick.cards)]
    return actions


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_match_is_16_deals_per_player_and_fills_every_pyramid(players):
    match = Match(Rules(players=players), seed=11)
    dealers = []
    while not match.is_over:
        dealers.append(match.dealer)
        match.play_out(until=Phase.DECLARE)
    assert len(dealers) == 16 * players
    assert all(b == (a + 1) % players for a, b in itertools.pairwise(dealers))
    record = match.record()
    assert record.complete
    assert len(record.deals) == 16 * players
    for pyramid in match.pyramids:
        assert pyramid.full
        assert sorted(e.declared for e in pyramid.entries) == [0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6]
    assert record.totals == tuple(sum(e.points for e in p.entries) for p in match.pyramids)
    with pytest.raises(IllegalActionError):
        match.next_deal()


def test_ranks_share_ties_and_forfeits_rank_last():
    match = Match(Rules(players=4), seed=2)
    match.play_out()
    totals = match.totals
    ranks = match.ranks()
    for a in range(4):
        for b in range(4):
            if totals[a] > totals[b]:
                assert ranks[a] < ranks[b]
            if totals[a] == totals[b]:
                assert ranks[a] == ranks[b]
    best = max(range(4), key=lambda s: totals[s])
    match.forfeit(best)
    assert match.ranks()[best] == 4
    assert match.record().forfeits == (best,)
    assert 1 in match.ranks()


def forfeiting(match, plan):
    """Plays ``match`` out by default actions, forfeiting each seat of ``plan`` (seat -> deal) when that
    deal is reached, before its declaration."""
    while not match.is_over:
        for seat, deal in plan.items():
            if match.deal_number == deal:
                match.forfeit(seat)
        match.play_out(until=Phase.DECLARE)
    return match.record()


def test_a_forfeited_seat_keeps_what_it_made_and_gets_the_worst_score_after():
    plain = Match(Rules(players=3), seed=4)
    plain.play_out()
    record = forfeiting(Match(Rules(players=3), seed=4), {1: 20})
    assert record.totals == plain.totals  # the table played the same: the autopilot is the default action
    assert (record.forfeits, record.forfeit_deals) == ((1,), (20,))
    own = sum(d.points for d in record.deals if d.declarer == 1 and d.number < 20)
    worst = {0: -2, 1: 0, 2: 2, 3: 4, 4: 2, 5: 0, 6: -2}  # docs/RULES.md, "Forfeits"
    rest = sum(worst[d.declaration.tricks] for d in record.deals if d.declarer == 1 and d.number >= 20)
    assert record.credited_totals == (record.totals[0], own + rest, record.totals[2])
    assert record.credited_totals[1] < record.totals[1]
    assert [record.on_autopilot(d) for d in record.deals] == [
        d.declarer == 1 and d.number >= 20 for d in record.deals
    ]
    assert record.ranks[1] == 3


def test_a_seat_that_forfeits_at_once_is_credited_24_whatever_it_holds():
    for seed in range(5):
        record = forfeiting(Match(Rules(players=4), seed=seed), {2: 1})
        assert record.credited_totals[2] == 24
        assert record.totals[2] > 24


def test_forfeited_seats_rank_among_themselves_by_credited_total():
    record = forfeiting(Match(Rules(players=4), seed=0), {0: 1, 1: 40})
    assert record.totals[:2] == (132, 130)  # with the autopilot's points, seat 0 would rank ahead
    assert record.credited_totals[:2] == (24, 88)
    assert record.ranks == (4, 3, 1, 2)


def test_forfeiting_again_keeps_the_first_deal():
    match = Match(Rules(players=2), seed=1)
    match.forfeit(0)
    match.play_out()
    match.forfeit(0)
    assert match.record().forfeit_deals == (1,)


def test_forfeit_deals_replay_and_read_back():
    record = forfeiting(Match(Rules(players=4), seed=8), {3: 17, 1: 50})
    assert (record.forfeits, record.forfeit_deals) == ((1, 3), (50, 17))
    assert MatchRecord.from_json(record.to_json()) == record
    assert Match.replay(record).record() == record


def test_a_record_from_before_forfeit_deals_takes_them_from_the_faults():
    record = forfeiting(Match(Rules(players=2), seed=8), {1: 12})
    old = record.to_dict()
    del old["forfeit_deals"]
    faults = [{"seat": 1, "deal": 9, "kind": "timeout"}, {"seat": 1, "deal": 12, "kind": "disconnect"}]
    assert MatchRecord.from_dict({**old, "faults": faults}) == record
    assert MatchRecord.from_dict(old).forfeit_deals == (1,)  # no faults to go by: as if from the start
    with pytest.raises(RecordError, match="forfeit_deals"):
        MatchRecord.from_dict({**old, "forfeit_deals": []})


def test_default_action_is_legal_and_deterministic():
    a, b = Match(seed=9), Match(seed=9)
    for _ in range(200):
        if a.phase is Phase.DEAL_OVER:
            a.next_deal()
            b.next_deal()
            continue
        action = a.default_action()
        assert action in a.legal_actions()
        assert action == b.default_action()
        a.apply(action)
        b.apply(action)
    with pytest.raises(NotYourTurnError):
        a.default_action((a.to_act + 1) % 4)


def test_default_play_is_the_lowest_card_by_rank_then_suit():
    match = arranged(players=2)
    match.apply(Declare(2, Suit.HEARTS))
    assert match.default_action() == Play(Card.parse("9S"))


def test_same_seed_same_hands_per_seat_whatever_the_players():
    four = deal_hands(77, 5, 4)
    assert deal_hands(77, 5, 4) == four
    assert deal_hands(77, 5, 2) == four[:2]
    assert deal_hands(78, 5, 4) != four
    assert deal_hands(77, 6, 4) != four
    assert len({card for hand in four for card in hand}) == 24
    two = deal_hands(77, 5, 2)
    assert len({card for hand in two for card in hand}) == 12  # the other 12 are set aside
    a, b = Match(Rules(players=3), seed=123, seats=["x", "y", "z"]), Match(Rules(players=3), seed=123)
    assert [a.hand(s) for s in range(3)] == [b.hand(s) for s in range(3)]
    assert a.dealer == b.dealer


def test_first_dealer_is_drawn_from_the_seed():
    dealers = {Match(Rules(players=4), seed=seed).dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3}


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="seed"):
        Match(seed=-1)
    with pytest.raises(ValueError, match="seats"):
        Match(Rules(players=2), seats=["a"])
    match = Match(Rules(players=2))
    with pytest.raises(ValueError, match="distinct"):
        match.arrange([Card.parse_many("9S TS JS QS KS AS")] * 2)


# -- table talk ------------------------------------------------------------------------------------------


def test_open_talk_is_seen_by_everyone_and_recorded():
    match = arranged()
    d = match.declarer
    match.apply(Declare(3, Suit.CLUBS))
    match.say((d + 2) % 4, "I hold the diamonds")
    play_card(match, "9S")
    play_card(match, "9H", talk="low heart from me")
    for seat in range(4):
        texts = [m.text for m in match.observation(seat).talk]
        assert texts == ["I hold the diamonds", "low heart from me"]
    message = match.observation(d).talk[1]
    assert (message.seat, message.trick) == ((d + 1) % 4, 1)
    finish_deal(match)
    assert [m.text for m in match.record().deals[0].talk] == texts


def test_defenders_talk_is_hidden_from_the_declarer():
    match = arranged(talk=Talk.DEFENDERS)
    d = match.declarer
    match.apply(Declare(3, Suit.CLUBS))
    match.say((d + 1) % 4, "kill the spades")
    assert match.observation(d).talk == ()
    assert [m.text for m in match.observation((d + 3) % 4).talk] == ["kill the spades"]


def test_talk_off_and_the_declarer_never_talks():
    match = arranged(talk=Talk.OFF)
    d = match.declarer
    match.apply(Declare(3, Suit.CLUBS))
    with pytest.raises(IllegalTalkError, match="off"):
        match.say((d + 1) % 4, "hi")
    match = arranged()
    d = match.declarer
    with pytest.raises(IllegalTalkError, match="only while cards are played"):
        match.say((d + 1) % 4, "hi")
    match.apply(Declare(3, Suit.CLUBS))
    with pytest.raises(IllegalTalkError, match="declarer never talks"):
        match.say(d, "hi")
    with pytest.raises(IllegalTalkError, match="declarer never talks"):
        play_card(match, "9S", talk="hi")
    assert match.to_act == d  # the card was not played either


def test_talk_length_printability_and_count_limits():
    match = arranged(talk_max_length=10, talk_max_per_trick=2)
    d = match.declarer
    defender = (d + 1) % 4
    match.apply(Declare(3, Suit.CLUBS))
    with pytest.raises(IllegalTalkError, match="11 characters, the limit is 10"):
        match.say(defender, "x" * 11)
    for bad in ("", "bell\x07", "line\nbreak", 42):
        with pytest.raises(IllegalTalkError, match="printable"):
            match.say(defender, bad)
    match.say(defender, "one")
    match.say(defender, "two")
    with pytest.raises(IllegalTalkError, match="at most 2 talk messages per trick"):
        match.say(defender, "three")
    play_card(match, "9S")
    with pytest.raises(IllegalTalkError):  # the whole action is refused, the card stays in hand
        play_card(match, "9H", talk="three")
    assert Card.parse("9H") in match.hand(defender)
    play_card(match, "9H")
    play_card(match, "9D")
    play_card(match, "AC")
    match.say(defender, "new trick")  # the count starts again
    with pytest.raises(IllegalTalkError, match="no seat"):
        match.say(7, "who?")


# -- observation ---------------------------------------------------------------------------------------


def test_observation_holds_only_what_the_seat_may_know():
    match = arranged()
    d = match.declarer
    match.apply(Declare(2, Suit.DIAMONDS))
    play_card(match, "AS")
    obs = match.observation((d + 2) % 4)
    assert obs.hand == tuple(sorted(Card.parse_many(HANDS[2])))
    assert obs.declaration == Declare(2, Suit.DIAMONDS)
    assert obs.trump is Suit.DIAMONDS
    assert obs.declared == 2
    assert obs.current_trick.cards == (Card.parse("AS"),)
    assert obs.legal_actions == ()
    assert not obs.my_turn
    assert not obs.is_declarer
    assert obs.played_cards == {Card.parse("AS")}
    assert len(obs.unseen_cards) == 24 - 6 - 1
    assert obs.hand_size(d) == 5
    assert obs.hand_size((d + 1) % 4) == 6
    mover = match.observation((d + 1) % 4)
    assert mover.my_turn
    assert mover.legal_cards == tuple(sorted(Card.parse_many(HANDS[1])))
    assert obs.phase is Phase.PLAY
    assert obs.deal_number == 1
    assert obs.players == 4
    assert obs.totals == (0, 0, 0, 0)
    assert obs.my_pyramid.remaining == (1, 2, 3, 4, 3, 2, 1)


def test_declarer_observation_offers_declarations():
    match = Match(seed=4)
    obs = match.observation(match.declarer)
    assert obs.legal_declarations == obs.legal_actions
    assert obs.legal_cards == ()
    assert len(obs.hand) == 6


# -- record --------------------------------------------------------------------------------------------


def test_record_round_trips_through_json_and_replays():
    match = Match(Rules(players=3, talk=Talk.DEFENDERS), seed=21, seats=["ann", "bob", "cy"])

    def choose(m, seat):
        action = m.default_action()
        if isinstance(action, Play) and m.to_act != m.declarer and m.observation(0).tricks_left == 3:
            return Play(action.card, "hold on")
        return action

    match.play_out(choose)
    record = match.record()
    text = record.to_json()
    again = MatchRecord.from_json(text)
    assert again == record
    assert again.to_json() == text
    assert Match.replay(again).record() == record


def test_replay_rejects_a_tampered_record():
    match = Match(Rules(players=2), seed=8)
    match.play_out()
    data = match.record().to_dict()
    data["deals"][3]["points"] += 2
    with pytest.raises(RecordError, match="deal 4"):
        Match.replay(MatchRecord.from_dict(data))
    data = match.record().to_dict()
    data["deals"][0]["tricks"][0]["winner"] ^= 1
    with pytest.raises(RecordError, match="deal 1, trick 1"):
        Match.replay(MatchRecord.from_dict(data))
    data = match.record().to_dict()
    data["deals"][2]["hands"][0], data["deals"][2]["hands"][1] = (
        data["deals"][2]["hands"][1],
        data["deals"][2]["hands"][0],
    )
    with pytest.raises(RecordError, match="deal 3: number, dealer, declarer or hands"):
        Match.replay(MatchRecord.from_dict(data))
    with pytest.raises(RecordError, match="not a match record"):
        MatchRecord.from_json("{}")
    with pytest.raises(RecordError, match="not a match record"):
        MatchRecord.from_json("[")


def test_parse_action():
    assert parse_action("0s") == Declare(0, Suit.SPADES)
    assert parse_action("AS") == Play(DECK[5])
    # Text that is no action is not an illegal action: a different error, neither a subclass of the other.
    for text in ("7S", "XY", "", "3X"):
        with pytest.raises(InvalidActionError, match="unknown action") as caught:
            parse_action(text)
        assert not isinstance(caught.value, IllegalActionError)
    assert not issubclass(IllegalActionError, InvalidActionError)


def test_from_observation_simulates_the_rest_of_the_deal():
    match = Match(Rules(players=3), seed=31)
    match.apply(Declare(2, Suit.SPADES))
    match.apply(match.default_action())
    seat = match.to_act
    obs = match.observation(seat)
    sim = Match.from_observation(obs, [match.hand(s) for s in range(3)])
    assert sim.observation(seat) == obs
    sim.play_out(until=Phase.DEAL_OVER)  # the same hands, so the same default actions
    match.play_out(until=Phase.DEAL_OVER)
    assert sim.observation(seat) == match.observation(seat)
    with pytest.raises(ValueError, match="nothing to simulate"):
        Match.from_observation(match.observation(0), [(), (), ()])
    fresh = Match(Rules(players=3), seed=31)
    with pytest.raises(ValueError, match="observing seat"):
        Match.from_observation(fresh.observation(0), [(), (), ()])
