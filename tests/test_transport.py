"""The gRPC settings the referee and the Python SDK choose for their own process, checked in fresh
interpreters: the older I/O manager and a silent log, only before gRPC loads, deferring to a user's choice,
leaking into no child."""

import json
import os
import re
import subprocess
import sys

import pytest

from pyramid_sdk.transport import CHECKED_VERSIONS, EXPERIMENTS_VARIABLE

PROBE = """
import json, os, sys
{before}
import {module}
from pyramid_sdk import transport
print(json.dumps({{"tuned": transport.tuned(), "variable": os.environ.get("{variable}"),
                   "version": transport._grpcio_version()}}))
"""


def probe(module: str, before: str = "", **env: str) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if k != EXPERIMENTS_VARIABLE} | env
    code = PROBE.format(before=before, module=module, variable=EXPERIMENTS_VARIABLE)
    result = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    )
    assert "Unknown experiment" not in result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "module",
    ["referee.match.server", "referee.match.launcher", "referee.match.sessions", "pyramid_sdk.client"],
)
def test_the_referee_and_sdk_tune_grpc_for_their_own_process_only(module):
    seen = probe(module)
    checked = CHECKED_VERSIONS[0] <= tuple(seen["version"]) <= CHECKED_VERSIONS[1]
    assert seen["tuned"] is checked
    assert seen["variable"] is None  # read by gRPC, then removed: bots start with the referee's environment


def test_importing_the_transport_module_changes_nothing():
    code = (
        "import os, sys\nfrom pyramid_sdk import transport\n"
        f"print('grpc' in sys.modules, transport.tuned(), os.environ.get('{EXPERIMENTS_VARIABLE}'))"
    )
    environment = {k: v for k, v in os.environ.items() if k != EXPERIMENTS_VARIABLE}
    result = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False", "None"]


def test_the_game_library_does_not_load_grpc():
    code = "import sys\nimport pyramid_sdk\nprint('grpc' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_users_own_grpc_experiments_are_left_alone():
    seen = probe("pyramid_sdk.client", **{EXPERIMENTS_VARIABLE: ""})
    assert seen["tuned"] is False
    assert seen["variable"] == ""


def test_too_late_once_grpc_is_loaded():
    assert probe("pyramid_sdk.client", before="import grpc")["tuned"] is False


TRAFFIC = """
import asyncio
import referee.match.server
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from referee.match.sessions import SessionRegistry

async def main():
    server, port = await referee.match.server.create_server(SessionRegistry())
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    await server.stop(None)

asyncio.run(main())
"""


def endpoint_writes(**env: str) -> int:
    """Writes gRPC's EventEngine endpoints traced while a referee server answers one health check."""
    environment = {k: v for k, v in os.environ.items() if k != EXPERIMENTS_VARIABLE}
    environment |= {"GRPC_VERBOSITY": "debug", "GRPC_TRACE": "event_engine_endpoint", **env}
    result = subprocess.run(
        [sys.executable, "-c", TRAFFIC], env=environment, capture_output=True, text=True, check=True
    )
    return sum("Endpoint[" in line and "Write" in line for line in result.stderr.splitlines())


def test_the_referees_connections_bypass_eventengine():
    if not probe("referee.match.server")["tuned"]:
        pytest.skip("this grpcio is outside the versions the setting was checked with")
    assert endpoint_writes(**{EXPERIMENTS_VARIABLE: ""}) > 0  # gRPC's default: EventEngine endpoints
    assert endpoint_writes() == 0


GOAWAY = """
import asyncio, os, sys, threading
import pyramid_sdk.client
import grpc
from pyramid_sdk.stream import StreamEnded, ThreadStream

async def connect(request_iterator, context):
    await context.read()
    await context.write(b"one")
    await asyncio.sleep(30)

async def start():
    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(connect)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("s", {"m": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port

loop = asyncio.new_event_loop()
threading.Thread(target=loop.run_forever, daemon=True).start()
server, port = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
print("variable:", os.environ.get("GRPC_VERBOSITY"), flush=True)
with ThreadStream(f"127.0.0.1:{port}", "/s/m", b"hi") as stream:
    assert stream.exchange(None) == b"one"
    asyncio.run_coroutine_threadsafe(server.stop(None), loop)  # a GOAWAY, which gRPC's core logs
    try:
        stream.exchange(b"reply")
    except StreamEnded as exc:
        print("ended:", exc.code.name, flush=True)
"""


@pytest.mark.parametrize(
    ("env", "logged"), [({}, False), ({"GRPC_VERBOSITY": "debug"}, True), ({"GRPC_TRACE": "http"}, True)]
)
def test_grpcs_own_log_is_silent_unless_the_user_asks_for_it(env, logged):
    """A stopping server's GOAWAY makes gRPC's C core print ``I… chttp2_transport.cc… Got goaway`` by
    default; the SDK (and the referee, which loads gRPC through the same ``configure``) keeps every line
    of gRPC's own out of its output, and leaves them to a user who set GRPC_VERBOSITY or GRPC_TRACE."""
    environment = {k: v for k, v in os.environ.items() if k not in ("GRPC_VERBOSITY", "GRPC_TRACE")} | env
    result = subprocess.run(
        [sys.executable, "-c", GOAWAY],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "ended: UNAVAILABLE" in result.stdout
    # removed once gRPC read it: a child process starts with the environment this one was given
    assert f"variable: {env.get('GRPC_VERBOSITY')}" in result.stdout
    grpc_lines = [line for line in result.stderr.splitlines() if re.match(r"[IWED]\d{4} ", line)]
    assert bool(grpc_lines) is logged, result.stderr[-2000:]
