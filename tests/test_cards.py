import copy
import pickle
import random

import pytest

from pyramid_sdk import DECK, Card, CardError, Rank, Suit, format_cards


def test_deck_has_24_distinct_cards_in_suit_then_rank_order():
    assert len(DECK) == 24
    assert len({card.code for card in DECK}) == 24
    assert format_cards(DECK[:7]) == "9S TS JS QS KS AS 9H"
    assert [card.index for card in DECK] == list(range(24))
    shuffled = list(DECK)
    random.Random(3).shuffle(shuffled)
    assert sorted(shuffled) == list(DECK)


@pytest.mark.parametrize("card", DECK, ids=lambda card: card.code)
def test_every_code_and_human_form_parses_back_to_the_same_card(card):
    assert Card.parse(card.code) is card
    assert Card.parse(card.human) is card
    assert Card.parse(card.code.lower()) is card
    assert Card.of(card.rank, card.suit) is card
    assert Card.from_index(card.index) is card
    assert str(card) == card.code


def test_human_form_uses_suit_symbols_and_ten_as_10():
    assert Card.parse("TS").human == "10♠"
    assert Card.parse("AH").human == "A♥"
    assert Card.parse("9D").human == "9♦"
    assert Card.parse("QC").human == "Q♣"
    assert Card.parse("10♠") is Card.parse("TS")
    assert Card.parse(" 10s ") is Card.parse("TS")


def test_rank_and_suit_order():
    assert list(Rank) == [Rank.NINE, Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.ACE]
    assert Rank.NINE < Rank.TEN < Rank.ACE
    assert [suit.code for suit in Suit] == ["S", "H", "D", "C"]
    assert Card.parse("AS") < Card.parse("9H")
    assert Card.parse("KS").rank < Card.parse("AS").rank


@pytest.mark.parametrize("bad", ["", "8S", "1S", "AX", "TSS", "S9", "10", "AS KS", "ZZ"])
def test_bad_codes_raise_a_clear_value_error(bad):
    with pytest.raises(CardError, match="unknown card") as info:
        Card.parse(bad)
    assert isinstance(info.value, ValueError)
    assert repr(bad) in str(info.value)


def test_bad_rank_and_suit_codes():
    with pytest.raises(CardError, match="unknown rank"):
        Rank.parse("8")
    with pytest.raises(CardError, match="unknown suit"):
        Suit.parse("X")
    with pytest.raises(CardError, match="out of range"):
        Card.from_index(24)


def test_cards_are_unique_objects_even_through_copy_and_pickle():
    card = Card.parse("JD")
    assert copy.copy(card) is card
    assert copy.deepcopy([card])[0] is card
    assert pickle.loads(pickle.dumps(card)) is card
    with pytest.raises(TypeError):
        Card(Rank.JACK, Suit.DIAMONDS)


def test_parse_many_accepts_spaces_and_commas():
    assert Card.parse_many("9S, TS JS") == (Card.parse("9S"), Card.parse("TS"), Card.parse("JS"))
    assert format_cards(Card.parse_many("TS AH"), human=True) == "10♠ A♥"
