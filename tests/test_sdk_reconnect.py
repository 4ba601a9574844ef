"""Every way a remote bot's connection can end brings it back (issue #32): a GOAWAY, a keepalive cut of a
bot frozen longer than the door's keepalive timeout (a laptop asleep), a reset, the referee killed and
started again on the same port, a half-open connection that goes silent; and the TLS settings that can
never work stop the bot at once with one line saying what to set.

Each case runs the real ``referee serve`` (or ``referee check``) with its door on loopback, and real bot
processes of both SDKs as their authors start them: Python on its default stream (``ThreadStream``) and
on gRPC's asyncio API (``PYRAMID_STREAM=asyncio``), and Node.js. The network's faults come from a relay
in this process (tests/support/relay.py). Times are kept short by the league's time control (the door's
keepalive follows it, ``Keepalive.for_time``) and by the bots' ``PYRAMID_KEEPALIVE``."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pyramid_sdk.bot import TimeControl
from referee.league.config import load_league
from referee.remote.door import KEEPALIVE_INTERVAL, Keepalive
from referee.remote.files import tokens_path
from referee.remote.tokens import TokenBook
from support import ROOT
from support.leagues import remote_entrants, write_league
from support.net import free_port
from support.relay import Relay
from support.remote import remote_env, start_bot, start_referee, wait_for
from support.tls import Certificates, make_certificates

PY = sys.executable
NODE = shutil.which("node")
HAS_NODE = NODE is not None and (ROOT / "sdk/node/node_modules").is_dir()
WELCOME = "referee says: remote connection"
"""What both SDKs print when the door has admitted a connection (its notice of the round trip)."""
TIME_CONTROL = TimeControl(per_action=0.1, bank=0.5)
DOOR_KEEPALIVE = Keepalive.for_time(TIME_CONTROL)
"""The door's keepalive for :data:`TIME_CONTROL`: a bot silent longer than this is cut."""
BOT_KEEPALIVE = 6.0
"""The bots' own ``PYRAMID_KEEPALIVE`` where a silent connection must be given up quickly."""
GRPC_LINE = re.compile(r"^[IWEDF]\d{4} \d\d:\d\d:\d\d", re.MULTILINE)
"""A line of gRPC's C core's own log (``I1201 22:33:12.565713 … chttp2_transport.cc…``)."""


@dataclass
class Bot:
    """One remote bot process and its log."""

    kind: str
    entrant: str
    log: Path
    process: subprocess.Popen[bytes]

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def welcomes(self) -> int:
        return self.text().count(WELCOME)


KINDS = {
    "thread": ([PY, "-m", "sample_bots.random_bot"], {}),
    "asyncio": ([PY, "-m", "sample_bots.random_bot"], {"PYRAMID_STREAM": "asyncio"}),
    "node": ([str(NODE), "sample_bots/node/heuristic.js"], {}),
}
"""The bots: ``ThreadStream`` (the Python SDK's default), gRPC's asyncio API, and the Node.js SDK."""


def kinds() -> list[str]:
    return [kind for kind in KINDS if kind != "node" or HAS_NODE]


def start(
    kind: str, entrant: str, address: str, token: Path, folder: Path, ca: Path | None = None, **env: str
) -> Bot:
    command, extra = KINDS[kind]
    log = folder / f"{entrant}.log"
    return Bot(kind, entrant, log, start_bot(command, remote_env(address, token, ca) | extra | env, log))


def reconnect_league(folder: Path, remote: list[str], rounds: int) -> Path:
    """A 2-player league of the ``remote`` entrants, ``rounds`` of a round robin."""
    entrants = remote_entrants(remote)
    return write_league(
        folder,
        "name: Reconnecting\nseed: 6\nplayers: 2\n"
        f"schedule: {{format: round-robin, rounds: {rounds}, seating: single}}\n"
        f"time_control: {{per_action: {TIME_CONTROL.per_action * 1000:g}ms, "
        f"bank: {TIME_CONTROL.bank * 1000:g}ms}}\n"
        "concurrency: 2\ndatabase: results.sqlite\nremote: {wait: 1s}\n"
        f"entrants:\n{entrants}",
    )


@dataclass
class Arena:
    """``referee serve`` of a league whose remote entrants are the bots, one per kind."""

    folder: Path
    league: Path
    http: int
    door: int
    tokens: dict[str, Path]
    certs: Certificates | None = None
    server: subprocess.Popen[bytes] | None = None
    bots: list[Bot] = field(default_factory=list)
    starts: int = 0

    def serve(self) -> None:
        self.starts += 1
        log = self.folder / f"serve{self.starts}.log"
        tls = ("--tls-cert", self.certs.cert, "--tls-key", self.certs.key) if self.certs else ()
        self.server = start_referee(
            "serve", self.league, "--http", f"127.0.0.1:{self.http}", "--listen", f"127.0.0.1:{self.door}",
            *tls, log=log,
        )  # fmt: skip
        wait_for(log, "listening for remote entrants", 60)

    def kill(self) -> None:
        assert self.server is not None
        self.server.kill()
        self.server.wait(30)

    def connected(self) -> dict[str, bool]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http}/api/v1/entrants", timeout=10) as answer:
            rows = json.loads(answer.read())["entrants"]
        return {row["name"]: bool(row["connected"]) for row in rows if row["connected"] is not None}

    def stop(self) -> None:
        for bot in self.bots:
            bot.process.kill()
            bot.process.wait(30)
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGINT)
            try:
                self.server.wait(30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait(30)


def until(what: str | Callable[[], str], check: Callable[[], bool], timeout: float) -> float:
    """Seconds until ``check()`` held; fails with ``what`` (or what it returns then) after ``timeout``
    seconds."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout:g}s: {what() if callable(what) else what}")
        time.sleep(0.1)
    return time.monotonic() - started


def open_arena(folder: Path, rounds: int, certs: Certificates | None = None) -> Arena:
    names = [f"far-{kind}" for kind in kinds()]
    path = reconnect_league(folder, names, rounds)
    book = TokenBook(tokens_path(load_league(path).database))  # as `referee token issue` (test_remote.py)
    tokens = {}
    for name in names:
        tokens[name] = folder / f"{name}.token"
        tokens[name].write_text(book.issue(name) + "\n")
    arena = Arena(folder, path, free_port(), free_port(), tokens, certs)
    arena.serve()
    return arena


def assert_clean(bot: Bot) -> None:
    """The bot still runs, and its output is its own: no raw line of gRPC's, no warning, no traceback."""
    text = bot.text()
    assert bot.process.poll() is None, f"{bot.kind} exited: {text}"
    assert not GRPC_LINE.search(text), f"{bot.kind}: gRPC's own log in the bot's output: {text}"
    assert "Traceback" not in text, text
    assert "Warning" not in text, text  # e.g. Node.js's DEP0123 for a TLS server name that is an IP


@dataclass
class Sleepers:
    """An arena over TLS whose bots are frozen (SIGSTOP) mid-match by :meth:`freeze`."""

    arena: Arena
    stopped: float = 0.0
    welcomes: dict[str, int] = field(default_factory=dict)

    def freeze(self) -> None:
        until("every bot playing", lambda: min(counts(self.arena).values()) > 0, 60)
        time.sleep(0.5)  # matches under way
        self.welcomes = counts(self.arena)
        for bot in self.arena.bots:
            os.kill(bot.process.pid, signal.SIGSTOP)
        self.stopped = time.monotonic()


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> Certificates:
    """Another CA, and a certificate it signed for ``localhost`` only."""
    return make_certificates(tmp_path_factory.mktemp("named"), addresses=())


@pytest.fixture(scope="module")
def sleepers(tmp_path_factory, certs) -> Iterator[Sleepers]:
    """Remote bots that connect over TLS to ``127.0.0.1`` (an IP: Node.js warned about its TLS server
    name), play a few matches, and are frozen with SIGSTOP in the middle of their league. The door cuts
    them after its keepalive timeout, up to ``KEEPALIVE_INTERVAL + DOOR_KEEPALIVE.timeout`` (31 s) later:
    they start, and are frozen, with :func:`lobby`, and that time passes while the other tests run;
    :func:`test_bots_frozen_mid_match_past_the_doors_keepalive_come_back_when_they_wake` wakes them."""
    folder = tmp_path_factory.mktemp("sleepers")
    arena = open_arena(folder, rounds=50, certs=certs)
    try:
        for kind in kinds():
            name = f"far-{kind}"
            address = f"127.0.0.1:{arena.door}"
            arena.bots.append(start(kind, name, address, arena.tokens[name], folder, certs.ca))
        yield Sleepers(arena)
    finally:
        for bot in arena.bots:
            os.kill(bot.process.pid, signal.SIGCONT)
        arena.stop()


@pytest.fixture(scope="module")
def lobby(tmp_path_factory, sleepers) -> Iterator[tuple[Arena, Relay]]:
    """An arena whose remote bots, through a relay, have played their few matches and wait in the
    lobby, each pinging the door every ``BOT_KEEPALIVE / 3`` seconds. (It starts :func:`sleepers`
    first, and freezes them once its own bots are started.)"""
    folder = tmp_path_factory.mktemp("lobby")
    arena = open_arena(folder, rounds=1)
    relay = Relay(("127.0.0.1", arena.door))
    try:
        for kind in kinds():
            name = f"far-{kind}"
            env = {"PYRAMID_KEEPALIVE": f"{BOT_KEEPALIVE:g}"}
            arena.bots.append(start(kind, name, relay.address, arena.tokens[name], folder, **env))
        sleepers.freeze()
        until(
            "every bot connected",
            lambda: all(arena.connected().values()) and min(counts(arena).values()) > 0,
            60,
        )
        yield arena, relay
    finally:
        relay.close()
        arena.stop()


def reconnected(arena: Arena, before: dict[str, int], timeout: float) -> None:
    """Every bot said it was welcomed again (once more than ``before``) within ``timeout`` seconds, and
    the door has them all connected."""
    for bot in arena.bots:
        until(
            lambda bot=bot: f"{bot.kind} connected again: {bot.text()[-1500:]}",
            lambda bot=bot: bot.welcomes() > before[bot.kind],
            timeout,
        )
    until("the door has every bot again", lambda: all(arena.connected().values()), timeout)
    for bot in arena.bots:
        assert_clean(bot)


def counts(arena: Arena) -> dict[str, int]:
    return {bot.kind: bot.welcomes() for bot in arena.bots}


def test_idle_bots_that_ping_every_two_seconds_stay_connected(lobby):
    """The bots' own keepalive pings are welcome at the door (gRPC's servers take one every five
    minutes at most, and end a connection that pings faster three times: ``too_many_pings``)."""
    arena, _ = lobby
    before = counts(arena)
    time.sleep(3 * BOT_KEEPALIVE / 3 + 2)  # four pings each, while the door sends nothing: three strikes
    assert counts(arena) == before
    assert all(arena.connected().values())
    for bot in arena.bots:
        assert "reconnecting" not in bot.text(), bot.text()
        assert_clean(bot)


def test_a_goaway_brings_every_bot_back(lobby):
    arena, relay = lobby
    before = counts(arena)
    assert relay.goaway() == len(arena.bots)
    reconnected(arena, before, 15)


def test_a_reset_connection_brings_every_bot_back(lobby):
    arena, relay = lobby
    before = counts(arena)
    assert relay.reset() == len(arena.bots)
    reconnected(arena, before, 15)


def test_a_half_open_connection_is_given_up_by_the_bots_own_keepalive(lobby):
    """The relay goes silent with both sockets open: nothing closes, nothing answers. Each bot gives
    the connection up when its ping goes ``PYRAMID_KEEPALIVE`` seconds unanswered, and reconnects."""
    arena, relay = lobby
    before = counts(arena)
    silenced = time.monotonic()
    assert relay.silence() == len(arena.bots)
    reconnected(arena, before, BOT_KEEPALIVE * 4 / 3 + 10)
    assert time.monotonic() - silenced >= BOT_KEEPALIVE * 0.8  # given up by the keepalive, not at once


def test_a_referee_killed_and_started_again_on_the_same_port_gets_every_bot_back(lobby):
    arena, _ = lobby
    before = counts(arena)
    arena.kill()  # SIGKILL: no goodbye, the kernel closes its sockets
    arena.serve()  # the same command, the same port
    reconnected(arena, before, 30)
    for bot in arena.bots:
        assert "reconnecting in" in bot.text().split(WELCOME)[-2], bot.text()  # it saw the referee gone


@dataclass
class Doors:
    """``referee check --listen`` doors: TLS with :func:`certs` (for ``localhost`` and ``127.0.0.1``),
    TLS with :func:`named` (``localhost`` only), and plaintext."""

    tls: int
    named: int
    plain: int
    ca: Path
    named_ca: Path


@pytest.fixture(scope="module")
def doors(tmp_path_factory, certs, named) -> Iterator[Doors]:
    folder = tmp_path_factory.mktemp("doors")
    settings = {
        "tls": ("--tls-cert", certs.cert, "--tls-key", certs.key),
        "named": ("--tls-cert", named.cert, "--tls-key", named.key),
        "plain": (),
    }
    ports = {name: free_port() for name in settings}
    checks = [
        start_referee("check", "--listen", f"127.0.0.1:{ports[name]}", *options, log=folder / f"{name}.log")
        for name, options in settings.items()
    ]
    try:
        for name in settings:
            wait_for(folder / f"{name}.log", "pyr1_", 60)
        yield Doors(ports["tls"], ports["named"], ports["plain"], certs.ca, named.ca)
    finally:
        for check in checks:
            check.send_signal(signal.SIGINT)
        for check in checks:
            try:
                check.wait(30)
            except subprocess.TimeoutExpired:
                check.kill()
                check.wait(30)


BOT_NAMES = {"thread": "random", "asyncio": "random", "node": "node-heuristic"}
REFUSALS = {
    "plaintext to TLS": lambda d: (
        d.tls,
        None,
        "the referee speaks TLS: set PYRAMID_TLS_CA to the organiser's CA certificate",
    ),
    "another CA": lambda d: (
        d.tls,
        d.named_ca,
        f"the referee's certificate is not signed by PYRAMID_TLS_CA={d.named_ca}",
    ),
    "another name": lambda d: (
        d.named,
        d.named_ca,
        "the referee's certificate is not for 127.0.0.1 (it names DNS:localhost): set PYRAMID_ADDRESS to a "
        "name it was issued for",
    ),
    "TLS to plaintext": lambda d: (
        d.plain,
        d.ca,
        f"the referee at 127.0.0.1:{d.plain} does not speak TLS: unset PYRAMID_TLS_CA to connect in "
        "plaintext (its token then crosses the network unencrypted)",
    ),
}
"""What a bot's TLS settings cannot ever do: the door, the bot's ``PYRAMID_TLS_CA``, its one line."""


@pytest.mark.parametrize("case", REFUSALS)
def test_tls_settings_that_can_never_work_stop_the_bot_with_one_line_saying_what_to_set(
    tmp_path, doors, case
):
    """gRPC says ``UNAVAILABLE`` for each of these, as for a referee not up yet, and the SDKs retried them
    for ever; the probe of a failed connection tells them apart."""
    port, ca, line = REFUSALS[case](doors)
    token = tmp_path / "t.token"
    token.write_text("pyr1_" + "x" * 43)
    bots = {kind: start(kind, kind, f"127.0.0.1:{port}", token, tmp_path, ca) for kind in kinds()}
    for kind, bot in bots.items():
        try:
            code = bot.process.wait(30)
        except subprocess.TimeoutExpired:
            bot.process.kill()
            raise AssertionError(f"{kind} did not stop: {bot.text()}") from None
        assert code == 1, bot.text()
        assert bot.text().strip().splitlines() == [f"{BOT_NAMES[kind]}: {line}"]


AT_START = {
    "keepalive too short": (
        {"PYRAMID_KEEPALIVE": "2"},
        "PYRAMID_KEEPALIVE='2' is not a number of seconds of at least 6",
    ),
    "keepalive no number": (
        {"PYRAMID_KEEPALIVE": "soon"},
        "PYRAMID_KEEPALIVE='soon' is not a number of seconds of at least 6",
    ),
    "a key for a CA": ({"PYRAMID_TLS_CA": "{key}"}, "PYRAMID_TLS_CA={key} is not a PEM certificate"),
}
"""Settings a remote bot cannot use: the bot's environment, and its line. (A keepalive under 6 s would
ping faster than the door takes: every third of it, and the door takes one a second at most.)"""


@pytest.mark.parametrize("case", AT_START)
def test_settings_that_cannot_work_stop_the_bot_at_start_with_one_line(tmp_path, certs, case):
    env, line = AT_START[case]
    env = {name: value.format(key=certs.key) for name, value in env.items()}
    token = tmp_path / "t.token"
    token.write_text("pyr1_" + "x" * 43)
    address = f"127.0.0.1:{free_port()}"
    bots = {
        kind: start(kind, kind, address, token, tmp_path, **env)
        for kind in ("thread", "node")
        if kind in kinds()
    }
    for kind, bot in bots.items():
        assert bot.process.wait(30) == 1, bot.text()
        assert bot.text().strip().splitlines() == [f"{BOT_NAMES[kind]}: {line.format(key=certs.key)}"]


def test_bots_frozen_mid_match_past_the_doors_keepalive_come_back_when_they_wake(sleepers):
    """SIGSTOP is a laptop asleep: its kernel still acknowledges TCP, nothing answers gRPC's pings, and
    the door cuts the connection after its keepalive timeout, while the referee's messages and the cut
    wait unread in the socket. Woken, each bot must find its stream over and connect again (the Python
    SDK used to sit for ever, waiting for a status gRPC gives only once those messages are read)."""
    arena = sleepers.arena
    until(
        "the door cut every frozen bot",
        lambda: not any(arena.connected().values()),
        KEEPALIVE_INTERVAL + DOOR_KEEPALIVE.timeout + 15 - (time.monotonic() - sleepers.stopped),
    )
    for bot in arena.bots:
        os.kill(bot.process.pid, signal.SIGCONT)
    reconnected(arena, sleepers.welcomes, 30)
