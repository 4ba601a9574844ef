"""The committed Python stubs are exactly what proto/generate.sh makes from proto/ today."""

import os
import shutil
import subprocess
import sys

import pytest
from google.protobuf.descriptor import FieldDescriptor

from pyramid_sdk.v1 import pyramid_pb2, views_pb2
from support import ROOT

GENERATED = ROOT / "sdk/python/pyramid_sdk/v1"


@pytest.mark.slow
def test_generated_stubs_are_fresh(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "proto", copy / "proto")
    (copy / "sdk/python").mkdir(parents=True)
    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run(
        ["bash", "proto/generate.sh"], cwd=copy, env=env, check=True, capture_output=True, text=True
    )
    fresh = copy / "sdk/python/pyramid_sdk/v1"
    names = sorted(path.name for path in fresh.iterdir())
    assert names == sorted(path.name for path in GENERATED.iterdir() if path.is_file())
    for name in names:
        assert (fresh / name).read_bytes() == (GENERATED / name).read_bytes(), (
            f"sdk/python/pyramid_sdk/v1/{name} is stale: run proto/generate.sh and commit the result"
        )


def test_wire_names_come_from_the_proto_package():
    assert pyramid_pb2.DESCRIPTOR.package == "pyramid.v1"
    assert pyramid_pb2.DESCRIPTOR.services_by_name["RefereeService"].full_name == "pyramid.v1.RefereeService"


def test_the_sdks_views_read_the_same_bytes_as_the_protocol_messages():
    """views.proto declares nested messages as bytes, which protobuf encodes identically; every other field
    must match pyramid.proto's in number, name, type and repetition."""
    pairs = [
        (views_pb2.ConnectResponseView.DESCRIPTOR, pyramid_pb2.ConnectResponse.DESCRIPTOR),
        (views_pb2.ActionRequestView.DESCRIPTOR, pyramid_pb2.ActionRequest.DESCRIPTOR),
    ]
    for view, real in pairs:
        assert sorted(view.fields_by_number) == sorted(real.fields_by_number), real.name
        for number, field in view.fields_by_number.items():
            original = real.fields_by_number[number]
            assert field.name == original.name
            assert field.is_repeated == original.is_repeated
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                assert field.message_type.name == original.message_type.name + "View"
            elif field.type == FieldDescriptor.TYPE_BYTES:
                assert original.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_BYTES)
            else:
                assert field.type == original.type, field.name
        assert [o.name for o in view.oneofs] == [o.name for o in real.oneofs]
