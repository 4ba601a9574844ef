import pytest

from pyramid_sdk import (
    QUOTAS,
    Card,
    Pyramid,
    Rules,
    RulesError,
    Suit,
    Talk,
    TrickWinner,
    render_pyramid,
    score,
    trick_winner_index,
)

LED = TrickWinner.LED_SUIT
RANK = TrickWinner.HIGHEST_RANK


def test_defaults_are_the_ones_game_md_names():
    rules = Rules()
    assert (rules.players, rules.trick_winner, rules.talk) == (4, LED, Talk.OPEN)
    assert [Rules(players=n).deals for n in (2, 3, 4)] == [32, 48, 64]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"players": 1}, "players"),
        ({"players": 5}, "players"),
        ({"players": "4"}, "players"),
        ({"players": True}, "players"),
        ({"trick_winner": "highest"}, "trick_winner"),
        ({"talk": "loud"}, "talk"),
        ({"talk_max_length": 0}, "talk_max_length"),
        ({"talk_max_per_trick": -1}, "talk_max_per_trick"),
        ({"talk_max_per_trick": 1.5}, "talk_max_per_trick"),
    ],
)
def test_invalid_rule_values_are_rejected_naming_the_field(kwargs, field):
    with pytest.raises(RulesError, match=f"^{field}: ") as caught:
        Rules(**kwargs)
    assert caught.value.field == field
    assert str(caught.value) == f"{field}: {caught.value.problem}"


def test_rules_read_strings_and_round_trip_through_a_dict():
    rules = Rules.from_dict({"players": 3, "trick_winner": "highest-rank", "talk": "defenders"})
    assert rules.trick_winner is RANK
    assert rules.talk is Talk.DEFENDERS
    assert Rules.from_dict(rules.to_dict()) == rules
    assert rules.to_dict()["trick_winner"] == "highest-rank"
    with pytest.raises(RulesError, match=r"^trump: unknown rule") as caught:
        Rules.from_dict({"trump": "S"})
    assert caught.value.field == "trump"


def test_score_table():
    assert [score(3, 3 + off) for off in range(4)] == [10, 8, 6, 4]
    assert [score(0, taken) for taken in range(7)] == [10, 8, 6, 4, 2, 0, -2]
    assert score(6, 0) == -2
    assert score(5, 4) == 8


def test_quotas_make_16_declarations():
    assert QUOTAS == (1, 2, 3, 4, 3, 2, 1)
    assert sum(QUOTAS) == 16


def test_worked_example_from_the_rule_texts():
    pyramid = Pyramid().add(6, 4).add(5, 4).add(5, 0).add(3, 3)
    assert [entry.points for entry in pyramid.entries] == [6, 8, 0, 10]
    assert pyramid.total == 24
    # Still open: 0 once, 1 twice, 2 three times, 3 three times, 4 three times; 5 and 6 used up.
    assert pyramid.remaining == (1, 2, 3, 3, 3, 0, 0)
    assert pyramid.open_numbers == (0, 1, 2, 3, 4)
    assert not pyramid.can_declare(5)
    assert not pyramid.can_declare(6)
    assert not pyramid.full
    drawing = render_pyramid(pyramid, "North")
    assert drawing.splitlines()[0] == "North — total 24"
    assert "3 3 3 3" in drawing


def cards(text):
    return Card.parse_many(text)


@pytest.mark.parametrize(
    ("played", "trump", "mode", "winner"),
    [
        ("9S AH TS", Suit.CLUBS, LED, 2),  # off-suit ace never wins under led-suit
        ("KS AS 9S", Suit.CLUBS, LED, 1),
        ("AS 9C KS", Suit.CLUBS, LED, 1),  # any trump beats the led suit
        ("AS 9C TC QD", Suit.CLUBS, LED, 2),  # highest trump
        ("9H AS KD QC", Suit.HEARTS, LED, 0),  # a led trump
        ("9S AH TS", Suit.CLUBS, RANK, 1),  # highest rank of any suit
        ("KS KH 9D", Suit.CLUBS, RANK, 0),  # equal ranks: the earliest played
        ("QD KH KS", Suit.CLUBS, RANK, 1),
        ("AS 9C", Suit.CLUBS, RANK, 1),  # trump still beats the highest rank
        ("9S TS", Suit.CLUBS, RANK, 1),
    ],
)
def test_trick_winner(played, trump, mode, winner):
    assert trick_winner_index(cards(played), trump, mode) == winner
