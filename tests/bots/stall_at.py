"""A bot that stops at one step of its start, for the tests that stop a run, a server or a comparison
right then (issue #32, item 17); otherwise it plays at random.

``python tests/bots/stall_at.py [COUNTER FROM]``: the step comes from the file ``STALL`` in its working
folder (which a sandboxed bot may read), written by the test: ``start`` (the process runs and never
connects: spawned, or its sandbox up), ``hello`` (connected, its stream open, no hello sent) or ``seated``
(its hello answered; it reads nothing more). With ``COUNTER FROM`` (an unsandboxed bot: it writes the
counter file), only its starts numbered ``FROM`` and later stall, and start ``FROM - 1`` waits at its
match start (up to :data:`PAUSE` seconds, from its time bank) until a stalled start has reached its step,
so that its match ends only then. On reaching its step it prints ``stall_at: STEP`` (and, with a counter,
makes the file ``COUNTER.reached``) and sleeps for ever.
"""

import fcntl
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PAUSE = 15.0


def step() -> tuple[str | None, bool]:
    """The step to stall at, if any, and whether to pause at the match start instead."""
    stall = Path("STALL")
    chosen = stall.read_text().strip() if stall.is_file() else None
    if chosen is None or len(sys.argv) < 3:
        return chosen, False
    counter = Path(sys.argv[1])
    fd = os.open(counter, os.O_RDWR | os.O_CREAT, 0o644)  # one start at a time counts
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = int(os.pread(fd, 32, 0).decode() or "0") + 1
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(start).encode(), 0)
    finally:
        os.close(fd)
    first = int(sys.argv[2])
    return (chosen if start >= first else None), start == first - 1


def reached(where: str) -> None:
    print(f"stall_at: {where}", flush=True)
    if len(sys.argv) >= 3:
        Path(sys.argv[1] + ".reached").touch()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    where, slow = step()
    if where == "start":
        reached(where)
    if where in ("hello", "seated"):
        import grpc

        from pyramid_sdk.client import ENV_ADDRESS, read_token
        from pyramid_sdk.handshake import CONNECT, hello_request

        channel = grpc.insecure_channel(os.environ[ENV_ADDRESS])
        grpc.channel_ready_future(channel).result(timeout=30)
        first = [] if where == "hello" else [hello_request(read_token(), "stall_at", "1")]

        def requests():  # the first message, if any, then nothing: the stream stays open
            yield from first
            while True:
                time.sleep(3600)
                yield b""

        call = channel.stream_stream(CONNECT)(requests())
        if where == "seated":
            next(call)  # the referee's welcome: the seat is taken
        reached(where)
    from pyramid_sdk.client import run
    from sample_bots.random_bot import RandomBot

    class Paused(RandomBot):
        def match_start(self, info):
            super().match_start(info)
            until = time.monotonic() + (PAUSE if slow else 0.0)
            while time.monotonic() < until and not Path(sys.argv[1] + ".reached").exists():
                time.sleep(0.02)

    run(Paused())
