"""docs/PROTOCOL.md states what the code does: the environment a bot starts with, the statuses a stream
can end with, the limits, request ids across matches. Each claim is checked against a real referee."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import grpc
import pytest

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from referee.match.bots import BotSpec
from referee.match.outcome import MatchStatus
from referee.match.playing import LocalSeat, RemoteSeat, play_match
from referee.match.sandbox import SandboxMode, resolve_mode
from referee.match.server import MAX_TRANSPORT_BYTES, SERVER_OPTIONS, create_server
from referee.match.sessions import MAX_MESSAGE_BYTES, SessionRegistry
from referee.match.setup import open_table
from sample_bots.random_bot import RandomBot
from support import ROOT
from support.arena import PY, play

PROTOCOL = (ROOT / "docs/PROTOCOL.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = PROTOCOL.index(f"\n## {title}")
    end = PROTOCOL.find("\n## ", start + 1)
    return PROTOCOL[start:end]


def documented_variables() -> set[str]:
    table = section("Shape").split("| variable | value |", 1)[1].split("\n\n", 1)[0]
    names = set()
    for row in table.splitlines()[2:]:
        names.update(re.findall(r"`([A-Z_]+)`", row.split("|")[1]))
    return names


@pytest.mark.slow
def test_a_bot_gets_exactly_the_documented_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://proxy.invalid:3128")  # the referee's, not the bot's
    monkeypatch.setenv("GRPC_TRACE", "all")
    monkeypatch.setenv("PYRAMID_ORGANISER_SETTING", "passed on")
    monkeypatch.setenv("TZ", "UTC")
    outcome, _ = play(
        [f"{PY} tests/bots/environment.py", f"{PY} sample_bots/random_bot.py"], log_dir=tmp_path
    )
    assert outcome.status is MatchStatus.COMPLETE
    assert outcome.faults == ()
    line = next(line for line in (tmp_path / "seat0.log").read_text().splitlines() if line.startswith("ENV "))
    seen = json.loads(line.removeprefix("ENV "))
    names = set(seen["names"])
    documented = documented_variables()
    assert documented >= {"PYRAMID_ADDRESS", "PYRAMID_TOKEN_FD", "PATH", "HOME", "TMPDIR", "PYTHONUNBUFFERED"}
    fixed = {name for name in documented if not name.endswith("_")} - {"LANG", "LC_ALL", "TZ", "PWD"}
    optional = {name for name in ("LANG", "LC_ALL", "TZ") if name in os.environ}
    if resolve_mode(SandboxMode.AUTO):
        optional.add("PWD")
    organiser = {
        name
        for name in os.environ
        if name.startswith("PYRAMID_")
        and name not in ("PYRAMID_ADDRESS", "PYRAMID_TOKEN", "PYRAMID_TOKEN_FD")
    }
    assert "PYRAMID_ORGANISER_SETTING" in organiser
    assert names == fixed | optional | organiser
    assert "http_proxy" not in names
    assert "GRPC_TRACE" not in names
    assert seen["values"]["PYRAMID_ADDRESS"].startswith("unix:")
    assert seen["values"]["PYTHONUNBUFFERED"] == "1"
    assert (
        f"`{seen['values']['PYRAMID_ADDRESS']}`" in section("Shape")
        or "pyramid-referee-" in (seen["values"]["PYRAMID_ADDRESS"])
    )
    if "PWD" in names:
        assert seen["values"]["HOME"] == "/tmp/home"
        assert seen["values"]["TMPDIR"] == "/tmp"


def test_the_statuses_table_lists_every_status_the_server_sends():
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", section("Statuses: how a stream can end"), re.M))
    sent = set(re.findall(r"grpc\.StatusCode\.([A-Z_]+)", (ROOT / "referee/match/server.py").read_text()))
    assert sent
    assert sent <= documented
    assert {"OK", "RESOURCE_EXHAUSTED", "UNAVAILABLE", "CANCELLED"} <= documented
    writing = (ROOT / "docs/WRITING_A_BOT.md").read_text(encoding="utf-8")
    # The guide for bot authors refers to that table rather than keeping a list of its own.
    named = set(re.findall(r"`([A-Z]+(?:_[A-Z]+)+)`", writing.split("## Any other language", 1)[1]))
    assert not named & {"UNAUTHENTICATED", "FAILED_PRECONDITION", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED"}


def test_the_limits_table_states_the_code_limits():
    limits = section("Limits, both ways")
    assert MAX_MESSAGE_BYTES == 8 * 1024
    assert "**8 KiB**" in limits
    assert MAX_TRANSPORT_BYTES == 1024 * 1024
    assert "**1 MiB**" in limits
    assert dict(SERVER_OPTIONS)["grpc.max_send_message_length"] == 4 * 1024 * 1024
    assert "**4 MiB**" in limits


async def _connect_and(action: str) -> tuple[grpc.StatusCode, bool, str]:
    """Says hello to a real referee server, then does ``action``; returns the stream's status and the
    session's state as the referee saw it."""
    registry = SessionRegistry()
    waiting = registry.expect("good-token")
    server, port = await create_server(registry, hello_timeout=1.0)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = pb_grpc.RefereeServiceStub(channel).Connect()
            hello = pb.Hello(protocol_version=PROTOCOL_VERSION, token="good-token")
            await call.write(pb.ConnectRequest(hello=hello))
            assert (await call.read()).WhichOneof("kind") == "welcome"
            session = await waiting
            if action == "oversized":
                await call.write(pb.ConnectRequest(hello=pb.Hello(bot_name="x" * MAX_TRANSPORT_BYTES)))
            elif action == "half-close":
                await call.done_writing()
            try:
                message = await asyncio.wait_for(call.read(), 5)
                assert message is grpc.aio.EOF
                code = await call.code()
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
            return code, session.is_closed, session.close_reason
    finally:
        await server.stop(None)


def test_a_message_over_one_mebibyte_ends_the_stream_with_resource_exhausted():
    code, closed, _ = asyncio.run(_connect_and("oversized"))
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert closed
    assert "`RESOURCE_EXHAUSTED`" in section("Statuses: how a stream can end")


def test_a_half_close_ends_the_session_and_the_stream_with_ok():
    code, closed, reason = asyncio.run(_connect_and("half-close"))
    assert code is grpc.StatusCode.OK
    assert closed
    assert reason == "the bot closed its stream"
    assert "does not half-close" in PROTOCOL


@pytest.mark.slow
def test_request_ids_are_per_stream_and_go_on_across_matches(tmp_path: Path):
    ids: list[list[int]] = [[], []]
    spec = BotSpec.parse(f"{PY} sample_bots/random_bot.py", name="again", cwd=ROOT)

    async def main() -> None:
        async with open_table([spec]) as seats:
            remote = seats[0]
            assert isinstance(remote, RemoteSeat)
            for match in range(2):
                tapped = RemoteSeat(
                    remote.session,
                    "again",
                    lambda message, match=match: (
                        ids[match].append(message.action_request.request_id)
                        if message.WhichOneof("kind") == "action_request"
                        else None
                    ),
                )
                outcome = await play_match(
                    [tapped, LocalSeat(RandomBot(), "local")],
                    Rules(players=2),
                    seed=match,
                    match_id=f"m{match}",
                    time_control=TimeControl(1.0, 20.0),
                )
                assert outcome.status is MatchStatus.COMPLETE
                assert outcome.faults == ()

    asyncio.run(main())
    first, second = ids
    assert first[0] == 1
    assert first == list(range(1, len(first) + 1))
    assert second == list(range(len(first) + 1, len(first) + len(second) + 1))
    assert "continues across matches" in PROTOCOL.replace("\n", " ").replace("**", "")


@pytest.mark.parametrize("language", ["C++", "Ruby", "Go", "Rust", "Java", "C#"])
def test_every_language_has_a_generation_command(language):
    table = section("Writing a client in another language")
    assert re.search(rf"^\| {re.escape(language)} \|", table, re.M)
    assert "protoc 3.15 or later" in table
    assert "--experimental_allow_proto3_optional" in table
