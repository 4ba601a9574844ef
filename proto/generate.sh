#!/usr/bin/env bash
# Regenerates the committed Python stubs from proto/ and the Node.js SDK's copy of the .proto.
# tests/test_protocol_stubs.py fails when the stubs are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
out=sdk/python
"$python" -m grpc_tools.protoc -Ipyramid_sdk/v1=proto/pyramid/v1 \
  --python_out="$out" --grpc_python_out="$out" --pyi_out="$out" \
  proto/pyramid/v1/pyramid.proto
"$python" -m grpc_tools.protoc -Ipyramid_sdk/v1=proto/pyramid/v1 --python_out="$out" --pyi_out="$out" \
  proto/pyramid/v1/views.proto
touch "$out/pyramid_sdk/v1/__init__.py"
# The Node.js SDK package carries its own copy of the protocol (tests/test_node_package.py checks it).
mkdir -p sdk/node/proto/pyramid/v1
cp proto/pyramid/v1/pyramid.proto sdk/node/proto/pyramid/v1/pyramid.proto
