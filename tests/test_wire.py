"""Observations and actions survive the protocol messages exactly; garbage becomes WireError."""

import copy
import dataclasses

import pytest

from pyramid_sdk import Declare, Play, Rules, Suit, wire
from pyramid_sdk.cards import Card
from pyramid_sdk.encoding import (
    ObservationEncoder,
    action_reply,
    action_request,
    legal_actions_field,
    match_id_field,
    time_left_fields,
    varint,
)
from pyramid_sdk.observation import Clock, Observation, Phase
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.wire import (
    ObservationDecoder,
    WireError,
    action_from_wire,
    action_to_wire,
    rules_from_wire,
    rules_to_wire,
)
from support.playthrough import play_random


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
            assert message == reference_message(view)  # what any language's generated code reads
            legal = [action_to_wire(action) for action in view.legal_actions]
            decoded = decoders[seat].decode(message, legal)
            assert decoded == view
            assert view == decoded
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
    obs = ObservationDecoder(Rules()).decode(pb.Observation(hand=["XX"], phase=pb.PHASE_PLAY))
    assert obs.phase is Phase.PLAY  # fields are decoded when read: the good ones still read well
    with pytest.raises(WireError, match="observation field hand: KeyError"):
        obs.hand  # noqa: B018
    with pytest.raises(WireError, match="observation field phase"):
        ObservationDecoder(Rules()).decode(pb.Observation(phase=77)).phase  # noqa: B018


def test_legal_actions_field_merges_into_a_request_as_the_actions_in_order():
    declarations = (Declare(0, Suit.SPADES), Declare(6, Suit.CLUBS))
    plays = (Play(Card.parse("AH")), Play(Card.parse("9S")), Play(Card.parse("TD")))
    for actions in ((), declarations, plays):
        request = pb.ActionRequest(request_id=7)
        request.MergeFromString(legal_actions_field(actions))
        assert [action_from_wire(action) for action in request.legal_actions] == list(actions)
        assert request.request_id == 7


def reference_message(obs: Observation) -> pb.Observation:
    """The observation built field by field with the generated classes, to check the hand-written bytes."""

    def trick(t):
        message = pb.Trick(leader=t.leader, cards=[card.code for card in t.cards])
        if t.winner is not None:
            message.winner = t.winner
        return message

    message = pb.Observation(
        seat=obs.seat,
        phase=pb.Phase.Value(f"PHASE_{obs.phase.name}"),
        deal_number=obs.deal_number,
        dealer=obs.dealer,
        declarer=obs.declarer,
        hand=[card.code for card in obs.hand],
        current_trick=trick(obs.current_trick),
        tricks=[trick(t) for t in obs.tricks],
        taken=obs.taken,
        pyramids=[
            pb.Pyramid(
                entries=[
                    pb.PyramidEntry(declared=e.declared, taken=e.taken, points=e.points) for e in p.entries
                ],
                remaining=p.remaining,
                total=p.total,
            )
            for p in obs.pyramids
        ],
        talk=[pb.TalkMessage(seat=m.seat, trick=m.trick, text=m.text) for m in obs.talk],
        forfeited=obs.forfeited,
    )
    if obs.to_act is not None:
        message.to_act = obs.to_act
    if obs.declaration is not None:
        message.declaration.tricks = obs.declaration.tricks
        message.declaration.trump = pb.Suit.Value(f"SUIT_{obs.declaration.trump.name}")
    return message


def some_observations(players=4):
    views = []
    play_random(Rules(players=players), seed=5, agent_seed=2, visit=lambda match, obs: views.append(obs))
    return views


def test_values_outside_the_one_byte_fast_path_are_encoded_in_full():
    view = some_observations()[30]
    unusual = dataclasses.replace(
        view,
        deal_number=300,
        current_trick=dataclasses.replace(view.current_trick, winner=2),
        taken=(0, 200, 1, 0),
    )
    message = pb.Observation.FromString(ObservationEncoder().serialize(unusual))
    assert message == reference_message(unusual)
    for odd in (
        dataclasses.replace(view, declarer=200, taken=(0, 130, 1, 0)),  # one byte each no longer
        dataclasses.replace(view, forfeited=(False, True)),  # not one per seat
    ):
        assert pb.Observation.FromString(ObservationEncoder().serialize(odd)) == reference_message(odd)
    fresh_declaration = dataclasses.replace(view, declaration=Declare(5, Suit.DIAMONDS))  # not interned
    assert pb.Observation.FromString(ObservationEncoder().serialize(fresh_declaration)) == reference_message(
        fresh_declaration
    )
    assert message.deal_number == 300
    assert message.current_trick.winner == 2


def test_varints_match_protobufs_including_negative_numbers():
    for value in (0, 1, 127, 128, 300, 2**31 - 1, -1, -5, -(2**31)):
        assert pb.PyramidEntry.FromString(b"\x18" + varint(value)).points == value
    assert pb.ActionRequest.FromString(b"\x08" + varint(2**40)).request_id == 2**40


def test_an_action_request_parses_as_the_generated_classes_build_it():
    views = some_observations()
    view, deal_end = views[40], views[24]
    observation, last_deal = ObservationEncoder().serialize(view), ObservationEncoder().serialize(deal_end)
    data = action_request(
        70000,
        match_id_field("league-7 match 3 ü"),
        observation,
        legal_actions_field(view.legal_actions),
        time_left_fields(0, 250),
        last_deal,
    )
    expected = pb.ConnectResponse(
        action_request=pb.ActionRequest(
            request_id=70000,
            match_id="league-7 match 3 ü",
            observation=reference_message(view),
            legal_actions=[action_to_wire(action) for action in view.legal_actions],
            bank_ms=0,
            per_action_ms=250,
            last_deal=reference_message(deal_end),
        )
    )
    assert pb.ConnectResponse.FromString(data) == expected
    no_last_deal = pb.ConnectResponse.FromString(
        action_request(1, match_id_field("m"), observation, b"", time_left_fields(20000, 1000))
    )
    assert not no_last_deal.action_request.HasField("last_deal")
    assert no_last_deal.action_request.bank_ms == 20000


def test_a_play_with_talk_is_encoded_as_its_card():
    talking = Play(Card.parse("QH"), "hi")
    request = pb.ActionRequest.FromString(legal_actions_field([talking, Declare(3, Suit.CLUBS)]))
    assert [action_from_wire(action) for action in request.legal_actions] == [
        Play(Card.parse("QH")),
        Declare(3, Suit.CLUBS),
    ]


def test_a_decoded_observation_behaves_as_the_engines_dataclass():
    view = next(v for v in some_observations() if v.tricks and v.legal_actions)
    message = pb.Observation.FromString(ObservationEncoder().serialize(view))
    legal = [action_to_wire(action) for action in view.legal_actions]
    decoded = ObservationDecoder(view.rules).decode(message, legal)
    assert isinstance(decoded, Observation)
    assert set(wire._LAZY_FIELDS) | {"rules", "legal_actions", "clock"} == set(wire._FIELD_NAMES)
    assert repr(decoded) == repr(view)
    assert dataclasses.astuple(decoded) == dataclasses.astuple(view)
    assert copy.copy(decoded) == view
    assert copy.deepcopy(decoded) == view
    assert dataclasses.replace(decoded, seat=3).seat == 3
    timed = ObservationDecoder(view.rules).decode(message, legal, Clock(0.5, 3.0, 10.0))
    assert timed == view  # the clock is not game state: equality ignores it, as the engine's class does
    assert timed.clock == Clock(0.5, 3.0, 10.0)
    assert "clock=Clock(per_action=0.5" in repr(timed)
    assert decoded.legal_cards == view.legal_cards
    assert decoded.unseen_cards == view.unseen_cards
    decoded.hand = ()  # a bot may scribble on its own copy
    assert decoded.hand == ()
    assert decoded != view
    with pytest.raises(AttributeError, match="no attribute 'hnad'"):
        decoded.hnad  # noqa: B018


def test_the_sdks_reply_parses_as_an_action_reply():
    plays = (Play(Card.parse("TD")), Play(Card.parse("KC"), "going high"), Declare(4, Suit.HEARTS))
    for request_id, action in zip((1, 300, 2**33), plays, strict=True):
        reply = pb.ConnectRequest.FromString(action_reply(request_id, action)).action
        assert reply.request_id == request_id
        assert action_from_wire(reply.action, reply.talk) == action
    empty = pb.ConnectRequest.FromString(action_reply(9, None)).action
    assert empty.request_id == 9
    assert not empty.HasField("action")
    with pytest.raises(TypeError, match="talk must be text"):
        action_reply(1, Play(Card.parse("TD"), 42))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="surrogate"):
        action_reply(1, Play(Card.parse("TD"), "hi \ud800"))


def test_observations_and_legal_actions_decode_from_their_bytes_alone():
    views = some_observations()
    decoder = ObservationDecoder(Rules())
    for view in views[::37]:
        data = ObservationEncoder().serialize(view)
        legal = [action_to_wire(action).SerializeToString() for action in view.legal_actions]
        assert decoder.decode(data, legal) == view
    with pytest.raises(WireError, match="not an Observation message"):
        decoder.decode(b"\xff\xff").hand  # noqa: B018
    with pytest.raises(WireError, match="legal_actions"):
        decoder.decode(b"", [b"\x12\x02ZZ"])


def test_finished_tricks_read_out_of_order_are_each_observations_own():
    views = [v for v in some_observations() if v.seat == 1]
    encoder, decoder = ObservationEncoder(), ObservationDecoder(Rules())
    decoded = [decoder.decode(encoder.serialize(view)) for view in views]
    for obs, view in reversed(list(zip(decoded, views, strict=True))):  # newest first, across deals
        assert obs.tricks == view.tricks
        assert obs.pyramids == view.pyramids
