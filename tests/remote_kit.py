"""Helpers for the remote-entrant tests: a CA and a server certificate made with openssl, a league with
remote entrants, tokens issued through the real CLI, and remote bots started as their authors would
start them (``PYRAMID_ADDRESS``, ``PYRAMID_TOKEN_FILE``, ``PYRAMID_TLS_CA``)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from support.cli import REFEREE, referee

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Certificates:
    ca: Path
    cert: Path
    key: Path


def make_certificates(folder: Path, addresses: tuple[str, ...] = ("127.0.0.1",)) -> Certificates:
    """A test CA and a server certificate it signed, for ``localhost`` and ``addresses``
    (shared/notes/network-tests.md's recipe)."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=pyramid-test-ca", "-keyout", "ca.key", "-out", "ca.pem",
    )  # fmt: skip
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost",
        "-keyout", "srv.key", "-out", "srv.csr",
    )  # fmt: skip
    names = ",".join(["DNS:localhost", *(f"IP:{address}" for address in addresses)])
    (folder / "ext.cnf").write_text(f"subjectAltName={names}\n")
    openssl(
        "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext.cnf", "-out", "srv.pem",
    )  # fmt: skip
    return Certificates(folder / "ca.pem", folder / "srv.pem", folder / "srv.key")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def league(folder: Path, remote: list[str], local: int = 1, wait: str = "60s", extra: str = "") -> Path:
    """A 2-player round robin (balanced seatings) of ``local`` random command bots and the remote
    entrants ``remote``."""
    entrants = "".join(
        f"  - name: random{n}\n    command: python sample_bots/random_bot.py\n    cwd: {ROOT}\n"
        for n in range(local)
    )
    entrants += "".join(f"  - name: {name}\n    remote: true\n" for name in remote)
    path = folder / "league.yaml"
    path.write_text(
        "name: Remote League\nseed: 4\nplayers: 2\n"
        "schedule: {format: round-robin, rounds: 1, seating: balanced}\n"
        "time_control: {per_action: 2s, bank: 20s}\nconcurrency: 2\ndatabase: results.sqlite\n"
        f"remote: {{wait: {wait}}}\n{extra}entrants:\n{entrants}",
        encoding="utf-8",
    )
    return path


def issue(path: Path, name: str, *options: str) -> Path:
    """Issues ``name``'s token with the CLI; its file, as the bot's author keeps it."""
    result = referee("token", "issue", path, name, *options)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert token.startswith("pyr1_")
    assert "\n" not in token
    file = path.parent / f"{name}.token"
    file.write_text(token + "\n")
    return file


def remote_env(address: str, token_file: Path, ca: Path | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYRAMID_")}
    env |= {"PYRAMID_ADDRESS": address, "PYRAMID_TOKEN_FILE": str(token_file), "PYTHONUNBUFFERED": "1"}
    if ca is not None:
        env["PYRAMID_TLS_CA"] = str(ca)
    return env


def start_bot(
    command: list[str], env: dict[str, str], log: Path, prefix: tuple[str, ...] = ()
) -> subprocess.Popen[bytes]:
    """A remote bot's process, from the checkout, its output in ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen([*prefix, *command], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def start_referee(*args: object, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([REFEREE, *map(str, args)], stdout=out, stderr=subprocess.STDOUT)


def wait_for(log: Path, text: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not in {log} within {timeout}s: {log.read_text(errors='replace')}")


def stop(process: subprocess.Popen[bytes], timeout: float = 30.0) -> int:
    """The process's exit code, waiting up to ``timeout`` seconds, else killed (and the test fails)."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"process {process.args} did not end within {timeout}s") from None
