"""The observation's shapes agree on its fields (docs/ARCHITECTURE.md, "The observation's shapes").

One seat's observation is written down in several places that nothing ties together when the code runs:
the engine's dataclass, the .proto, the bytes the referee writes by hand, the lazy decoder's table, the
Node.js conversion and its typings, and two tables in the docs. Each shape's set of fields is read here
from the shape itself (the descriptor protoc compiles from the .proto, the dataclass, the bytes the
encoder writes over a whole match, the decoder's table, index.d.ts, the docs' tables, what Node.js reads
from a real request), and a field that one shape has and another lacks fails, in one line naming the
shape and the field. The other two shapes are checked whole elsewhere: the Node.js SDK's copy of the
.proto byte for byte (test_node_package.py), views.proto field by field (test_protocol_stubs.py).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from pyramid_sdk import Rules, wire
from pyramid_sdk.encoding import (
    ObservationEncoder,
    action_request,
    legal_actions_field,
    match_id_field,
    time_left_fields,
)
from pyramid_sdk.observation import Observation, Phase, Trick
from pyramid_sdk.v1 import pyramid_pb2 as pb
from support import ROOT
from support.playthrough import play_random

PROTO = ROOT / "proto/pyramid/v1/pyramid.proto"
NODE_SDK = ROOT / "sdk/node"

BESIDE_THE_MESSAGE: Mapping[str, tuple[tuple[str, str], ...]] = {
    "rules": (("MatchStart", "rules"),),
    "legal_actions": (("ActionRequest", "legal_actions"),),
    "clock": (("ActionRequest", "bank_ms"), ("ActionRequest", "per_action_ms")),
}
"""Fields of the Python and Node.js observations that travel beside the ``Observation`` message: the
rules once per match, the legal actions and the time left with each request."""

FieldSet = Set[str]


# -- the comparer ------------------------------------------------------------------------------------------


def disagreements(
    reference: str, fields: FieldSet, shapes: Mapping[str, FieldSet], kind: str = "field"
) -> list[str]:
    """One line for each field (or other ``kind`` of name) a shape lacks or has beyond ``reference``'s."""
    lines = []
    for shape, theirs in shapes.items():
        lines += [f"{shape}: no {kind} {name!r}, which {reference} has" for name in sorted(fields - theirs)]
        lines += [f"{shape}: {kind} {name!r}, which {reference} lacks" for name in sorted(theirs - fields)]
    return lines


def test_the_comparer_names_the_shape_and_the_field():
    shapes = {"observation.py": {"seat", "hand"}, "index.d.ts": {"seat", "hand", "bogus"}, "x": {"seat"}}
    assert disagreements("pyramid.proto", {"seat", "hand"}, shapes) == [
        "index.d.ts: field 'bogus', which pyramid.proto lacks",
        "x: no field 'hand', which pyramid.proto has",
    ]
    assert disagreements("pyramid.proto", {"seat"}, {"a": {"seat"}, "b": {"seat"}}) == []


# -- reading each shape's fields -----------------------------------------------------------------------------


def compiled(proto: Path, tmp_path: Path) -> dict[str, descriptor_pb2.DescriptorProto]:
    """The messages of ``proto`` as protoc reads the file (not as the committed stubs say)."""
    out = tmp_path / f"{proto.name}.pb"
    status = protoc.main(["protoc", f"-I{proto.parent}", f"--descriptor_set_out={out}", str(proto)])
    assert status == 0, f"protoc cannot read {proto.relative_to(ROOT)}"
    (file,) = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return {message.name: message for message in file.message_type}


def field_names(message: descriptor_pb2.DescriptorProto) -> set[str]:
    return {field.name for field in message.field}


def dataclass_fields() -> set[str]:
    return {field.name for field in dataclasses.fields(Observation)}


def python_helpers() -> set[str]:
    """The Python observation's public properties and methods: what it derives from its fields."""
    return {
        name
        for name, value in vars(Observation).items()
        if not name.startswith("_") and callable_or_property(value)
    }


def callable_or_property(value: object) -> bool:
    return isinstance(value, property) or callable(value)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def typings_members(text: str) -> set[str]:
    """The members of ``interface Observation`` in index.d.ts, in snake_case."""
    body = re.search(r"^export interface Observation \{\n(.*?)^\}", text, re.DOTALL | re.MULTILINE)
    assert body is not None, "sdk/node/index.d.ts: no `export interface Observation`"
    return {snake(name) for name in re.findall(r"^  (\w+)\??:", body.group(1), re.MULTILINE)}


def doc_table(text: str, heading: str) -> set[str]:
    """The backquoted names in the first column of the first table under ``heading``."""
    start = text.index(f"\n{heading}\n")
    table = text[start:].split("\n| ", 1)[1].split("\n\n", 1)[0]
    names: set[str] = set()
    for row in table.splitlines()[2:]:
        names.update(re.findall(r"`(\w+)`", row.split("|")[1]))
    return names


def top_level_numbers(data: bytes) -> Iterator[int]:
    """The field numbers of a protobuf message's encoding, in the order written."""

    def varint(at: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = data[at]
            value |= (byte & 0x7F) << shift
            at, shift = at + 1, shift + 7
            if byte < 0x80:
                return value, at

    at = 0
    while at < len(data):
        key, at = varint(at)
        wire_type = key & 7
        if wire_type == 0:
            _, at = varint(at)
        elif wire_type == 2:
            length, at = varint(at)
            at += length
        else:
            at += {1: 8, 5: 4}[wire_type]
        yield key >> 3


def some_observations() -> list[Observation]:
    """Every decision of a 4-player match with table talk, seen from every seat."""
    views: list[Observation] = []

    def visit(match, _obs):
        views.extend(match.observation(seat) for seat in range(match.players))

    play_random(Rules(players=4, talk="open"), seed=25, agent_seed=3, visit=visit)
    return views


def written_by_encoder(observations: list[Observation], general: bool) -> set[str]:
    """The fields the encoder writes, over ``observations``; ``general``: through its path for values
    outside the engine's usual ones (a current trick with a winner takes it)."""
    by_number = {field.number: field.name for field in pb.Observation.DESCRIPTOR.fields}
    encoders = [ObservationEncoder() for _ in range(4)]
    written: set[str] = set()
    for obs in observations:
        trick = obs.current_trick
        view = dataclasses.replace(obs, current_trick=Trick(trick.leader, trick.cards, 0)) if general else obs
        data = encoders[view.seat].serialize(view)
        written.update(by_number.get(number, f"#{number}") for number in top_level_numbers(data))
    return written


# -- the shapes compared -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def observations() -> list[Observation]:
    return some_observations()


def test_the_wire_shapes_have_the_fields_of_the_proto(tmp_path, observations):
    """pyramid.proto's ``Observation`` against every shape that carries the message itself."""
    fields = field_names(compiled(PROTO, tmp_path)["Observation"])
    problems = disagreements(
        "proto/pyramid/v1/pyramid.proto",
        fields,
        {
            "sdk/python/pyramid_sdk/v1/pyramid_pb2.py (run proto/generate.sh)": {
                field.name for field in pb.Observation.DESCRIPTOR.fields
            },
            "sdk/python/pyramid_sdk/observation.py, the dataclass": dataclass_fields()
            - BESIDE_THE_MESSAGE.keys(),
            "sdk/python/pyramid_sdk/encoding.py, the bytes of a usual decision": written_by_encoder(
                observations, general=False
            ),
            "sdk/python/pyramid_sdk/encoding.py, _general_fields": written_by_encoder(
                observations, general=True
            ),
            "sdk/python/pyramid_sdk/wire.py, _LAZY_FIELDS": set(wire._LAZY_FIELDS),
            "docs/PROTOCOL.md, the Observation table": doc_table(
                (ROOT / "docs/PROTOCOL.md").read_text(encoding="utf-8"), "### `Observation`"
            ),
        },
    )
    assert not problems, "\n".join(problems)


def test_what_travels_beside_the_message_has_a_field_to_travel_in(tmp_path):
    messages = compiled(PROTO, tmp_path)
    for name, carriers in BESIDE_THE_MESSAGE.items():
        assert name in dataclass_fields()
        for message, field in carriers:
            assert field in field_names(messages[message]), f"pyramid.proto: no {message}.{field} for {name}"


def test_the_bot_shapes_have_the_fields_of_the_dataclass():
    """The Python dataclass against what a bot reads: the decoded observation, the docs, the typings."""
    fields = dataclass_fields()
    decoded = wire.ObservationDecoder(Rules()).decode(pb.Observation().SerializeToString())
    set_at_once = set()
    for name in fields:
        try:
            object.__getattribute__(decoded, name)  # no __getattr__: an unset slot raises
            set_at_once.add(name)
        except AttributeError:
            pass
    rules_doc = (ROOT / "docs/RULES.md").read_text(encoding="utf-8")
    members = typings_members((NODE_SDK / "index.d.ts").read_text(encoding="utf-8"))
    problems = disagreements(
        "sdk/python/pyramid_sdk/observation.py, the dataclass",
        fields,
        {
            "sdk/python/pyramid_sdk/wire.py, _WireObservation": set_at_once | set(wire._LAZY_FIELDS),
            "docs/RULES.md, the table of What a bot knows": doc_table(rules_doc, "## What a bot knows"),
            "sdk/node/index.d.ts, interface Observation (less the helpers the Python class has too)": members
            - python_helpers(),
        },
    )
    helpers_line = re.search(r"Helpers derived from these: (.*?)\.\n\n", rules_doc, re.DOTALL)
    assert helpers_line is not None, "docs/RULES.md: no line 'Helpers derived from these: ...'"
    problems += disagreements(
        "sdk/python/pyramid_sdk/observation.py, the properties and methods",
        python_helpers(),
        kind="helper",
        shapes={
            "docs/RULES.md, Helpers derived from these": set(
                re.findall(r"`(\w+)(?:\(\w*\))?`", helpers_line.group(1))
            )
        },
    )
    assert not problems, "\n".join(problems)


# -- the test fails when a shape changes ---------------------------------------------------------------------


def test_a_new_field_in_the_proto_alone_is_named_in_every_shape_that_lacks_it(tmp_path):
    doctored = tmp_path / "doctored" / "pyramid.proto"
    doctored.parent.mkdir()
    text = PROTO.read_text(encoding="utf-8")
    doctored.write_text(
        text.replace(
            "  repeated bool forfeited = 14;\n", "  repeated bool forfeited = 14;\n  int32 round = 15;\n"
        ),
        encoding="utf-8",
    )
    fields = field_names(compiled(doctored, tmp_path)["Observation"])
    problems = disagreements(
        "the doctored pyramid.proto",
        fields,
        {
            "the dataclass": dataclass_fields() - BESIDE_THE_MESSAGE.keys(),
            "_LAZY_FIELDS": set(wire._LAZY_FIELDS),
        },
    )
    assert problems == [
        "the dataclass: no field 'round', which the doctored pyramid.proto has",
        "_LAZY_FIELDS: no field 'round', which the doctored pyramid.proto has",
    ]


def test_a_field_missing_from_the_typings_is_named():
    text = (NODE_SDK / "index.d.ts").read_text(encoding="utf-8")
    doctored = re.sub(r"\n  taken: number\[\];", "", text, count=1)
    assert doctored != text
    members = typings_members(doctored) - python_helpers()
    assert disagreements("the dataclass", dataclass_fields(), {"index.d.ts": members}) == [
        "index.d.ts: no field 'taken', which the dataclass has"
    ]


# -- Node.js: what observationFromWire reads and makes ------------------------------------------------------

NODE_SCRIPT = r"""
const sdk = require(process.argv[1]);
const pkg = sdk.protocol();
const data = Buffer.from(require("node:fs").readFileSync(0, "utf8"), "base64");
const request = pkg.RefereeService.service.Connect.responseDeserialize(data).action_request;
const read = new Set();
const message = new Proxy(request.observation, {
  get(target, key) {
    if (typeof key === "string") read.add(key);
    return target[key];
  },
});
const obs = sdk.observationFromWire(message, { players: 4 }, request.legal_actions);
console.log(JSON.stringify({
  wire: pkg.Observation.type.field.map((field) => field.name),
  read: [...read],
  made: Object.keys(obs),
}));
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("CI") and (shutil.which("node") is None or not (NODE_SDK / "node_modules").is_dir()),
    reason="Node.js or sdk/node/node_modules missing: run `npm ci --prefix sdk/node` (the README does)",
)
def test_node_reads_every_field_of_a_real_request_and_makes_every_typed_member(tmp_path, observations):
    obs = next(o for o in observations if o.phase is Phase.PLAY and o.tricks and o.talk and o.legal_actions)
    request = action_request(
        1,
        match_id_field("m"),
        ObservationEncoder().serialize(obs),
        legal_actions_field(obs.legal_actions),
        time_left_fields(1000, 100),
    )
    result = subprocess.run(
        ["node", "-e", NODE_SCRIPT, str(NODE_SDK)],
        input=base64.b64encode(request).decode(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    node = json.loads(result.stdout)
    wire_fields = {field.name for field in pb.Observation.DESCRIPTOR.fields}
    members = typings_members((NODE_SDK / "index.d.ts").read_text(encoding="utf-8"))
    problems = disagreements(
        "pyramid.proto",
        wire_fields,
        {
            "sdk/node/proto/pyramid/v1/pyramid.proto, as Node.js loads it": set(node["wire"]),
            "sdk/node/index.js, observationFromWire (the fields it reads)": set(node["read"]) & wire_fields,
        },
    )
    problems += disagreements(
        "sdk/node/index.d.ts, interface Observation",
        members,
        {
            "sdk/node/index.js, observationFromWire (the members it makes, and clock)": {
                snake(name) for name in [*node["made"], "clock"]
            }
        },
    )
    assert not problems, "\n".join(problems)
