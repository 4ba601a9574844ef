"""What a Python bot loads before it says hello. Every match starts fresh bot processes, so their start-up
is paid four times a match: ``import pyramid_sdk.client`` loads gRPC and four small modules of the SDK,
nothing else; protobuf, the generated classes, the wire format and the engine load with the referee's
first answer. Checked on the set of modules, in fresh interpreters, not on timings (benchmarks/README.md,
"Start-up", has the figures)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import grpc
import pytest

import pyramid_sdk
from pyramid_sdk.client import CONNECT
from pyramid_sdk.handshake import PROTOCOL_VERSION, hello_request
from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.match.server import create_server
from referee.match.sessions import SessionRegistry

CLIENT_ONLY = {"pyramid_sdk", "pyramid_sdk.client", "pyramid_sdk.handshake", "pyramid_sdk.stream"}
"""What ``import pyramid_sdk.client`` may add to what ``import grpc`` loads (``pyramid_sdk.transport`` is
loaded first, to tune gRPC)."""
LOADED_LATER = (
    "google.protobuf",
    "pyramid_sdk.v1",
    "pyramid_sdk.wire",
    "pyramid_sdk.encoding",
    "pyramid_sdk.dispatch",
    "pyramid_sdk.engine",
    "pyramid_sdk.record",
    "importlib.metadata",
)


def modules_after(code: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def later(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(LOADED_LATER))


def test_importing_the_client_loads_grpc_and_the_sdks_connection_only():
    baseline = modules_after("import grpc")
    client = modules_after("import pyramid_sdk.client")
    assert client - baseline == CLIENT_ONLY | {"pyramid_sdk.transport"}


def test_a_sample_bot_loads_the_game_library_it_plays_with_and_no_more():
    modules = modules_after("import sample_bots.random_bot, pyramid_sdk.client")
    assert {"pyramid_sdk.bot", "pyramid_sdk.observation"} <= modules
    assert later(modules) == []


def test_the_package_still_offers_every_name_it_lists():
    modules = modules_after(
        "import pyramid_sdk\n"
        "assert 'pyramid_sdk.engine' not in sys.modules\n"
        "from pyramid_sdk import *\n"
        "assert all(getattr(pyramid_sdk, name) is not None for name in pyramid_sdk.__all__)\n"
        "assert Match is pyramid_sdk.engine.Match and 'Bot' in dir(pyramid_sdk)"
    )
    assert "pyramid_sdk.engine" in modules
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = pyramid_sdk.Nothing  # type: ignore[attr-defined]


def test_the_hand_written_hello_is_what_the_generated_classes_write():
    for token, name, version in (("t0k3n", "random", "1"), ("", "", ""), ("x" * 200, "ünïcode", "2.0")):
        hello = pb.Hello(protocol_version=PROTOCOL_VERSION, token=token, bot_name=name, bot_version=version)
        assert hello_request(token, name, version) == pb.ConnectRequest(hello=hello).SerializeToString()
    other = pb.ConnectRequest.FromString(hello_request("t", "n", "v", version=300))
    assert other.hello.protocol_version == 300
    for asked in (1, 3, 2**32 - 1):  # a remote bot that asks for several matches at once
        hello = pb.Hello(protocol_version=PROTOCOL_VERSION, token="t", bot_name="n", max_matches=asked)
        written = pb.ConnectRequest(hello=hello).SerializeToString()
        assert hello_request("t", "n", "", max_matches=asked) == written
    assert f"/{pb.DESCRIPTOR.services_by_name['RefereeService'].full_name}/Connect" == CONNECT
    with pytest.raises(TypeError, match="text, not int"):
        hello_request("t", 7, "1")  # type: ignore[arg-type]


BOT = """
import atexit, sys
atexit.register(lambda: print("loaded:", *sorted(m for m in sys.modules if m.startswith({later!r}))))
from sample_bots.random_bot import RandomBot
from pyramid_sdk.client import run
run(RandomBot(), address={address!r}, token="not-the-token")
"""


def test_a_bot_process_says_hello_to_a_real_referee_before_protobuf_loads():
    """A real random bot with a wrong token: the referee reads its hand-written hello, checks the token
    and refuses it (a hello it could not read would be INVALID_ARGUMENT), and the bot exits on one line
    without ever loading protobuf or the wire format."""

    async def attempt() -> subprocess.CompletedProcess[str]:
        server, port = await create_server(SessionRegistry())
        try:
            code = BOT.format(later=LOADED_LATER, address=f"127.0.0.1:{port}")
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", code, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            out, err = await asyncio.wait_for(process.communicate(), 60)
            assert process.returncode is not None
            return subprocess.CompletedProcess([], process.returncode, out.decode(), err.decode())
        finally:
            await server.stop(None)

    result = asyncio.run(attempt())
    assert result.returncode == 1
    assert grpc.StatusCode.UNAUTHENTICATED.name in result.stderr
    assert result.stderr.strip().startswith("random: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout.strip() == "loaded:"
