"""The door's front relays every byte both ways from the first: a gRPC server writes its SETTINGS the
moment the front's Unix connection is made, before the front has taken on the stranger's socket, and a
greeting lost there left a client waiting for the server until the door dropped it as idle (issue #32:
honest bots reconnected again and again under load)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from pathlib import Path

from referee.remote.front import Front, Limits

GREETING = b"SETTINGS-FIRST"
CLIENTS = 40


def _greet(listener: socket.socket) -> None:
    """A server on its own thread, as gRPC's C core is: it writes the moment it accepts, so that the
    bytes wait in the socket when the front's event loop next looks."""
    held = []
    with contextlib.suppress(OSError):
        while True:
            connection, _ = listener.accept()
            connection.sendall(GREETING)
            held.append(connection)


async def _relay_greetings(folder: Path) -> list[bytes]:
    inner = str(folder / "inner.sock")

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(inner)
    listener.listen(CLIENTS)
    threading.Thread(target=_greet, args=(listener,), daemon=True).start()
    front = Front(inner, Limits(per_address=CLIENTS, total=CLIENTS), lambda host, why: None)
    port = await front.start("127.0.0.1", 0)

    async def client() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(reader.readexactly(len(GREETING)), 10)
        finally:
            writer.close()

    try:
        return await asyncio.gather(*(client() for _ in range(CLIENTS)))
    finally:
        await front.stop()
        listener.close()


def test_what_the_server_writes_before_the_stranger_is_taken_on_reaches_it(tmp_path):
    assert asyncio.run(_relay_greetings(tmp_path)) == [GREETING] * CLIENTS
