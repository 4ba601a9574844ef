"""Benchmark: local play's pace while a stranger holds idle connections to the remote door (issue #32,
item 10), against its pace under the same client load on a harmless listener.

A ``referee run --listen`` league of random command bots (a process each per match, unsandboxed) and one
honest remote bot (the Python SDK's random bot, over TLS) plays on while an attacker process opens
``--sockets`` connections that never open a stream (bare TCP, or a finished TLS handshake with ALPN
``h2``), from 127.0.0.1 or spread over 127.0.0.2-.5, and holds them (or floods it otherwise: ``KINDS``);
one that is closed it opens again ``--reopen`` seconds later (0: never), at ``--rate`` attempts a second
at most, so that both phases get the same attempts. In the baseline phase the same attacker, with the
same sockets, points at a sink (a separate process that accepts and holds every connection and does
nothing else), so its own CPU on the shared cores is in both phases. Phases alternate, each ``--window``
seconds; the pace is matches stored per minute (read from the results database), with the remote bot's
matches, the referee's largest count of open file descriptors and the attacker's connection attempts
beside it. One line per phase, then one per kind::

    .venv/bin/python benchmarks/door_attacks.py --sockets 1500 --window 30 --rounds 2

``--door-only`` runs the door alone in the benchmark's process, without a league, and prints its CPU a
second under each attack (and idle)::

    .venv/bin/python benchmarks/door_attacks.py --door-only --window 20 --reopen 1

``--relay`` measures instead what the door's front adds to a remote round trip: the referee pings a
connected SDK bot ``--pings`` times through the door (front and gRPC behind it) and through a gRPC
server with the same options on its own TCP port, alternating, and prints the medians::

    .venv/bin/python benchmarks/door_attacks.py --relay --pings 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import resource
import signal
import sqlite3
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT
from support.cli import REFEREE
from support.net import free_port

KINDS = {
    "tcp": ("tcp", ["127.0.0.1"]),
    "tls": ("tls", ["127.0.0.1"]),
    "tls-spread": ("tls", ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]),
    "garbage": ("garbage", ["127.0.0.1"]),
    "garbage-tls": ("garbage-tls", ["127.0.0.1"]),
    "bad-hello": ("bad-hello", ["127.0.0.1"]),
    "big-hello": ("big-hello", ["127.0.0.1"]),
}
"""Each attack: what its connections do, and where from. ``tcp``, ``tls``: nothing (idle);
``garbage``, ``garbage-tls``: 4 KiB of random bytes instead of HTTP/2, then wait for the close;
``bad-hello``: a gRPC stream whose hello carries a token the door does not know; ``big-hello``: a 2 MiB
first message (over gRPC's 1 MiB cap). The two hello attacks speak gRPC, through at most
:data:`GRPC_SLOTS` channels at once."""
DEFAULT_KINDS = ["tcp", "tls", "tls-spread"]
GRPC_SLOTS = 64
TLS_KINDS = {"tls", "garbage-tls", "bad-hello", "big-hello"}
LEAGUE = """\
name: Door Attacks
seed: 32
players: 2
schedule: {{format: round-robin, rounds: 400, seating: balanced}}
time_control: {{per_action: 1s, bank: 20s}}
concurrency: 2
database: results.sqlite
sandbox: none
remote: {{wait: 60s}}
entrants:
{local}  - name: far
    remote: true
"""
HOLD = 5.0
"""Seconds the door's gRPC holds a connection that opens no stream (``front.HANDSHAKE_TIMEOUT``)."""
LOCAL = "  - name: random{n}\n    command: python -m sample_bots.random_bot\n    cwd: {root}\n"
"""A local entrant: a bot process per match, as the issue's local play was (an in-process entrant plays
some 80 matches a second here, and its part of the schedule would be over before the first window)."""


def certificates(folder: Path) -> None:
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    curve = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    openssl(
        "req", "-x509", *curve, "-days", "2", "-subj", "/CN=bench-ca", "-keyout", "ca.key", "-out", "ca.pem"
    )
    openssl("req", *curve, "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    (folder / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem",
    )  # fmt: skip


# --- the attacker and the sink, each in a process of its own ----------------------------------------


async def attack(
    port: int, kind: str, sources: list[str], sockets: int, reopen: float, rate: float, ca: str
) -> None:
    """Holds ``sockets`` connections to ``port`` doing what ``kind`` says (:data:`KINDS`), making at
    most ``rate`` attempts a second (so that the door and the sink get the same, whoever is busier);
    prints the attempts when told to stop (SIGTERM)."""
    if kind in ("bad-hello", "big-hello"):
        await hello_attack(port, kind, min(sockets, GRPC_SLOTS), rate, ca)
        return
    context = None
    if kind in TLS_KINDS:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
    attempts = 0
    held = 0
    gate = asyncio.Semaphore(200)  # connections being made at once
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    addresses = itertools.cycle(sources)
    loop = asyncio.get_running_loop()
    next_turn = loop.time()

    async def turn() -> None:
        """Waits for this attempt's turn: one every 1/rate seconds, in all."""
        nonlocal next_turn
        now = loop.time()
        next_turn = max(next_turn + 1 / rate, now)
        await asyncio.sleep(next_turn - now)

    async def slot() -> None:
        nonlocal attempts, held
        while not stop.is_set():
            await turn()
            attempts += 1
            writer = None
            try:
                async with gate:
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection(
                            "127.0.0.1", port, local_addr=(next(addresses), 0), ssl=context,
                            server_hostname="localhost" if context else None,
                        ),
                        10,
                    )  # fmt: skip
                held += 1
                try:
                    if kind.startswith("garbage"):
                        writer.write(os.urandom(4096))
                    while await reader.read(65536):
                        pass
                finally:
                    held -= 1
            except (OSError, ssl.SSLError, TimeoutError):
                pass
            finally:
                if writer is not None:
                    writer.close()
            if reopen <= 0:  # opened once, held as long as the door lets it be
                await stop.wait()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), reopen)

    tasks = [asyncio.create_task(slot()) for _ in range(sockets)]
    await stop.wait()
    print(f"attempts={attempts} held={held}", flush=True)
    for task in tasks:
        task.cancel()
    os._exit(0)


async def hello_attack(port: int, kind: str, slots: int, rate: float, ca: str) -> None:
    """``slots`` gRPC channels to the door over TLS, each opening streams one after the other whose first
    message is a hello with an unknown token (``bad-hello``) or 2 MiB (``big-hello``), ``rate`` a
    second in all; prints the attempts and the answers' status codes when told to stop (SIGTERM)."""
    import grpc  # noqa: PLC0415  (only these attacks speak gRPC)

    from pyramid_sdk.handshake import CONNECT, hello_request  # noqa: PLC0415

    credentials = grpc.ssl_channel_credentials(Path(ca).read_bytes())
    first = hello_request("x" * 43, "attacker", "1") if kind == "bad-hello" else os.urandom(2 * 2**20)
    attempts = 0
    codes: dict[str, int] = {}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    next_turn = loop.time()

    async def slot() -> None:
        nonlocal attempts, next_turn
        while not stop.is_set():
            now = loop.time()
            next_turn = max(next_turn + 1 / rate, now)
            await asyncio.sleep(next_turn - now)
            attempts += 1
            options = [("grpc.ssl_target_name_override", "localhost"), ("grpc.max_send_message_length", -1)]
            async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials, options=options) as channel:
                call = channel.stream_stream(CONNECT)(iter([first]), timeout=10)
                try:
                    async for _ in call:
                        break
                    code = (await call.code()).name
                except grpc.aio.AioRpcError as error:
                    code = error.code().name
                codes[code] = codes.get(code, 0) + 1

    tasks = [asyncio.create_task(slot()) for _ in range(slots)]
    await stop.wait()
    print(f"attempts={attempts} answers={','.join(f'{k}:{v}' for k, v in sorted(codes.items()))}", flush=True)
    for task in tasks:
        task.cancel()
    os._exit(0)


async def sink(kind: str, cert: str, key: str, cap: int, hold_for: float) -> None:
    """The harmless listener of the baseline, in a process of its own: the door's own front, with its
    caps, before a server that only finishes the TLS handshake (for ``tls``) and holds each connection
    ``hold_for`` seconds, as the door's gRPC does with one that opens no stream. So the attacker makes
    the same attempts at it as at the door, and nothing of the referee runs."""
    from referee.remote.front import Front, Limits  # noqa: PLC0415

    context = None
    if kind in TLS_KINDS:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        context.set_alpn_protocols(["h2"])

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(reader.read(), hold_for)
        writer.close()

    folder = tempfile.mkdtemp(prefix="door-sink-")
    inner = f"{folder}/sink.sock"
    await asyncio.start_unix_server(hold, inner, ssl=context, backlog=4096)
    front = Front(inner, Limits(per_address=cap), lambda host, why: None)
    print(await front.start("127.0.0.1", 0), flush=True)
    await asyncio.Event().wait()


# --- the league and its phases ---------------------------------------------------------------------


def stored(database: Path) -> tuple[int, int]:
    """Matches stored, and those of the remote entrant ``far``."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)) as db:
            total = db.execute("SELECT count(*) FROM matches").fetchone()[0]
            far = db.execute("SELECT count(DISTINCT match_id) FROM seats WHERE entrant = 'far'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0, 0
    return int(total), int(far)


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time of process ``pid`` so far (not its bots': the referee's own work)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descriptors(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


@dataclass(frozen=True)
class Phase:
    pace: float
    """Matches stored a minute."""
    far: float
    """The remote bot's matches a minute."""
    cpu_ms: float
    """The referee's CPU time per stored match, milliseconds (less disturbed by other load than pace)."""
    descriptors: int
    attacker: str


def phase(
    run: subprocess.Popen[bytes],
    database: Path,
    target: int,
    kind: str,
    sources: list[str],
    args: argparse.Namespace,
    folder: Path,
) -> Phase:
    """One window with the attacker pointed at ``target``: matches a minute, the remote bot's, the
    referee's most open descriptors, and the attacker's own line."""
    attacker = subprocess.Popen(
        [sys.executable, __file__, "attack", str(target), kind, ",".join(sources), str(args.sockets),
         str(args.reopen), str(args.rate), str(folder / "ca.pem")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        started = time.monotonic()
        before, cpu = stored(database), cpu_seconds(run.pid)
        most = 0
        while time.monotonic() - started < args.window:
            most = max(most, descriptors(run.pid))
            time.sleep(0.5)
        after, cpu = stored(database), cpu_seconds(run.pid) - cpu
        minutes = (time.monotonic() - started) / 60
        attacker.send_signal(signal.SIGTERM)
        line = (attacker.communicate(timeout=30)[0] or "").strip()
    finally:
        attacker.kill()
        attacker.wait()
    time.sleep(args.settle)  # the door drops what is left within its timeouts
    matches = after[0] - before[0]
    return Phase(
        matches / minutes, (after[1] - before[1]) / minutes, cpu * 1000 / max(matches, 1), most, line
    )


def league_run(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="door-attacks-"))
    certificates(folder)
    local = "".join(LOCAL.format(n=n, root=ROOT) for n in range(args.local))
    path = folder / "league.yaml"
    path.write_text(LEAGUE.format(local=local))
    token = subprocess.run(
        [args.referee, "token", "issue", path, "far"], capture_output=True, text=True, check=True
    )
    (folder / "far.token").write_text(token.stdout)
    port = free_port()
    log = (folder / "run.log").open("wb")
    tls = ["--tls-cert", str(folder / "server.pem"), "--tls-key", str(folder / "server.key")]
    limit = ["prlimit", f"--nofile={args.nofile}:{args.nofile}", "--"] if args.nofile else []
    run = subprocess.Popen(
        [*limit, args.referee, "run", path, "--listen", f"127.0.0.1:{port}", *tls], stdout=log, stderr=log
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYRAMID_")} | {
        "PYRAMID_ADDRESS": f"localhost:{port}", "PYRAMID_TOKEN_FILE": str(folder / "far.token"),
        "PYRAMID_TLS_CA": str(folder / "ca.pem"), "PYTHONUNBUFFERED": "1",
    }  # fmt: skip
    bot_log = (folder / "far.log").open("wb")
    bot = subprocess.Popen(
        [sys.executable, "-m", "sample_bots.random_bot"], cwd=ROOT, env=env, stdout=bot_log, stderr=bot_log
    )
    database = folder / "results.sqlite"
    try:
        deadline = time.monotonic() + 120
        while not (database.exists() and stored(database)[1] > 0):
            assert time.monotonic() < deadline, (folder / "run.log").read_text()
            time.sleep(0.5)
        print(
            f"# {folder}; load {os.getloadavg()[0]:.1f}; {args.sockets} sockets, {args.window:g}s windows, "
            f"the referee's open-file limit {args.nofile or 'as given'}; {args.rate:g} attempts/s at most, "
            f"reopened after {args.reopen:g}s (0: never); {args.referee}",
            flush=True,
        )
        results: dict[str, list[tuple[float, float]]] = {}
        for round_ in range(args.rounds):
            for name in args.kinds:
                kind, sources = KINDS[name]
                pem, key = str(folder / "server.pem"), str(folder / "server.key")
                sink_process = subprocess.Popen(
                    [sys.executable, __file__, "sink", kind, pem, key, str(args.cap), str(HOLD)],
                    stdout=subprocess.PIPE,
                    text=True,
                )
                try:
                    assert sink_process.stdout is not None
                    sink_port = int(sink_process.stdout.readline())
                    order = [("baseline", sink_port), ("attack", port)]
                    if round_ % 2:
                        order.reverse()
                    phases: dict[str, Phase] = {}
                    for what, target in order:
                        reconnects = (folder / "far.log").read_text(errors="replace").count("reconnecting")
                        seen = phase(run, database, target, kind, sources, args, folder)
                        lost = (folder / "far.log").read_text(errors="replace").count(
                            "reconnecting"
                        ) - reconnects
                        phases[what] = seen
                        print(
                            f"{name:10} {what:8} {seen.pace:6.1f} matches/min (far {seen.far:5.1f}/min, far "
                            f"reconnects {lost}), referee {seen.cpu_ms:5.1f} "
                            f"ms CPU/match, fds max {seen.descriptors}, attacker {seen.attacker}; "
                            f"load {os.getloadavg()[0]:.1f}",
                            flush=True,
                        )
                finally:
                    sink_process.kill()
                    sink_process.wait()
                results.setdefault(name, []).append((phases["attack"], phases["baseline"]))
        for name, pairs in results.items():
            paces = [attack.pace / baseline.pace for attack, baseline in pairs if baseline.pace] or [0.0]
            cpu = [baseline.cpu_ms / attack.cpu_ms for attack, baseline in pairs if attack.cpu_ms] or [0.0]
            print(
                f"door_attacks kind={name} sockets={args.sockets} pace_ratio_median="
                f"{statistics.median(paces):.2f} pace_ratios={','.join(f'{r:.2f}' for r in paces)} "
                f"cpu_ratio_median={statistics.median(cpu):.2f} "
                f"cpu_ratios={','.join(f'{r:.2f}' for r in cpu)}",
                flush=True,
            )
    finally:
        run.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            run.wait(60)
        run.kill()
        bot.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            bot.wait(30)
        bot.kill()


# --- what the front adds to a round trip ------------------------------------------------------------


async def relay_cost(args: argparse.Namespace) -> None:
    import grpc  # noqa: PLC0415  (after the arguments: the attacker and the sink need no gRPC)

    from referee.match.server import SERVER_OPTIONS, _add_referee_service  # noqa: PLC0415
    from referee.remote.door import Door, Keepalive, open_door  # noqa: PLC0415
    from referee.remote.front import Limits  # noqa: PLC0415
    from referee.remote.lobby import LEAGUE_OVER, Lobby  # noqa: PLC0415
    from referee.remote.settings import RemoteSettings  # noqa: PLC0415
    from referee.remote.tokens import TokenBook  # noqa: PLC0415

    folder = Path(tempfile.mkdtemp(prefix="door-relay-"))
    certificates(folder)
    book = TokenBook(folder / "tokens.json")
    (folder / "far.token").write_text(book.issue("far"))
    lobby = Lobby(30, idle_ping_every=3600)
    door = Door(book, ["far"], lobby)
    lobby.valid = door.still_valid
    keepalive = Keepalive(20, 60)
    settings = RemoteSettings("127.0.0.1:0", folder / "server.pem", folder / "server.key")
    fronted, front_port = await open_door(door, settings, keepalive)
    direct = grpc.aio.server(
        options=list(
            dict(
                [
                    *SERVER_OPTIONS,
                    ("grpc.max_concurrent_streams", 4),
                    *keepalive.options(),
                    *Limits().options(),
                ]
            ).items()
        )
    )
    _add_referee_service(door, direct)  # type: ignore[arg-type]
    credentials = grpc.ssl_server_credentials(
        [((folder / "server.key").read_bytes(), (folder / "server.pem").read_bytes())]
    )
    direct_port = direct.add_secure_port("127.0.0.1:0", credentials)
    await direct.start()
    nonces = itertools.count(10_000)
    figures: dict[str, list[float]] = {"front": [], "direct": []}
    for _ in range(args.rounds):
        for name, port in (("front", front_port), ("direct", direct_port)):
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYRAMID_")} | {
                "PYRAMID_ADDRESS": f"localhost:{port}", "PYRAMID_TOKEN_FILE": str(folder / "far.token"),
                "PYRAMID_TLS_CA": str(folder / "ca.pem"),
            }  # fmt: skip
            bot = subprocess.Popen(
                [sys.executable, "-m", "sample_bots.random_bot"], cwd=ROOT, env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                (session,) = await lobby.claim(["far"], wait=60)
                trips = [await session.ping(next(nonces), 5) for _ in range(args.pings)]
                figures[name].append(statistics.median(t for t in trips if t is not None) * 1e6)
                await lobby.release("far", session)
                session.close(LEAGUE_OVER)  # the bot stops by itself
                await asyncio.to_thread(bot.wait, 30)
            finally:
                bot.kill()
                bot.wait()
            await asyncio.sleep(0.5)
    await fronted.stop(0)
    await direct.stop(0)
    front, plain = statistics.median(figures["front"]), statistics.median(figures["direct"])
    print(
        f"door_relay pings={args.pings} rounds={args.rounds} front_us={front:.0f} direct_us={plain:.0f} "
        f"added_us={front - plain:.0f} front={','.join(f'{v:.0f}' for v in figures['front'])} "
        f"direct={','.join(f'{v:.0f}' for v in figures['direct'])} load={os.getloadavg()[0]:.1f}",
        flush=True,
    )


# --- what the door alone spends under each attack ----------------------------------------------------


async def door_only(args: argparse.Namespace) -> None:
    """The door, and nothing else, in this process: its CPU a second while the attacker works on it."""
    from referee.remote.door import Door, Keepalive, open_door  # noqa: PLC0415
    from referee.remote.lobby import Lobby  # noqa: PLC0415
    from referee.remote.settings import RemoteSettings  # noqa: PLC0415
    from referee.remote.tokens import TokenBook  # noqa: PLC0415

    folder = Path(tempfile.mkdtemp(prefix="door-only-"))
    certificates(folder)
    lobby = Lobby(30)
    door = Door(TokenBook(folder / "tokens.json"), ["far"], lobby)
    settings = RemoteSettings("127.0.0.1:0", folder / "server.pem", folder / "server.key")
    server, port = await open_door(door, settings, Keepalive(20, 60))
    try:
        for name in ["idle", *args.kinds]:
            kind, sources = KINDS.get(name, ("", []))
            attacker = None
            if kind:
                command = [sys.executable, __file__, "attack", str(port), kind, ",".join(sources)]
                command += [str(args.sockets), str(args.reopen), str(args.rate), str(folder / "ca.pem")]
                attacker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
                await asyncio.sleep(3)  # its sockets opened
            before, loop_before = resource.getrusage(resource.RUSAGE_SELF), time.thread_time()
            await asyncio.sleep(args.window)
            after, loop_cpu = resource.getrusage(resource.RUSAGE_SELF), time.thread_time() - loop_before
            line = ""
            if attacker is not None:
                attacker.send_signal(signal.SIGTERM)
                line = (attacker.communicate(timeout=30)[0] or "").strip()
                attacker.kill()
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            print(
                f"door_only kind={name} cpu_ms_per_s={cpu * 1000 / args.window:.1f} "
                f"event_loop_ms_per_s={loop_cpu * 1000 / args.window:.1f} attacker={line or '-'} "
                f"load={os.getloadavg()[0]:.1f}",
                flush=True,
            )
            await asyncio.sleep(args.settle)
    finally:
        await server.stop(0)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("attack", "sink"):  # they hold thousands of sockets
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if len(sys.argv) > 1 and sys.argv[1] == "attack":
        port, kind, sources, sockets, reopen, rate, ca = sys.argv[2:9]
        asyncio.run(attack(int(port), kind, sources.split(","), int(sockets), float(reopen), float(rate), ca))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "sink":
        kind, cert, key, cap, hold_for = sys.argv[2:7]
        asyncio.run(sink(kind, cert, key, int(cap), float(hold_for)))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=1500)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=8.0, help="seconds between phases")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--reopen", type=float, default=1.0, help="seconds before a closed socket is reopened (0: never)"
    )
    parser.add_argument(
        "--rate", type=float, default=200.0, help="the attacker's connection attempts a second"
    )
    parser.add_argument("--local", type=int, default=4, help="local entrants beside the remote bot")
    parser.add_argument(
        "--kinds", type=lambda text: text.split(","), default=DEFAULT_KINDS, help=f"of {', '.join(KINDS)}"
    )
    parser.add_argument(
        "--nofile", type=int, default=1024, help="the referee's open-file limit, soft and hard (0: as given)"
    )
    parser.add_argument("--cap", type=int, default=8, help="the sink's connections per address (the door's)")
    parser.add_argument("--referee", default=REFEREE, help="the referee executable (another checkout's)")
    parser.add_argument("--relay", action="store_true")
    parser.add_argument("--door-only", action="store_true", help="the door alone: its CPU under each attack")
    parser.add_argument("--pings", type=int, default=2000)
    args = parser.parse_args()
    if args.relay:
        asyncio.run(relay_cost(args))
    elif args.door_only:
        asyncio.run(door_only(args))
    else:
        league_run(args)


if __name__ == "__main__":
    main()
