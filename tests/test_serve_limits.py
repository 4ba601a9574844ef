"""What a stranger can do to ``referee serve``'s web server, through a real server process: request
floods (refused beyond a rate per address, and never stopping the play, whose reads run in reader
processes), hosts it does not serve, event streams that never read, idle connections, page names no
file can have, and a Ctrl-C while a person plays."""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import socket
import sqlite3
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator

import pytest

from referee.web.events import LISTENERS_PER_ADDRESS, SEND_DEADLINE
from referee.web.limits import CONNECTIONS_PER_ADDRESS, REQUEST_BURST, REQUEST_DEADLINE, REQUEST_RATE
from support import ROOT
from support.cli import referee
from support.leagues import MODULE_BOTS
from support.serve import Served, serve, wait_for

LEAGUE = f"""\
name: Busy duel
seed: 5
players: 2
schedule: {{format: round-robin, rounds: 1000, seating: single}}
database: results.sqlite
entrants:
{MODULE_BOTS}  - name: other
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""
"""Three in-process entrants and 3,000 short matches (a quick machine plays 80 a second): the league
plays on for the module's tests, each match watched card by card (``seating: single``), so that events
flow."""

DROPPED_WITHIN = SEND_DEADLINE + 30.0
"""Seconds within which a listener that never reads is dropped and its connection closed: its buffers
fill within a few matches, then its queue or its send deadline drops it."""


@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("busy"), LEAGUE)


def test_requests_beyond_the_rate_of_an_address_are_refused_with_retry_after(busy):
    """Eight keep-alive connections from one address, each asking as fast as it is answered: far beyond
    the rate, whose burst is answered and the rest refused with a time to come back."""
    statuses: Counter[int] = Counter()
    refused: list[tuple[dict[str, str], bytes]] = []

    def ask() -> None:
        connection = http.client.HTTPConnection(
            "127.0.0.1", busy.port, timeout=30, source_address=("127.0.0.7", 0)
        )
        try:
            for _ in range(REQUEST_BURST // 2):
                connection.request("GET", "/api/v1/live", headers={"Host": f"127.0.0.1:{busy.port}"})
                answer = connection.getresponse()
                body = answer.read()
                statuses[answer.status] += 1
                if answer.status == 429:
                    refused.append(({k.lower(): v for k, v in answer.getheaders()}, body))
        finally:
            connection.close()

    clients = [threading.Thread(target=ask) for _ in range(8)]
    for client in clients:
        client.start()
    for client in clients:
        client.join(120)
    assert statuses[200] >= REQUEST_BURST, statuses  # the burst, and what the rate refills meanwhile
    assert statuses[429] > 0, statuses
    assert set(statuses) == {200, 429}
    headers, body = refused[0]
    assert int(headers["retry-after"]) >= 1
    assert "127.0.0.7 sent more than" in json.loads(body)["error"]
    assert busy.request("/api/v1/live", source="127.0.0.8")[0] == 200  # another address: its own rate


def test_play_goes_on_while_a_flood_of_reads_runs(busy):
    """Eight clients from four addresses ask as fast as the rate of their address allows (each at most
    half of it: on a quick machine the kept answers come back faster than the rate, and the requests
    over it would be refused with 429, never read) for what costs the server most: every match, the
    leaderboard, one match, a match's page. The reads run in reader processes, and the league goes on
    storing matches meanwhile."""
    wait_for(lambda: busy.stored() >= 60, timeout=300, every=0.2)
    quiet_from = busy.stored()
    time.sleep(8)
    quiet = busy.stored() - quiet_from
    ids = [m["match_id"] for m in json.loads(busy.request("/api/v1/matches")[2])["matches"]][:40]
    paths = [
        "/api/v1/matches",
        "/api/v1/leaderboard",
        "/api/v1/entrants",
        "/match-0003.html",
        *(f"/api/v1/matches/{urllib.parse.quote(i, safe='')}" for i in ids),
    ]
    statuses: Counter[int] = Counter()
    stop = threading.Event()

    def flood(source: str, offset: int) -> None:
        number, pace = offset, 2 / REQUEST_RATE  # two clients an address: the address at its rate
        while not stop.is_set():
            number += 1
            started = time.monotonic()
            with contextlib.suppress(OSError):
                statuses[busy.request(paths[number % len(paths)], source=source)[0]] += 1
            time.sleep(max(0.0, started + pace - time.monotonic()))

    clients = [threading.Thread(target=flood, args=(f"127.0.0.{40 + n}", n), daemon=True) for n in range(12)]
    flood_from = busy.stored()
    for client in clients:
        client.start()
    time.sleep(8)
    during = busy.stored() - flood_from
    stop.set()
    for client in clients:
        client.join(70)
    assert statuses[200] > 20, statuses  # the flood was answered, not refused
    assert set(statuses) <= {200, 503}, statuses
    assert quiet > 0
    assert during >= max(3, quiet // 4), f"{during} matches stored during the flood, {quiet} before it"


def test_a_page_name_too_long_for_a_file_is_not_found_and_logs_nothing(busy):
    assert busy.request("/" + "a" * 300 + ".html")[0] == 404
    assert busy.request("/" + urllib.parse.quote("é" * 150) + ".html")[0] == 404  # 300 bytes: ENAMETOOLONG
    assert busy.request("/" + "a" * 300)[0] == 404
    assert "Traceback" not in busy.log()
    assert "File name too long" not in busy.log()


def _listener(port: int, source: str) -> socket.socket:
    """An event stream that will never read: its receive buffer small, so that it fills soon."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return sock


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed (or reset) the connection; what it sent before is read and dropped."""
    sock.setblocking(False)
    try:
        while sock.recv(1 << 16):
            pass
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def _server_sockets(server_port: int, client_ports: set[int]) -> list[str]:
    """The sockets of the server's side still open to one of ``client_ports``, by TCP state (``01``
    established, ``08`` CLOSE-WAIT...), whether the server still holds them or the kernel does."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                local, remote = (int(f.rsplit(":", 1)[1], 16) for f in fields[1:3])
                if local == server_port and remote in client_ports:
                    found.append(fields[3])
    return found


def test_event_streams_that_never_read_are_dropped_and_their_sockets_closed(tmp_path):
    """On a league of its own, just started, so that events flow while the listeners never read: on a
    quick machine the module's busy league can be over by now, and a listener sent nothing is never
    behind."""
    served = serve(tmp_path, LEAGUE)
    try:
        _never_read_then_dropped(next(served))
    finally:
        served.close()


def _never_read_then_dropped(busy: Served) -> None:
    wait_for(lambda: busy.stored() >= 1, timeout=120, every=0.2)
    held = [_listener(busy.port, "127.0.0.30") for _ in range(LISTENERS_PER_ADDRESS)]
    extra = _listener(busy.port, "127.0.0.30")  # one too many for the address
    extra.settimeout(10)
    assert extra.recv(100).startswith(b"HTTP/1.1 429"), "a stream beyond the address's cap was accepted"
    extra.close()
    ports = {sock.getsockname()[1] for sock in held}
    begun = time.monotonic()
    # Never read until the server has let go of them all (its side no longer ESTABLISHED): reading here
    # would make them listeners that keep up, and their drop would wait on how fast matches go.
    wait_for(lambda: "01" not in _server_sockets(busy.port, ports), timeout=DROPPED_WITHIN, every=0.5)
    took = time.monotonic() - begun
    wait_for(lambda: all(_closed(sock) for sock in held), timeout=10, every=0.2)  # the close reaches them
    wait_for(lambda: not _server_sockets(busy.port, ports), timeout=10, every=0.2)
    left = _server_sockets(busy.port, ports)
    assert not left, left  # the server's side is gone too
    for sock in held:
        sock.close()
    assert took < DROPPED_WITHIN
    # listeners that go away themselves leave nothing on the server's side (no CLOSE-WAIT)
    gone = [_listener(busy.port, "127.0.0.31") for _ in range(LISTENERS_PER_ADDRESS)]
    time.sleep(1)
    ports = {sock.getsockname()[1] for sock in gone}
    for sock in gone:
        sock.close()
    wait_for(lambda: not _server_sockets(busy.port, ports), timeout=5, every=0.2)


def test_connections_are_capped_per_address_and_idle_ones_closed(busy):
    idle = []
    for _ in range(CONNECTIONS_PER_ADDRESS):
        sock = socket.create_connection(
            ("127.0.0.1", busy.port), timeout=10, source_address=("127.0.0.40", 0)
        )
        idle.append(sock)
    time.sleep(0.5)  # every one counted
    extra = socket.create_connection(("127.0.0.1", busy.port), timeout=10, source_address=("127.0.0.40", 0))
    assert extra.recv(100).startswith(b"HTTP/1.1 429"), "a connection beyond the address's cap was kept"
    extra.close()
    assert busy.request("/api/v1/live", source="127.0.0.41")[0] == 200  # others are served meanwhile
    wait_for(lambda: all(_closed(sock) for sock in idle), timeout=REQUEST_DEADLINE + 10, every=0.5)
    for sock in idle:
        sock.close()
    assert busy.request("/api/v1/live", source="127.0.0.40")[0] == 200  # and the address may come back


def test_only_the_bound_loopback_address_and_the_public_hosts_are_answered(tmp_path):
    served = serve(
        tmp_path, LEAGUE.replace("rounds: 400", "rounds: 1"), "--public-host", "arena.test", host="127.0.0.2"
    )
    busy2 = next(served)
    try:
        port = busy2.port
        assert busy2.request("/api/v1/live", source="127.0.0.2", host=f"127.0.0.2:{port}")[0] == 200
        assert busy2.request("/api/v1/live", source="127.0.0.2", host="arena.test")[0] == 200
        assert busy2.request("/api/v1/live", source="127.0.0.2", host="evil.example")[0] == 400
        assert busy2.request("/api/v1/live", source="127.0.0.2", host=f"localhost:{port}")[0] == 400
        assert busy2.request("/api/v1/live", source="127.0.0.2", host=f"127.0.0.1:{port}")[0] == 400
        busy2.process.send_signal(signal.SIGINT)
        out, err = busy2.process.communicate(timeout=30)  # stopped here, to read what it said
    finally:
        served.close()
    out += err
    assert "(Ctrl-C stops it)" in out  # what it said was read
    assert "--public-host NAME" not in out  # loopback: no hint


def test_a_server_bound_to_every_address_answers_its_own_addresses_only_and_says_how_to_name_a_host(tmp_path):
    """Bound beyond loopback with no ``--public-host``: a request naming any other host is refused, and
    the start says how to name the public one (docs/SERVER.md, "Safety")."""
    served = serve(tmp_path, LEAGUE.replace("rounds: 400", "rounds: 1"), host="0.0.0.0")
    wide = next(served)
    try:
        port = wide.port
        assert wide.request("/api/v1/live", host=f"127.0.0.1:{port}")[0] == 200
        assert wide.request("/api/v1/live", host="evil.example")[0] == 400
        assert wide.request("/api/v1/live", host=f"127.0.0.1.evil.example:{port}")[0] == 400
        wide.process.send_signal(signal.SIGINT)
        out, err = wide.process.communicate(timeout=30)  # stopped here, to read what it said
    finally:
        served.close()
    out += err
    assert "only requests for an address of this machine are answered" in out
    assert "add --public-host NAME" in out


def test_a_bad_public_host_is_one_line(tmp_path):
    (tmp_path / "league.yaml").write_text(LEAGUE, encoding="utf-8")
    result = referee(
        "serve", "league.yaml", "--http", "127.0.0.1:0", "--public-host", "*", cwd=tmp_path, timeout=60
    )
    assert result.returncode == 2
    assert "--public-host" in result.stderr
    assert "expected a host name" in result.stderr
    assert "Traceback" not in result.stderr


def test_ctrl_c_during_a_human_match_stores_nothing_of_it(tmp_path):
    """docs/SERVER.md: a human match in play when the server stops is not stored (nor rated, as ever);
    the league's stored matches stay."""
    served = serve(tmp_path, LEAGUE.replace("rounds: 400", "rounds: 2"))
    duel = next(served)
    connection = http.client.HTTPConnection("127.0.0.1", duel.port, timeout=30)
    try:
        body = json.dumps({"opponents": ["random"], "name": "person"})
        connection.request("POST", "/api/v1/human", body, {"content-type": "application/json"})
        answer = connection.getresponse()
        table = json.loads(answer.read())["table"]
        assert answer.status == 200
        token = table.rsplit("/", 1)[1]

        def asked() -> bool:
            connection.request("GET", f"/api/v1/human/{token}")
            return bool(json.loads(connection.getresponse().read())["your_turn"])

        wait_for(asked, timeout=120, every=0.2)
    finally:
        connection.close()
    duel.process.send_signal(signal.SIGINT)
    _out, err = duel.process.communicate(timeout=60)
    assert duel.process.returncode == 0, err
    assert "Traceback" not in err
    human = tmp_path / "results-human.sqlite"
    if human.exists():
        with contextlib.closing(sqlite3.connect(human)) as db:
            assert db.execute("SELECT COUNT(*) FROM human_matches").fetchone()[0] == 0
    served.close()
