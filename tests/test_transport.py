"""The gRPC setting the referee and the Python SDK choose for their own process, checked in fresh
interpreters: it applies only before gRPC loads, defers to a user's choice, and leaks into no child."""

import json
import os
import subprocess
import sys

import pytest

from pyramid_sdk.transport import CHECKED_VERSIONS, EXPERIMENTS_VARIABLE

PROBE = """
import json, os, sys
{before}
import {module}
from pyramid_sdk import transport
print(json.dumps({{"tuned": transport.TUNED, "variable": os.environ.get("{variable}"),
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


@pytest.mark.parametrize("module", ["referee.cli", "pyramid_sdk.client"])
def test_the_referee_and_sdk_tune_grpc_for_their_own_process_only(module):
    seen = probe(module)
    checked = CHECKED_VERSIONS[0] <= tuple(seen["version"]) <= CHECKED_VERSIONS[1]
    assert seen["tuned"] is checked
    assert seen["variable"] is None  # read by gRPC, then removed: bots start with the referee's environment


def test_a_users_own_grpc_experiments_are_left_alone():
    seen = probe("pyramid_sdk.client", **{EXPERIMENTS_VARIABLE: ""})
    assert seen["tuned"] is False
    assert seen["variable"] == ""


def test_too_late_once_grpc_is_loaded():
    assert probe("pyramid_sdk.client", before="import grpc")["tuned"] is False
