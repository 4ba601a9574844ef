"""The referee's Ping (a protocol message, not the transport's PING) asks whether the bot itself can
answer now: both SDKs answer it from the loop that runs the bot's code, after the decision it is busy
with, never from a thread of the gRPC library (docs/PROTOCOL.md, "Remote entrants"). Checked with real
bot processes of both SDKs, each thinking a second on a request that a Ping follows at once, against a
stand-in referee on real gRPC that records when the reply and the Pong arrive."""

from __future__ import annotations

import asyncio
import shutil
import sys
import threading
import time
from typing import Any

import grpc
import pytest

from pyramid_sdk import Observation, Rules
from pyramid_sdk.client import CONNECT
from pyramid_sdk.encoding import (
    ObservationEncoder,
    action_request,
    legal_actions_field,
    match_id_field,
    time_left_fields,
)
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.wire import rules_to_wire
from support import ROOT
from support.playthrough import play_random
from support.remote import remote_env, start_bot

THINK = 1.0
"""Seconds each bot thinks on its first decision."""
NODE = shutil.which("node")
BOTS = {
    "thread": [sys.executable, "tests/bots/ponderer.py", f"{THINK:g}"],
    "asyncio": [sys.executable, "tests/bots/ponderer.py", f"{THINK:g}"],
    "node": [str(NODE), "tests/bots/ponderer.js", f"{THINK:g}"],
}


def first_turn() -> Observation:
    seen: list[Observation] = []
    play_random(Rules(), seed=3, agent_seed=4, visit=lambda match, obs: seen.append(obs))
    return next(obs for obs in seen if obs.legal_actions)


class StandIn:
    """A referee for one connection, on its own thread: welcome, a match start, a request, and a Ping
    right behind it; then, once both answers came, the end of the league (OK). ``arrived`` holds each
    answer's kind and the seconds after the Ping was sent."""

    def __init__(self) -> None:
        self.arrived: list[tuple[str, float]] = []
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.server, self.port = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    async def _start(self) -> tuple[grpc.aio.Server, int]:
        service, method = CONNECT.strip("/").split("/")
        handler = grpc.stream_stream_rpc_method_handler(self._connect)
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {method: handler}),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return server, port

    async def _connect(self, request_iterator: object, context: Any) -> None:
        await context.read()  # the hello
        obs = first_turn()
        welcome = pb.Welcome(protocol_version=1, session_id="s", remote=True, max_matches=1)
        await context.write(pb.ConnectResponse(welcome=welcome).SerializeToString())
        start = pb.MatchStart(
            match_id="m",
            seat=obs.seat,
            seat_names=["a", "b", "c", "d"][: Rules().players],
            rules=rules_to_wire(Rules()),
            time_control=pb.TimeControl(per_action_ms=5000, bank_ms=5000),
            seed=1,
        )
        await context.write(pb.ConnectResponse(match_start=start).SerializeToString())
        request = action_request(
            1,
            match_id_field("m"),
            ObservationEncoder().serialize(obs),
            legal_actions_field(obs.legal_actions),
            time_left_fields(5000, 5000),
        )
        await context.write(request)
        await context.write(pb.ConnectResponse(ping=pb.Ping(nonce=7)).SerializeToString())
        pinged = time.monotonic()
        while len(self.arrived) < 2:
            message = pb.ConnectRequest.FromString(await asyncio.wait_for(context.read(), 30))
            kind = message.WhichOneof("kind")
            if kind == "pong":
                assert message.pong.nonce == 7
            self.arrived.append((kind, time.monotonic() - pinged))
        await context.write(
            pb.ConnectResponse(notice=pb.Notice(text="the league is over")).SerializeToString()
        )

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(None), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.mark.parametrize("kind", list(BOTS))
def test_a_ping_is_answered_by_the_bots_own_loop_after_the_decision_it_is_busy_with(tmp_path, kind):
    if kind == "node" and (NODE is None or not (ROOT / "sdk/node/node_modules").is_dir()):
        pytest.skip("needs node and the Node.js SDK's packages (npm ci --prefix sdk/node)")
    referee = StandIn()
    token = tmp_path / "t.token"
    token.write_text("pyr1_" + "x" * 43)
    env = remote_env(f"127.0.0.1:{referee.port}", token, None)
    if kind == "asyncio":
        env["PYRAMID_STREAM"] = "asyncio"
    log = tmp_path / "bot.log"
    bot = start_bot(BOTS[kind], env, log)
    try:
        deadline = time.monotonic() + 60
        while len(referee.arrived) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [answer for answer, _ in referee.arrived] == ["action", "pong"], log.read_text()
        assert referee.arrived[1][1] >= THINK * 0.9, referee.arrived  # not before the bot had thought
        assert f"thinking for {THINK:g}s" in log.read_text()
    finally:
        bot.kill()
        bot.wait(30)
        referee.stop()
