"""The remote door against strangers, on real gRPC with real TLS (a CA and certificate made by openssl):
plaintext on the TLS port, a wrong token, a flood of bad hellos, a 1 MiB message, a revoked token while
connected; and an admitted connection's welcome, ping and lag allowance (issue #26); a bot that vanished
without closing its connection, and one that thinks longer than the transport's keepalive interval. The
door runs in this process; its clients are raw gRPC streams, as a hostile peer would write them, or real
SDK bots."""

from __future__ import annotations

import asyncio
import os
import signal

import grpc
import pytest

from pyramid_sdk.bot import TimeControl
from referee.check import check_bot
from referee.league.config import load_league
from referee.match.server import MAX_TRANSPORT_BYTES
from referee.remote.door import MAX_BAD_HELLOS, MAX_PER_PEER, REFUSED, Keepalive
from referee.remote.front import Limits
from referee.remote.lobby import Absent
from referee.remote.settings import RemoteSettings
from referee.run.remote_entrants import OpenDoor
from support import ROOT
from support.door import CONNECT, admitted, doorway, hello, refusal, sdk_bot, until
from support.remote import league


def test_an_admitted_connection_is_welcomed_as_remote_pinged_and_waits_in_the_lobby(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            token = way.book.issue("far")
            client = await admitted(way, token)
            assert client.welcome.remote
            assert client.welcome.max_matches == 1
            (session,) = await way.lobby.claim(["far"], wait=5)
            assert 0 <= session.lag_allowance <= 0.5
            assert way.lobby.latency["far"].round_trips
            # A second connection of the same entrant while it plays is refused.
            code, details = await refusal(way, hello(token))
            assert code is grpc.StatusCode.ALREADY_EXISTS, details
            await way.lobby.release("far", session)
            with pytest.raises(Absent, match="'near' was not connected"):
                await way.lobby.claim(["far", "near"], wait=0.5)
            client.call.cancel()

    asyncio.run(main())


def test_several_matches_at_once_are_granted_up_to_the_league_cap_a_stream_each(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs, max_matches=3) as way:
            token = way.book.issue("far")
            # A hostile hello asks for 4294967295 matches at once: it is granted the league's 3.
            clients = [await admitted(way, token, max_matches=2**32 - 1) for _ in range(3)]
            assert [client.welcome.max_matches for client in clients] == [3, 3, 3]
            assert way.lobby.capacity("far") == 3
            # Its address may hold two streams and connections more than a stranger's, no more.
            assert way.door.allowance("127.0.0.1") == 2
            front = way.door.front
            assert front is not None
            assert front.allowed == {"127.0.0.1": 2}
            first = await way.lobby.claim(["far"], wait=5, deals=1)
            await way.lobby.claim(["far"], wait=5, deals=2)
            with pytest.raises(Absent, match="'far' was still playing"):  # the same deals as the first
                await way.lobby.claim(["far"], wait=0.5, deals=1)
            await way.lobby.claim(["far"], wait=5, deals=3)
            assert way.lobby.playing("far")
            # All three streams play: a fourth is refused, as a second stream of one match at a time is.
            code, details = await refusal(way, hello(token, max_matches=3))
            assert code is grpc.StatusCode.ALREADY_EXISTS, details
            assert details == "this entrant is connected and playing 3 matches: 3 streams at once"
            # One stream idle again: a fourth stream takes its place (a restarted bot's streams do).
            await way.lobby.release("far", first[0])
            fourth = await admitted(way, token, max_matches=3)
            assert await clients[0].ended() is grpc.StatusCode.UNAVAILABLE
            assert way.lobby.capacity("far") == 3
            for client in (*clients, fourth):
                client.call.cancel()
            await until(lambda: way.door.allowance("127.0.0.1") == 0, 10, "gone")  # as its streams end
            assert not way.lobby.connected("far")
            assert not front.allowed
            # A hello without the field, as every bot before it sent, is granted one match at a time.
            old = await admitted(way, token)
            assert old.welcome.max_matches == 1
            old.call.cancel()

    asyncio.run(main())


def test_plaintext_on_the_tls_port_and_a_wrong_token_are_refused(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            way.book.issue("far")
            code, _ = await refusal(way, hello("pyr1_guess"), tls=False)
            assert code is grpc.StatusCode.UNAVAILABLE
            code, details = await refusal(way, hello("pyr1_guess"))
            assert (code, details) == (grpc.StatusCode.UNAUTHENTICATED, REFUSED)
            code, details = await refusal(way, b"\xff\xff\xff")
            assert code is grpc.StatusCode.INVALID_ARGUMENT

    asyncio.run(main())


def test_a_flood_of_bad_hellos_is_shut_out_while_an_admitted_bot_plays_on(tmp_path, certs):
    """The door's answers to hellos, each on a connection of its own: the front's cap of connections per
    address is raised out of the way (it has tests of its own), since a connection just ended may still
    count there for a moment on a loaded machine, and the front would refuse the next one unread."""
    roomy = Limits.for_this_process()
    roomy = Limits(per_address=4 * (MAX_BAD_HELLOS + 5), total=roomy.total)

    async def main() -> None:
        async with doorway(tmp_path, certs, limits=roomy) as way:
            token = way.book.issue("far")
            client = await admitted(way, token)
            answers = [await refusal(way, hello(f"pyr1_{n}")) for n in range(MAX_BAD_HELLOS + 3)]
            codes = [code for code, _ in answers]
            assert codes[:MAX_BAD_HELLOS] == [grpc.StatusCode.UNAUTHENTICATED] * MAX_BAD_HELLOS, answers
            assert set(codes[MAX_BAD_HELLOS:]) == {grpc.StatusCode.RESOURCE_EXHAUSTED}, answers
            code, details = await refusal(way, hello(token))  # even a good token, from this address
            assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, details
            assert "too many refused hellos" in details
            # The bot admitted before the flood is still connected, and free to play.
            (session,) = await way.lobby.claim(["far"], wait=2)
            assert not session.is_closed
            client.call.cancel()

    asyncio.run(main())


def test_a_message_over_one_mib_is_refused_by_the_transport(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            code, _ = await refusal(way, hello("pyr1_" + "x" * MAX_TRANSPORT_BYTES))
            assert code is grpc.StatusCode.RESOURCE_EXHAUSTED

    asyncio.run(main())


def test_a_revoked_token_drops_its_connection_before_its_next_match(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            token = way.book.issue("far")
            client = await admitted(way, token)
            way.book.revoke("far")
            with pytest.raises(Absent):
                await way.lobby.claim(["far"], wait=0.5)
            assert await client.ended() is grpc.StatusCode.UNAUTHENTICATED

    asyncio.run(main())


def test_a_flood_of_silent_streams_from_one_address_is_capped(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            credentials = grpc.ssl_channel_credentials(way.ca)
            # Two connections of four streams each (the most one connection may carry at once).
            channels = [grpc.aio.secure_channel(f"localhost:{way.port}", credentials) for _ in range(2)]
            calls = [
                channel.stream_stream(CONNECT, request_serializer=None, response_deserializer=None)()
                for channel in channels
                for _ in range(MAX_PER_PEER // 2)
            ]
            for call in calls:  # each opens its stream and says nothing: the door waits for its hello
                await call.wait_for_connection()
            deadline = asyncio.get_running_loop().time() + 10
            while sum(way.door.doorman.open.values()) < MAX_PER_PEER:
                assert asyncio.get_running_loop().time() < deadline, way.door.doorman.open
                await asyncio.sleep(0.05)
            code, details = await refusal(way, hello("pyr1_late"))
            assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert details == "too many streams from one address"
            for channel in channels:
                await channel.close()

    asyncio.run(main())


def test_a_bot_that_vanished_without_closing_its_connection_leaves_the_lobby_and_comes_back(tmp_path, certs):
    """A stopped process is a laptop asleep: its kernel still acknowledges TCP, so the connection looks
    open, but nothing answers gRPC's pings. The door must notice, not count it connected and hand it
    matches it would lose on time; woken up, the SDK finds its stream cut and connects again."""

    async def main() -> None:
        async with doorway(tmp_path, certs, Keepalive(interval=0.5, timeout=1.5)) as way:
            bot = sdk_bot(way, tmp_path, "far", str(ROOT / "sample_bots/random_bot.py"))
            try:
                await until(lambda: way.lobby.connected("far"), 60, "connected")
                await asyncio.sleep(2)  # pings come and are answered: an idle bot stays
                assert way.lobby.connected("far")
                os.kill(bot.pid, signal.SIGSTOP)
                gone = await until(lambda: not way.lobby.connected("far"), 20, "dropped")
                assert gone >= 0.5  # cut by an unanswered ping, not at once
                os.kill(bot.pid, signal.SIGCONT)
                await until(lambda: way.lobby.connected("far"), 60, "connected again")
            finally:
                bot.kill()
                bot.wait()

    asyncio.run(main())


@pytest.mark.parametrize(("think", "cut"), [(1.5, False), (4.0, True)])
def test_a_bot_is_cut_only_when_it_leaves_a_ping_unanswered_past_the_keepalive_timeout(
    tmp_path, certs, think, cut
):
    """The SDK answers the transport's pings only while it waits for the referee. With pings every
    0.2 s and a 3 s timeout, a bot thinking 1.5 s at each match's first decision (within the check's
    time) leaves several unanswered and plays on; one thinking 4 s is cut, a disconnect."""

    async def main() -> None:
        async with doorway(tmp_path, certs, Keepalive(interval=0.2, timeout=3.0), names=("remote",)) as way:
            bot = sdk_bot(way, tmp_path, "remote", str(ROOT / "tests/bots/ponderer.py"), str(think))
            try:
                await until(lambda: way.lobby.connected("remote"), 60, "connected")  # a slow start is no cut
                report = await check_bot((), remote=way.lobby)
            finally:
                way.lobby.close()  # the league is over: the SDK stops by itself
                if cut:
                    bot.kill()
                else:
                    await asyncio.to_thread(bot.wait, 30)
            faults = [fault.kind.value for fault in report.faults]
            if cut:
                assert "disconnect" in faults, report.lines()
            else:
                assert report.clean, report.lines()
                assert (tmp_path / "remote.log").read_text().count(f"thinking for {think:g}s") == 3

    asyncio.run(main())


@pytest.mark.quick
def test_the_keepalive_outlasts_the_longest_decision_and_a_longer_clock_later_is_told(tmp_path, capsys):
    assert Keepalive.for_time(TimeControl(per_action=2, bank=30)).timeout == 2 + 30 + 0.5 + 10
    options = dict(Keepalive(interval=20, timeout=31.5).options())
    assert options["grpc.keepalive_time_ms"] == 20_000
    assert options["grpc.keepalive_timeout_ms"] == options["grpc.http2.ping_timeout_ms"] == 31_500
    path = league(tmp_path, ["far"])
    door = OpenDoor(load_league(path, check_commands=False), RemoteSettings("127.0.0.1:0"))
    assert door.keepalive.timeout == 2 + 20 + 0.5 + 10  # the league's 2 s a decision and 20 s bank
    door.admit(load_league(path, check_commands=False))
    assert capsys.readouterr().err == ""
    path.write_text(path.read_text().replace("bank: 20s", "bank: 60s"))
    door.admit(load_league(path, check_commands=False))
    door.admit(load_league(path, check_commands=False))
    assert capsys.readouterr().err.count("restart referee serve to lengthen it") == 1
