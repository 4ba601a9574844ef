"""Observations and actions survive the protocol messages exactly; garbage becomes WireError."""

import pytest

from playthrough import play_random
from pyramid_sdk import Declare, Play, Rules, Suit
from pyramid_sdk.cards import Card
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.wire import (
    ObservationDecoder,
    ObservationEncoder,
    WireError,
    action_from_wire,
    action_to_wire,
    legal_actions_field,
    rules_from_wire,
    rules_to_wire,
)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_observation_of_a_match_round_trips(players):
    rules = Rules(players=players, talk="open")
    encoders = [ObservationEncoder() for _ in range(players)]
    decoders = [ObservationDecoder(rules) for _ in range(players)]
    seen = 0

    def visit(match, obs):
        nonlocal seen
        for seat in range(players):
            view = match.observation(seat)
            message = pb.Observation.FromString(encoders[seat].serialize(view))
            legal = [action_to_wire(action) for action in view.legal_actions]
            assert decoders[seat].decode(message, legal) == view
            seen += 1

    play_random(rules, seed=players, agent_seed=1, visit=visit)
    assert seen >= players * 16 * players * 13  # every decision, seen from every seat


def test_rules_and_actions_round_trip():
    for rules in (Rules(players=2, trick_winner="highest-rank", talk="off"), Rules(talk_max_per_trick=0)):
        assert rules_from_wire(rules_to_wire(rules)) == rules
    for action in (Declare(0, Suit.SPADES), Declare(6, Suit.CLUBS), Play(Card.parse("TS"))):
        assert action_from_wire(action_to_wire(action)) == action
    assert action_from_wire(pb.Action(card="QH"), talk="hi") == Play(Card.parse("QH"), "hi")


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (pb.Action(), "neither a declaration nor a card"),
        (pb.Action(card="ZZ"), "unknown card"),
        (pb.Action(declare=pb.Declaration(tricks=7, trump=pb.SUIT_HEARTS)), "is not one"),
        (pb.Action(declare=pb.Declaration(tricks=2)), "is not one"),
    ],
)
def test_garbage_actions_are_wire_errors(message, error):
    with pytest.raises(WireError, match=error):
        action_from_wire(message)


def test_garbage_rules_and_observations_are_wire_errors():
    with pytest.raises(WireError, match="rules"):
        rules_from_wire(pb.Rules(players=9))
    with pytest.raises(WireError, match="observation"):
        ObservationDecoder(Rules()).decode(pb.Observation(hand=["XX"]))


def test_legal_actions_field_merges_into_a_request_as_the_actions_in_order():
    declarations = (Declare(0, Suit.SPADES), Declare(6, Suit.CLUBS))
    plays = (Play(Card.parse("AH")), Play(Card.parse("9S")), Play(Card.parse("TD")))
    for actions in ((), declarations, plays):
        request = pb.ActionRequest(request_id=7)
        request.MergeFromString(legal_actions_field(actions))
        assert [action_from_wire(action) for action in request.legal_actions] == list(actions)
        assert request.request_id == 7
