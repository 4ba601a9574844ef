"""A bot that records how its stream ended: ``python status.py [SECONDS]``.

A hand-written gRPC client (no SDK, so nothing between it and the status): it answers every request with
its first legal action after SECONDS (default 0.05). It prints ``PLAYING <match id>`` at each match
start and, when the stream ends, ``STATUS <code>: <details>; <requests> requests, match_end <yes|no>``,
to stderr (its log), then exits 0.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Iterator

import grpc

from pyramid_sdk.client import ENV_ADDRESS, read_token
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.v1 import pyramid_pb2 as pb

CONNECT = "/pyramid.v1.RefereeService/Connect"


def main() -> None:
    pause = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
    hello = pb.Hello(protocol_version=PROTOCOL_VERSION, token=read_token(), bot_name="status")
    outbox: queue.Queue[bytes | None] = queue.Queue()
    outbox.put(pb.ConnectRequest(hello=hello).SerializeToString())

    def requests() -> Iterator[bytes]:
        while (message := outbox.get()) is not None:
            yield message

    asked, ended = 0, False
    status = "OK: "
    with grpc.insecure_channel(os.environ[ENV_ADDRESS]) as channel:
        connect = channel.stream_stream(CONNECT, request_serializer=None, response_deserializer=None)
        try:
            for data in connect(requests()):
                response = pb.ConnectResponse.FromString(data)
                kind = response.WhichOneof("kind")
                if kind == "action_request":
                    asked += 1
                    time.sleep(pause)
                    request = response.action_request
                    reply = pb.ActionReply(request_id=request.request_id, action=request.legal_actions[0])
                    outbox.put(pb.ConnectRequest(action=reply).SerializeToString())
                elif kind == "match_start":
                    print(f"PLAYING {response.match_start.match_id}", file=sys.stderr, flush=True)
                ended = ended or kind == "match_end"
        except grpc.RpcError as exc:
            status = f"{exc.code().name}: {exc.details()}"
        finally:
            outbox.put(None)
    print(f"STATUS {status}; {asked} requests, match_end {'yes' if ended else 'no'}", file=sys.stderr)


if __name__ == "__main__":
    main()
