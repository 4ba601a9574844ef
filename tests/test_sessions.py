"""A session's time limits, on a stream whose writes the test controls: the reply's deadline and the
guard that gives up on a bot that stopped reading. (The end-to-end tests cover the rest over real gRPC.)"""

import asyncio
import time

from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.match.sessions import Closed, Session, Timeout


class SlowStream:
    """A stream whose writes take ``write_seconds`` (forever if ``None``) and that never says anything."""

    def __init__(self, write_seconds: float | None) -> None:
        self.write_seconds = write_seconds

    async def write(self, message: bytes) -> None:
        if self.write_seconds is None:
            await asyncio.Event().wait()
        await asyncio.sleep(self.write_seconds)

    async def read(self) -> None:
        await asyncio.Event().wait()


def ask(write_seconds: float | None, timeout: float) -> tuple[object, float, Session]:
    async def go() -> tuple[object, float, Session]:
        session = Session("s1", pb.Hello(bot_name="b"), SlowStream(write_seconds))  # type: ignore[arg-type]
        started = time.monotonic()
        outcome = await session.ask(b"\x1a\x00", session.next_request_id(), timeout)
        return outcome, time.monotonic() - started, session

    return asyncio.run(go())


def test_no_reply_by_the_deadline_is_a_timeout_and_the_session_stays_open():
    outcome, elapsed, session = ask(0.0, 0.2)
    assert isinstance(outcome, Timeout)
    assert 0.15 < elapsed < 1.0
    assert not session.is_closed
    assert session.busy  # its late answer will be expected, not counted as a stray message


def test_a_slow_write_within_the_guard_costs_a_timeout_not_the_session():
    outcome, elapsed, session = ask(0.4, 0.1)  # the write outlives the deadline but not its one second
    assert isinstance(outcome, Timeout)
    assert 0.35 < elapsed < 1.0
    assert not session.is_closed


def test_a_write_that_never_completes_closes_the_session_after_one_second():
    outcome, elapsed, session = ask(None, 0.1)
    assert isinstance(outcome, Closed)
    assert outcome.reason == "the bot read nothing for 1s"
    assert 0.9 < elapsed < 2.0
    assert session.is_closed


def test_a_longer_limit_gives_the_write_as_long():
    outcome, elapsed, _session = ask(None, 1.3)
    assert isinstance(outcome, Closed)
    assert outcome.reason == "the bot read nothing for 1.3s"
    assert 1.2 < elapsed < 2.5


def test_the_guard_also_covers_waiting_for_the_write_lock():
    async def go() -> tuple[object, float, Session]:
        session = Session("s1", pb.Hello(bot_name="b"), SlowStream(None))  # type: ignore[arg-type]
        holder = asyncio.create_task(session.send(b"\x32\x00", timeout=2.0))  # holds the lock for 2 s
        await asyncio.sleep(0)
        started = time.monotonic()
        outcome = await asyncio.wait_for(session.ask(b"\x1a\x00", session.next_request_id(), 0.1), 5)
        elapsed = time.monotonic() - started
        await holder
        return outcome, elapsed, session

    outcome, elapsed, session = asyncio.run(go())
    assert session.is_closed
    assert isinstance(outcome, Closed)
    assert outcome.reason == "the bot read nothing for 1s"
    assert 0.9 < elapsed < 1.8
