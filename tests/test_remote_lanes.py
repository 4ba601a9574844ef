"""Several matches at once on one remote entrant's connection (issue #34): the real CLI with a league cap
of 3, a real Python or Node.js SDK bot in its own process that asks for 5, over real gRPC on loopback. It
plays 3 matches at once, never more, each complete, and never two of one table (the same deals) at
once."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
from pathlib import Path

import pytest

from referee.check import check_bot
from referee.remote.lobby import Lobby
from support import ROOT
from support.cli import export, referee
from support.door import doorway, until
from support.leagues import remote_entrants, write_league
from support.net import free_port
from support.remote import issue, remote_env, start_bot, stop

PY = sys.executable
NODE = shutil.which("node")
LOCAL = 4
BOTS = {
    "python": [PY, "tests/bots/remote_lanes.py"],
    "node": [NODE or "node", "tests/bots/remote_lanes.js"],
}


def lanes_league(folder: Path, cap: int) -> Path:
    """A 2-player round robin with balanced seatings (each table played twice, seats swapped: the same
    deals) of ``LOCAL`` in-process bots and the remote entrant ``far``, played up to 6 at once."""
    local = "  - name: random{}\n    module: sample_bots.random_bot:RandomBot\n    cwd: " + str(ROOT) + "\n"
    entrants = "".join(local.format(n) for n in range(LOCAL))
    return write_league(
        folder,
        "name: Lanes\nseed: 9\nplayers: 2\n"
        "schedule: {format: round-robin, rounds: 1, seating: balanced}\n"
        "time_control: {per_action: 2s, bank: 20s}\nconcurrency: 6\ndatabase: results.sqlite\n"
        f"remote: {{wait: 60s, max_matches: {cap}}}\nentrants:\n{entrants}{remote_entrants(['far'])}",
    )


def intervals(events: Path) -> dict[str, tuple[float, float, str, str]]:
    """Each match the bot played: when it started and ended, on which thread, with which bot object."""
    started: dict[str, tuple[float, str, str]] = {}
    played: dict[str, tuple[float, float, str, str]] = {}
    for line in events.read_text().splitlines():
        what, match_id, at, thread, copy = line.split()
        assert what in ("start", "end"), line  # "mixed": a match's end reached another match's bot
        if what == "start":
            assert match_id not in started, f"{match_id} started twice"
            started[match_id] = (float(at), thread, copy)
        else:
            begun, thread_then, copy_then = started[match_id]
            assert (thread, copy) == (thread_then, copy_then), line
            played[match_id] = (begun, float(at), thread, copy)
    assert set(played) == set(started), "a match started and never ended"
    return played


@pytest.mark.parametrize("sdk", sorted(BOTS))
def test_a_remote_bot_plays_three_matches_at_once_never_two_of_one_table(tmp_path, sdk):
    if sdk == "node" and (NODE is None or not (ROOT / "sdk/node/node_modules").is_dir()):
        pytest.skip("needs node")
    path = lanes_league(tmp_path, cap=3)
    token = issue(path, "far")
    port = free_port()
    events = tmp_path / "events.txt"
    env = remote_env(f"127.0.0.1:{port}", token, None) | {"PYRAMID_MAX_MATCHES": "5"}  # more than the cap
    bot = start_bot([*BOTS[sdk], str(events), "0.05"], env, tmp_path / "bot.log")
    try:
        result = referee("run", path, "--listen", f"127.0.0.1:{port}", timeout=600)
    finally:
        code = stop(bot, 60)
    log = (tmp_path / "bot.log").read_text()
    assert result.returncode == 0, result.stdout + result.stderr + log
    assert code == 0, log
    assert "3 matches at once" in log  # the welcome granted the league's cap, not the 5 asked for
    lines = export(path)
    assert len(lines) == 10 * 2  # C(5, 2) tables, two rotations each
    assert all(line["status"] == "complete" for line in lines)
    assert all(line["faults"] == [] for line in lines), [line["faults"] for line in lines]
    tables = {line["match_id"]: line["table_id"] for line in lines}
    far = {line["match_id"] for line in lines if "far" in line["seats"]}
    played = intervals(events)
    assert set(played) == far  # every match of the remote entrant, each played once to its end
    # How many it played at once: the most intervals that contain one moment (a start).
    most = max(sum(1 for s, e, *_ in played.values() if s <= begun < e) for begun, *_ in played.values())
    assert most == 3, sorted(played.values())
    assert len({thread for *_, thread, _ in played.values()}) == 3  # three streams, three threads
    assert len({copy for *_, copy in played.values()}) == 3  # each with a bot object of its own
    for one, (s1, e1, *_rest) in played.items():
        for other, (s2, e2, *_more) in played.items():
            if one < other and s1 < e2 and s2 < e1:  # at once
                assert tables[one] != tables[other], f"{one} and {other} of {tables[one]} at once"


def test_the_sdk_holds_its_granted_streams_answers_each_ones_pings_and_stops_them_on_ctrl_c(tmp_path, certs):
    """The door in the test's process, pinging idle streams every half second: the SDK bot asks for 3 and
    holds 3 streams, each answering its own pings, over the connections its gRPC channels share; Ctrl-C
    stops every stream, and the bot exits 0."""

    async def main() -> None:
        lobby = Lobby(wait=5, idle_ping_every=0.5)
        async with doorway(tmp_path, certs, names=("far",), lobby=lobby, max_matches=3) as way:
            token = tmp_path / "far.token"
            token.write_text(way.book.issue("far") + "\n")
            (tmp_path / "ca.pem").write_bytes(way.ca)
            env = remote_env(f"localhost:{way.port}", token, tmp_path / "ca.pem")
            env["PYRAMID_MAX_MATCHES"] = "3"
            events = tmp_path / "events.txt"
            bot = start_bot([PY, "tests/bots/remote_lanes.py", str(events), "0"], env, tmp_path / "bot.log")
            try:
                await until(lambda: lobby.capacity("far") == 3, 60, "holding three streams")
                sessions = set(lobby._connected["far"])
                await asyncio.sleep(3)  # six pings on each stream, every one answered in time
                assert set(lobby._connected["far"]) == sessions
                assert all(not session.is_closed for session in sessions)
                front = way.door.front
                assert front is not None
                connections = front.open.get("127.0.0.1", 0)
                assert 1 <= connections <= 3, front.open  # grpcio 1.85: a connection per channel, 3
                bot.send_signal(signal.SIGINT)
                code = await asyncio.to_thread(stop, bot, 30)
            finally:
                if bot.poll() is None:
                    bot.kill()
                    bot.wait()
            log = (tmp_path / "bot.log").read_text()
            assert code == 0, log
            assert "lanes: stopped (Ctrl-C)" in log, log
            await until(lambda: not lobby.connected("far"), 10, "every stream gone")

    asyncio.run(main())


def test_each_idle_stream_answers_its_pings_while_the_bot_thinks_in_a_match_on_another(tmp_path, certs):
    """The door pings every idle stream twice a second and cuts one that does not answer within 0.3 s:
    while one stream's bot thinks 0.8 s on each decision of a match (``referee check``'s first one), the
    other two streams answer every ping from their own threads, and none of them is cut. A bot answering
    all its streams from one loop, between decisions, would miss those pings."""

    async def main() -> None:
        lobby = Lobby(wait=30, ping_timeout=0.3, idle_ping_every=0.5)
        async with doorway(tmp_path, certs, names=("remote",), lobby=lobby, max_matches=3) as way:
            token = tmp_path / "remote.token"
            token.write_text(way.book.issue("remote") + "\n")
            (tmp_path / "ca.pem").write_bytes(way.ca)
            env = remote_env(f"localhost:{way.port}", token, tmp_path / "ca.pem")
            env["PYRAMID_MAX_MATCHES"] = "3"
            events = tmp_path / "events.txt"
            bot = start_bot([PY, "tests/bots/remote_lanes.py", str(events), "0.8"], env, tmp_path / "bot.log")
            check = None
            try:
                await until(lambda: lobby.capacity("remote") == 3, 60, "holding three streams")
                sessions = list(lobby._connected["remote"])
                check = asyncio.create_task(check_bot((), remote=lobby))
                await until(lambda: lobby.playing("remote"), 30, "in a match")
                started = lambda: events.exists() and "start" in events.read_text()  # noqa: E731
                await until(started, 30, "its match started")
                await asyncio.sleep(4)  # about five decisions of 0.8 s; eight pings on each idle stream
                assert lobby.playing("remote")
                cut = [session.close_reason for session in sessions if session.is_closed]
                assert not cut, cut
            finally:
                if check is not None:
                    check.cancel()
                    await asyncio.gather(check, return_exceptions=True)
                bot.kill()
                bot.wait()

    asyncio.run(main())
