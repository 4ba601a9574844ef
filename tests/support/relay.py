"""A TCP relay between remote bots and the referee's door, in the test's process, that breaks its
connections on command the ways a network does: an HTTP/2 GOAWAY injected towards the bot, a reset (RST,
``SO_LINGER`` 0), or silence with both sockets left open (a half-open connection: a peer gone without a
word). New connections after a fault are relayed as usual, so a bot that reconnects plays on.

The door must speak plaintext for :meth:`Relay.goaway` (the frame is written between two of the door's
frames); the other faults work over TLS too."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass, field

FRAME_HEADER = 9
GOAWAY = 7
NO_ERROR = 0


def goaway_frame(last_stream_id: int, error_code: int, debug: bytes) -> bytes:
    """An HTTP/2 GOAWAY frame (RFC 9113, 6.8), as a server sends it when it is going away."""
    payload = struct.pack(">II", last_stream_id & 0x7FFFFFFF, error_code) + debug
    return struct.pack(">I", len(payload))[1:] + bytes((GOAWAY, 0)) + struct.pack(">I", 0) + payload


@dataclass
class _Link:
    """One relayed connection: the bot's socket and the door's."""

    bot: socket.socket
    door: socket.socket
    silent: bool = False
    """Nothing is relayed any more."""
    half_open: bool = False
    """Neither is the end of one side: only the peers' own keepalive can notice."""
    to_bot: threading.Lock = field(default_factory=threading.Lock)
    """Held while a whole frame goes to the bot, so that an injected one lands between two."""


class Relay:
    """Listens on ``127.0.0.1`` (``.address``) and relays every connection to ``target``."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.links: list[_Link] = []
        self._broken: list[_Link] = []
        """Links a fault was applied to: closed with the relay, whatever the peers did."""
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                bot, _ = self._listener.accept()
            except OSError:
                continue
            try:
                door = socket.create_connection(self.target, timeout=10)
            except OSError:  # the door is down: the bot sees its connection refused, as without a relay
                bot.close()
                continue
            door.settimeout(None)
            link = _Link(bot, door)
            with self._lock:
                self.links.append(link)
            threading.Thread(target=self._pump_up, args=(link,), daemon=True).start()
            threading.Thread(target=self._pump_down, args=(link,), daemon=True).start()

    def _pump_up(self, link: _Link) -> None:
        """The bot's bytes to the door, as they come (dropped while the link is silent)."""
        try:
            while data := link.bot.recv(65536):
                if not link.silent:
                    link.door.sendall(data)
        except OSError:
            pass
        self._end(link)

    def _pump_down(self, link: _Link) -> None:
        """The door's bytes to the bot, frame by frame (dropped while the link is silent)."""
        buffer = b""
        try:
            while data := link.door.recv(65536):
                buffer += data
                while len(buffer) >= FRAME_HEADER:
                    size = FRAME_HEADER + int.from_bytes(buffer[:3], "big")
                    if len(buffer) < size:
                        break
                    frame, buffer = buffer[:size], buffer[size:]
                    if not link.silent:
                        with link.to_bot:
                            link.bot.sendall(frame)
        except OSError:
            pass
        self._end(link)

    def _end(self, link: _Link) -> None:
        if link.half_open:
            return
        with self._lock:  # no longer current: a fault applied later is not applied to it
            if link in self.links:
                self.links.remove(link)
        for sock in (link.bot, link.door):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _current(self) -> list[_Link]:
        """The links open now, which the caller breaks: new connections are relayed as usual."""
        with self._lock:
            links, self.links = self.links, []
            self._broken += links
        return links

    def goaway(self, last_stream_id: int = 0, error_code: int = NO_ERROR, debug: bytes = b"relay") -> int:
        """Sends every current bot a GOAWAY, as if the door said it, and relays nothing more on those
        connections but their end: when the bot closes its socket, the door's is closed. Returns how
        many."""
        links = self._current()
        for link in links:
            with link.to_bot:
                link.silent = True
                with contextlib.suppress(OSError):
                    link.bot.sendall(goaway_frame(last_stream_id, error_code, debug))
        return len(links)

    def reset(self) -> int:
        """Resets every current connection on both sides (RST: ``SO_LINGER`` with a zero timeout)."""
        links = self._current()
        for link in links:
            link.silent = link.half_open = True  # the pumps' sockets fail: they have nothing more to do
            for sock in (link.bot, link.door):
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    # Wakes the pump reading it (a close would not), and sends no FIN: the close does
                    # the rest, and with a zero linger that is a reset.
                    sock.shutdown(socket.SHUT_RD)
                sock.close()
        return len(links)

    def silence(self) -> int:
        """Stops relaying on every current connection but keeps both sockets open: each peer's kernel
        still acknowledges what it is sent, and nothing ever answers."""
        links = self._current()
        for link in links:
            link.silent = link.half_open = True
        return len(links)

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self._current()
        for link in self._broken:
            for sock in (link.bot, link.door):
                sock.close()
