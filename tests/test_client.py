"""The Python SDK's answer to one request, without a network: what it sends for good and bad bots."""

import os
import subprocess
import sys

import pytest

from pyramid_sdk import Bot, Card, Declare, Observation, Play, Rules
from pyramid_sdk.dispatch import Dispatcher
from pyramid_sdk.encoding import (
    ObservationEncoder,
    action_request,
    legal_actions_field,
    match_id_field,
    time_left_fields,
)
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.wire import ObservationDecoder, action_from_wire
from support.playthrough import play_random


class Talker(Bot):
    def __init__(self, talk: object) -> None:
        self.talk = talk

    def declare(self, obs: Observation) -> Declare:
        return obs.legal_declarations[0]

    def play(self, obs: Observation) -> Card | Play:
        return Play(obs.legal_cards[0], self.talk)  # type: ignore[arg-type]


class Raiser(Talker):
    def play(self, obs: Observation) -> Card | Play:
        raise RuntimeError("a bug")


def answer(bot: Bot) -> tuple[pb.ActionReply, Observation]:
    views_seen: list[Observation] = []
    play_random(Rules(), seed=3, agent_seed=4, visit=lambda match, obs: views_seen.append(obs))
    view = next(v for v in views_seen if v.legal_cards)
    data = action_request(
        41,
        match_id_field("m"),
        ObservationEncoder().serialize(view),
        legal_actions_field(view.legal_actions),
        time_left_fields(20000, 1000),
    )
    dispatcher = Dispatcher(bot)
    dispatcher.decoders["m"] = ObservationDecoder(Rules())
    reply = dispatcher.handle(data)
    assert reply is not None
    return pb.ConnectRequest.FromString(reply).action, view


def test_talk_that_cannot_be_sent_drops_the_talk_and_keeps_the_card(capsys):
    for talk in ("lone \ud800 surrogate", 42):
        reply, view = answer(Talker(talk))
        assert reply.request_id == 41
        assert action_from_wire(reply.action) == Play(view.legal_cards[0])
        assert reply.talk == ""
    assert "Traceback" in capsys.readouterr().err


def test_good_talk_travels_with_the_card():
    reply, view = answer(Talker("going low"))
    assert action_from_wire(reply.action, reply.talk) == Play(view.legal_cards[0], "going low")


def test_a_bot_that_raises_sends_a_reply_without_an_action(capsys):
    reply, _ = answer(Raiser(""))
    assert reply.request_id == 41
    assert not reply.HasField("action")
    assert "RuntimeError: a bug" in capsys.readouterr().err


@pytest.mark.slow
def test_the_token_is_read_from_its_pipe_once_and_the_pipe_closed():
    """The launcher passes the token on an inherited pipe; the SDK reads it, closes it, forgets the
    variable, and prefers it to a PYRAMID_TOKEN set by hand."""
    reader, writer = os.pipe()
    os.write(writer, b"from-the-pipe\n")
    os.close(writer)
    code = (
        "import os; from pyramid_sdk.client import read_token; token = read_token(); "
        f"print(token, os.environ.get('PYRAMID_TOKEN_FD'), end=' ');\n"
        f"try:\n    os.fstat({reader}); print('open')\nexcept OSError:\n    print('closed')"
    )
    environment = {**os.environ, "PYRAMID_TOKEN_FD": str(reader), "PYRAMID_TOKEN": "by-hand"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        pass_fds=(reader,),
        capture_output=True,
        text=True,
        check=False,
    )
    os.close(reader)
    assert result.stdout.split() == ["from-the-pipe", "None", "closed"], result.stderr
