"""A remote bot counts as connected only while its own code answers (issue #32, items 2 and 12): the
lobby's Ping before every match, while idle, and at once after a match left a request unanswered; a
bot frozen with SIGSTOP or stalled in its own code is not seated, is cut with the named reason, and
plays again once it answers; a connection the keepalive cuts in a match has a fault that says so. Real
SDK bot processes on a real door (in-process, with lowered timeouts), and the real CLI."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import sys

import pytest

from pyramid_sdk.bot import TimeControl
from referee.check import check_bot
from referee.remote import door as door_module
from referee.remote.door import Keepalive
from referee.remote.lobby import Absent, Lobby
from support import ROOT
from support.cli import referee
from support.door import doorway, sdk_bot, until
from support.net import free_port
from support.remote import issue, league, remote_env, start_bot, stop

PY = sys.executable
NO_KEEPALIVE = Keepalive(interval=60, timeout=120)
"""A transport keepalive that never fires within a test: what cuts a bot there is the lobby's ping."""


def random_bot(way, tmp_path, name: str = "far"):
    return sdk_bot(way, tmp_path, name, str(ROOT / "sample_bots/random_bot.py"))


def test_a_frozen_bot_is_not_seated_and_its_claim_fails_at_once(tmp_path, certs, caplog):
    """Frozen (SIGSTOP: its kernel still holds the TCP connection, the transport sees nothing yet), the
    bot is still "connected" when a match claims it: the claim's ping goes unanswered, the claim fails
    at once (not after the league's 30 s wait) naming why, and the connection is cut. Woken, the bot
    finds its stream cut (UNAVAILABLE, the reason) and connects again."""

    async def main() -> None:
        lobby = Lobby(wait=30, ping_timeout=1.0, idle_ping_every=600)
        async with doorway(tmp_path, certs, NO_KEEPALIVE, lobby=lobby) as way:
            bot = random_bot(way, tmp_path)
            try:
                await until(lambda: lobby.connected("far"), 60, "connected")
                os.kill(bot.pid, signal.SIGSTOP)
                assert lobby.connected("far")  # nothing has noticed yet
                started = asyncio.get_running_loop().time()
                with (
                    caplog.at_level(logging.INFO, logger=door_module.__name__),
                    pytest.raises(Absent, match="did not answer the referee's ping within 1s") as absent,
                ):
                    await lobby.claim(["far"])
                assert asyncio.get_running_loop().time() - started < 5
                assert absent.value.names == ("far",)
                assert not lobby.connected("far")
                await until(
                    lambda: any("left: no answer" in r.getMessage() for r in caplog.records), 5, "log"
                )
                os.kill(bot.pid, signal.SIGCONT)
                await until(lambda: lobby.connected("far"), 60, "connected again")
                (session,) = await lobby.claim(["far"], wait=5)  # awake, it answers and is seated
                await lobby.release("far", session)
                log = (tmp_path / "far.log").read_text()
                cut = r"no answer to the referee's ping within 1(\.\d+)?s: connection cut"
                assert re.search(cut, log), log
            finally:
                os.kill(bot.pid, signal.SIGCONT)
                bot.kill()
                bot.wait()

    asyncio.run(main())


def test_an_idle_bot_that_stops_answering_is_cut_and_counts_as_away(tmp_path, certs, caplog):
    """The lobby pings a waiting connection every ``idle_ping_every`` seconds: a frozen bot is away
    within that and the ping timeout, long before the transport's keepalive would notice."""

    async def main() -> None:
        lobby = Lobby(wait=2, ping_timeout=0.5, idle_ping_every=0.5)
        async with doorway(tmp_path, certs, NO_KEEPALIVE, lobby=lobby) as way:
            bot = random_bot(way, tmp_path)
            try:
                await until(lambda: lobby.connected("far"), 60, "connected")
                await asyncio.sleep(2)  # several pings, all answered: an idle bot stays
                assert lobby.connected("far")
                os.kill(bot.pid, signal.SIGSTOP)
                with caplog.at_level(logging.INFO, logger=door_module.__name__):
                    gone = await until(lambda: not lobby.connected("far"), 10, "away")
                    await until(lambda: any("left" in r.getMessage() for r in caplog.records), 5, "log")
                assert gone <= 0.5 + 0.5 + 1.5
                assert not lobby.ready(["far"])
                left = [r.getMessage() for r in caplog.records if "left" in r.getMessage()]
                assert len(left) == 1, left  # the ping timeout and the connection's lag allowance
                assert re.fullmatch(
                    r"remote door: far \(r1\) left: "
                    r"no answer to the referee's ping within 0\.5\d*s: connection cut",
                    left[0],
                ), left
            finally:
                os.kill(bot.pid, signal.SIGCONT)
                bot.kill()
                bot.wait()

    asyncio.run(main())


def test_a_connection_the_keepalive_cuts_in_a_match_has_a_fault_that_says_so(tmp_path, certs):
    """Frozen in a match, the bot leaves the transport's pings unanswered; the keepalive cuts its
    connection, which gRPC reports to the referee as the end of the stream: the disconnect's detail says
    the keepalive cut it, and how long the bot had been silent, not that the bot closed its stream."""

    async def main() -> None:
        # A short wait: once the cut bot is gone, the check's next match waits it out for a bot that
        # cannot come back (30 s of nothing). The bot is connected before the check starts, so its first
        # claim does not wait on its start either.
        lobby = Lobby(wait=3, ping_timeout=1.0, idle_ping_every=600)
        # The keepalive a league with this time control gets: a 1.3 s interval, an 11.3 s timeout.
        keepalive = Keepalive.for_time(TimeControl(per_action=0.3, bank=0.5))
        async with doorway(tmp_path, certs, keepalive, names=("remote",), lobby=lobby) as way:
            bot = sdk_bot(way, tmp_path, "remote", str(ROOT / "sample_bots/random_bot.py"))
            try:
                await until(lambda: lobby.connected("remote"), 60, "connected")
                check = asyncio.create_task(check_bot((), remote=lobby))
                await until(lambda: lobby.playing("remote"), 60, "in a match")
                os.kill(bot.pid, signal.SIGSTOP)
                report = await asyncio.wait_for(check, 120)
            finally:
                os.kill(bot.pid, signal.SIGCONT)
                bot.kill()
                bot.wait()
            details = [f.detail for f in report.faults if f.kind.value == "disconnect"]
            assert details, report.lines()
            assert details[0].startswith("no keepalive answer for 11s: connection cut (the bot last spoke"), (
                details
            )

    asyncio.run(main())


def test_a_bot_that_forfeits_by_timeouts_answers_a_ping_before_its_next_match(tmp_path):
    """Through ``referee run --listen``: the remote bot's code stalls 6 s in its first match (its gRPC
    threads still answer the transport). It forfeits that match by timeouts; then, instead of being
    seated again at once and forfeiting match after match, it is pinged, cut, and plays its later
    matches once it is awake and connected again."""
    path = league(tmp_path, ["far"], local=2, wait="20s")
    path.write_text(path.read_text().replace("per_action: 2s, bank: 20s", "per_action: 300ms, bank: 500ms"))
    token = issue(path, "far")
    port = free_port()
    # The SDK's default stream, what a bot author runs: it sees the stream the referee ended while the
    # bot's code was stalled with requests queued, and reconnects.
    env = remote_env(f"127.0.0.1:{port}", token, None)
    bot = start_bot([PY, str(ROOT / "tests/bots/staller.py"), "6"], env, tmp_path / "far.log")
    try:
        result = referee("run", path, "--listen", f"127.0.0.1:{port}", timeout=240)
    finally:
        if bot.poll() is None:
            bot.send_signal(signal.SIGINT)
        stop(bot, 30)
    assert "Traceback" not in result.stderr, result.stderr
    exported = referee("export", path)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    played = [line for line in lines if "far" in line["seats"]]
    forfeited = [line for line in played if line["seats"].index("far") in line["forfeits"]]
    assert len(forfeited) == 1, [(line["match_id"], line["faults"]) for line in played]
    assert len(played) >= 2, result.stderr  # it played again once awake
    assert "stalling for 6s" in (tmp_path / "far.log").read_text()
    referee_log = (tmp_path / "results-logs" / "referee.log").read_text()
    assert re.search(r"far \(r1\) left: no answer to the referee's ping within 0\.3\d*s", referee_log)


def test_the_lobby_waits_on_nobody_it_does_not_ping(tmp_path):
    """A claim of a bot that is not connected at all still waits the league's wait (it may connect)."""

    async def main() -> None:
        lobby = Lobby(wait=0.3)
        with pytest.raises(Absent, match=r"'far' was not connected within 0\.3s"):
            await lobby.claim(["far"])

    asyncio.run(main())
