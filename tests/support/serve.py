"""``referee serve`` as its users start it: a real server process on a free loopback port, playing a
league file written for it, read over plain HTTP; and the polling its tests wait with."""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from support.cli import REFEREE
from support.net import free_port

Value = TypeVar("Value")


def get(port: int, path: str, host: str = "127.0.0.1") -> Any:
    """The JSON the server on ``host:port`` answers ``GET path`` with; an error status raises."""
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=30) as answer:
        return json.loads(answer.read())


def stored(port: int) -> list[dict[str, Any]]:
    """The stored matches, as the JSON API lists them, page after page."""
    page = get(port, "/api/v1/matches")
    found = list(page["matches"])
    while page["next"] is not None:
        page = get(port, "/api/v1/matches?after=" + urllib.parse.quote(page["next"], safe=""))
        found += page["matches"]
    return found


@dataclass
class Served:
    """A ``referee serve`` of the league file ``folder/league.yaml``, listening on ``host:port``."""

    folder: Path
    process: subprocess.Popen[str]
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def get(self, path: str) -> Any:
        return get(self.port, path, self.host)

    def request(
        self, path: str, source: str = "127.0.0.1", host: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """``GET path`` from the address ``source`` with the ``Host`` header ``host``: the status, the
        headers (in lower case) and the body, whatever the status."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60, source_address=(source, 0))
        try:
            connection.request("GET", path, headers={"Host": host or f"{self.host}:{self.port}"})
            answer = connection.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            connection.close()

    def stored(self) -> int:
        """How many matches the results database holds, read beside the server."""
        database = self.folder / "results.sqlite"
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)) as db:
            return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def log(self) -> str:
        logs = list(self.folder.glob("*-logs/referee.log"))
        return logs[0].read_text(encoding="utf-8") if logs else ""


def serve(folder: Path, text: str, *options: str, host: str = "127.0.0.1") -> Iterator[Served]:
    """Writes ``text`` as ``folder/league.yaml`` and serves it on a free port of ``host``, yielding the
    server once it answers; stopped afterwards as a person stops it, with Ctrl-C (killed if it does not
    end within 30 s). A generator, for a fixture to ``yield from``."""
    (folder / "league.yaml").write_text(text, encoding="utf-8")
    port = free_port(host)
    process = subprocess.Popen(
        [REFEREE, "serve", "league.yaml", "--http", f"{host}:{port}", *options],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Served(folder, process, host, port)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            served.get("/api/v1/live")
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


def wait_for(condition: Callable[[], Value], timeout: float = 120.0, every: float = 0.1) -> Value:
    """The first true value of ``condition``, asked every ``every`` seconds; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"not within {timeout}s")


def until(what: str, check: Callable[[], bool], timeout: float = 90.0) -> None:
    """Waits for ``check`` to hold, asking a server that may not answer yet; fails, saying ``what``,
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (OSError, urllib.error.HTTPError):
            pass  # the server is still starting
        time.sleep(0.3)
    raise AssertionError(f"not within {timeout}s: {what}")
