"""Plays one match: drives the engine, asks each seat for its action under time control, applies the
fault policy, and returns the record with every fault.

Nothing a seat sends is trusted: every action goes through the engine's checks, and anything wrong becomes
a :class:`~referee.match.faults.Fault` and the engine's default action. A failure on the referee's side makes
the match void instead, so it is retried and never rated.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from pyramid_sdk.actions import (
    Action,
    Declare,
    IllegalActionError,
    IllegalTalkError,
    MalformedActionError,
    Play,
)
from pyramid_sdk.bot import Bot, MatchInfo, MatchResult, TimeControl
from pyramid_sdk.debugging import take_lines
from pyramid_sdk.encoding import (
    ObservationEncoder,
    action_request,
    legal_actions_field,
    match_id_field,
    time_left_fields,
)
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Clock, Observation, Phase
from pyramid_sdk.rules import Rules
from pyramid_sdk.seeds import derive_seed
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.wire import WireError, action_from_wire, rules_to_wire
from referee.match.debug import DebugBook, step_of
from referee.match.faults import Fault, FaultKind, FaultPolicy, one_line
from referee.match.outcome import MatchOutcome, MatchStatus
from referee.match.sessions import Closed, Session, Timeout

LOGGER = logging.getLogger(__name__)

MAX_ERROR: Final = 200
"""Characters of a bot's own account of its error (``ActionReply.error``) that its fault detail keeps."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a seat answered: an action to check, or the fault that stands in for one, or both (a fault
    that does not cost the action, such as talk attached to a declaration); and the seat's debug text
    for its author, whatever else it answered (never part of the play: :mod:`referee.match.debug`)."""

    action: Action | None = None
    fault: FaultKind | None = None
    detail: str = ""
    debug: str = ""


class Seat(Protocol):
    """A player at the table, in-process or remote."""

    name: str

    async def start(self, info: MatchInfo) -> str | None:
        """Announces the match; the reason the seat cannot play, or ``None``."""

    async def decide(self, obs: Observation, time_limit: float, bank: float) -> Answer: ...

    async def deal_end(self, obs: Observation) -> None: ...

    async def end(self, result: MatchResult, forfeited: bool, faults: Sequence[Fault]) -> None: ...

    def violations(self) -> list[str]:
        """Protocol violations noticed outside a request (stray messages), as one-line details."""

    def notify(self, text: str) -> None:
        """Tells the seat about its own fault or forfeit, before its next message."""


class LocalSeat:
    """A trusted :class:`Bot` object called directly: no gRPC, no process. For experiments and fast leagues;
    its time is still measured, and an exception is its fault."""

    def __init__(self, bot: Bot, name: str | None = None) -> None:
        self.bot = bot
        self.name = name or bot.name

    async def start(self, info: MatchInfo) -> str | None:
        take_lines(self.bot)  # an earlier match's lines belong to no decision of this one
        try:
            self.bot.match_start(info)
        except Exception as exc:
            return f"match_start raised {type(exc).__name__}: {exc}"
        return None

    async def decide(self, obs: Observation, time_limit: float, bank: float) -> Answer:
        started = time.monotonic()
        obs.clock = Clock(time_limit - bank, bank, started)  # as the SDK gives it to a bot process
        try:
            action = self.bot.act(obs)
        except (Exception, SystemExit) as exc:  # a trusted bot still must not stop the referee
            detail = f"the bot raised {type(exc).__name__}: {exc}"
            return Answer(fault=FaultKind.ILLEGAL_ACTION, detail=detail, debug=take_lines(self.bot))
        debug = take_lines(self.bot)
        if time.monotonic() - started > time_limit:
            detail = f"answered after the {time_limit:.2f}s it had"
            return Answer(fault=FaultKind.TIMEOUT, detail=detail, debug=debug)
        return Answer(action=action, debug=debug)

    async def deal_end(self, obs: Observation) -> None:
        with contextlib.suppress(Exception):  # a hook's failure is the bot's business, not the match's
            self.bot.deal_end(obs)

    async def end(self, result: MatchResult, forfeited: bool, faults: Sequence[Fault]) -> None:
        with contextlib.suppress(Exception):
            self.bot.match_end(result)

    def violations(self) -> list[str]:
        return []

    def notify(self, text: str) -> None:
        pass  # its faults reach it in match_end's result


class RemoteSeat:
    """A bot process behind a :class:`Session`. ``tap`` sees every message sent to it (for tests);
    ``exit_words`` says how the process ended, for the fault detail when its stream breaks."""

    def __init__(
        self,
        session: Session,
        name: str,
        tap: Callable[[pb.ConnectResponse], None] | None = None,
        exit_words: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        self.session = session
        self.name = name
        self._tap = tap
        self._exit_words = exit_words
        self._match_id_field = b""
        self._encoder = ObservationEncoder()
        self._last_deal: bytes | None = None
        self._per_action_ms = 0
        self._time_left_source = -1
        self._time_left_field = b""
        self._notices: list[str] = []

    async def _send(self, message: pb.ConnectResponse) -> bool:
        if self._tap is not None:
            self._tap(message)
        return await self.session.send(message.SerializeToString())

    async def start(self, info: MatchInfo) -> str | None:
        self.session.start_match()
        self._match_id_field = match_id_field(info.match_id)
        self._encoder = ObservationEncoder()
        self._last_deal = None
        self._notices = []
        self._per_action_ms = round(info.time_control.per_action * 1000)
        self._time_left_source = -1
        start = pb.MatchStart(
            match_id=info.match_id,
            seat=info.seat,
            seat_names=info.seat_names,
            rules=rules_to_wire(info.rules),
            time_control=pb.TimeControl(
                per_action_ms=self._per_action_ms, bank_ms=round(info.time_control.bank * 1000)
            ),
            seed=info.seed,
        )
        if await self._send(pb.ConnectResponse(match_start=start)):
            return None
        return await self._disconnect(self.session.close_reason)

    def notify(self, text: str) -> None:
        self._notices.append(text)

    async def _send_notices(self) -> None:
        notices, self._notices = [*self.session.take_notes(), *self._notices], []
        for text in notices:
            await self._send(pb.ConnectResponse(notice=pb.Notice(text=text)))

    async def decide(self, obs: Observation, time_limit: float, bank: float) -> Answer:
        if self._notices or self.session.has_notes:
            await self._send_notices()
        request_id = self.session.next_request_id()
        message = action_request(
            request_id,
            self._match_id_field,
            self._encoder.serialize(obs),
            legal_actions_field(obs.legal_actions),
            self._time_left(round(bank * 1000)),
            self._last_deal,
        )
        self._last_deal = None
        if self._tap is not None:
            self._tap(pb.ConnectResponse.FromString(message))
        outcome = await self.session.ask(message, request_id, time_limit)
        if isinstance(outcome, pb.ActionReply):  # the usual case, checked first
            debug = outcome.debug
            try:
                action = action_from_wire(outcome.action, outcome.talk)
            except WireError as exc:
                if outcome.error and not outcome.HasField("action"):  # the bot says why it has none
                    error = one_line(outcome.error, MAX_ERROR)
                    return Answer(fault=FaultKind.MALFORMED, detail=f"the bot raised {error}", debug=debug)
                return Answer(fault=FaultKind.MALFORMED, detail=str(exc), debug=debug)
            if outcome.talk and type(action) is Declare:  # talk travels with a card, never a declaration
                detail = "talk attached to a declaration: the declarer never talks"
                return Answer(action, FaultKind.TALK, detail, debug)
            return Answer(action=action, debug=debug)
        if isinstance(outcome, Timeout):
            return Answer(fault=FaultKind.TIMEOUT, detail=f"no answer within {time_limit:.2f}s")
        if isinstance(outcome, Closed):
            return Answer(fault=FaultKind.DISCONNECT, detail=await self._disconnect(outcome.reason))
        return Answer(fault=FaultKind.MALFORMED, detail=outcome.detail)  # a Stray

    async def _disconnect(self, reason: str) -> str:
        """A disconnect's detail: why the stream ended, and how the process exited (its launcher knows)."""
        words = await self._exit_words() if self._exit_words is not None else ""
        return reason + words  # Fault makes it one line of bounded length

    def _time_left(self, bank_ms: int) -> bytes:
        if bank_ms != self._time_left_source:
            self._time_left_source = bank_ms
            self._time_left_field = time_left_fields(bank_ms, self._per_action_ms)
        return self._time_left_field

    async def deal_end(self, obs: Observation) -> None:
        self._last_deal = self._encoder.serialize(obs)  # sent with the next request, or with the match end

    async def end(self, result: MatchResult, forfeited: bool, faults: Sequence[Fault]) -> None:
        end = pb.MatchEnd(
            match_id=result.match_id,
            totals=result.totals,
            ranks=result.ranks,
            faults=[
                pb.Fault(seat=f.seat, deal=f.deal, kind=_FAULT_KIND_TO_WIRE[f.kind], detail=f.detail)
                for f in faults
            ],
            forfeited=forfeited,
        )
        if self._last_deal is not None:
            end.last_deal.MergeFromString(self._last_deal)
        await self._send_notices()
        await self._send(pb.ConnectResponse(match_end=end))

    def violations(self) -> list[str]:
        return self.session.take_violations()


_FAULT_KIND_TO_WIRE = {
    FaultKind.TIMEOUT: pb.FAULT_KIND_TIMEOUT,
    FaultKind.ILLEGAL_ACTION: pb.FAULT_KIND_ILLEGAL_ACTION,
    FaultKind.MALFORMED: pb.FAULT_KIND_MALFORMED,
    FaultKind.DISCONNECT: pb.FAULT_KIND_DISCONNECT,
    FaultKind.TALK: pb.FAULT_KIND_TALK,
}


class AbsentSeat:
    """A bot that could not take its seat (it failed to start or to connect): it forfeits at once."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    async def start(self, info: MatchInfo) -> str | None:
        return self.reason

    async def decide(self, obs: Observation, time_limit: float, bank: float) -> Answer:
        return Answer(fault=FaultKind.DISCONNECT, detail=self.reason)

    async def deal_end(self, obs: Observation) -> None:
        pass

    async def end(self, result: MatchResult, forfeited: bool, faults: Sequence[Fault]) -> None:
        pass

    def violations(self) -> list[str]:
        return []

    def notify(self, text: str) -> None:
        pass


async def play_match(
    seats: Sequence[Seat],
    rules: Rules,
    seed: int,
    *,
    match_id: str = "match",
    time_control: TimeControl | None = None,
    fault_policy: FaultPolicy | None = None,
) -> MatchOutcome:
    """Plays a whole match between ``seats`` (in seat order) and returns its outcome. Never raises for
    anything a seat does; a referee-side error returns a void outcome."""
    runner = _Runner(
        seats, rules, seed, match_id, time_control or TimeControl(), fault_policy or FaultPolicy()
    )
    return await runner.run()


class _Runner:
    def __init__(
        self,
        seats: Sequence[Seat],
        rules: Rules,
        seed: int,
        match_id: str,
        time_control: TimeControl,
        policy: FaultPolicy,
    ) -> None:
        if len(seats) != rules.players:
            raise ValueError(f"{rules.players} players need {rules.players} seats, got {len(seats)}")
        self.seats = seats
        self.match = Match(rules, seed, [seat.name for seat in seats])
        self.match_id = match_id
        self.time_control = time_control
        self.policy = policy
        self.faults: list[Fault] = []
        self.fault_counts = [0] * rules.players
        self.banks = [time_control.bank] * rules.players
        self.latencies: list[list[float]] = [[] for _ in seats]
        self.debug = DebugBook(rules.players)
        self._lags = [seat.session.lag_allowance if isinstance(seat, RemoteSeat) else 0.0 for seat in seats]
        """Each seat's lag allowance (remote connections only): added to its time, never charged."""

    async def run(self) -> MatchOutcome:
        started = time.monotonic()
        match = self.match
        try:
            await self._start()
            while match.phase is not Phase.MATCH_OVER:
                if match.phase is Phase.DEAL_OVER:
                    for seat in self._present():
                        await self.seats[seat].deal_end(match.observation(seat))
                    match.next_deal()
                    continue
                acting = match.to_act
                assert acting is not None
                self._collect_violations()
                if match.forfeited[acting]:
                    match.apply(match.default_action(), acting)
                else:
                    await self._turn(acting)
            await self._finish()
        except Exception as exc:
            # Our bug, not a bot's: loud, with its traceback, in the referee's log; the match is void.
            LOGGER.exception(
                "match %s: referee error in deal %d; the match is void", self.match_id, match.deal_number
            )
            reason = one_line(f"referee error: {type(exc).__name__}: {exc}")
            return self._outcome(MatchStatus.VOID, started, reason)
        outcome = self._outcome(MatchStatus.COMPLETE, started)
        LOGGER.info(
            "match %s: complete in %.1fs, totals %s, %d fault(s)",
            self.match_id,
            outcome.elapsed,
            " ".join(map(str, match.totals)),
            len(self.faults),
        )
        return outcome

    def _present(self) -> list[int]:
        return [seat for seat in range(self.match.players) if not self.match.forfeited[seat]]

    async def _start(self) -> None:
        match = self.match
        names = match.seats
        for seat, player in enumerate(self.seats):
            info = MatchInfo(
                self.match_id,
                seat,
                names,
                match.rules,
                self.time_control,
                derive_seed(match.seed, "bot", seat),
            )
            reason = await player.start(info)
            if reason is not None:
                self._fault(seat, FaultKind.DISCONNECT, reason)

    async def _turn(self, seat: int) -> None:
        match = self.match
        obs = match.observation(seat)
        per_action = self.time_control.per_action
        started = time.monotonic()
        decision = await self.seats[seat].decide(obs, per_action + self.banks[seat], self.banks[seat])
        elapsed = time.monotonic() - started
        self.latencies[seat].append(elapsed)
        if decision.debug:  # kept for the bot's author, and nothing more: it never touches the play
            notice = self.debug.take(seat, match.deal_number, step_of(obs), decision.debug)
            if notice is not None:
                self.seats[seat].notify(notice)
        lag = self._lags[seat]  # a remote connection's round trip is not the bot's thinking time
        self.banks[seat] = max(0.0, self.banks[seat] - max(0.0, elapsed - lag - per_action))
        self._charge_violations(seat)  # what it sent while asked, besides its answer: before the answer
        if match.forfeited[seat]:  # those cost it the match: its faults stop, the referee plays for it
            match.apply(match.default_action(), seat)
            return
        if decision.fault is not None:
            self._fault(seat, decision.fault, decision.detail)
        if decision.action is not None:
            action = decision.action
            try:
                match.apply(action, seat)
                return
            except IllegalTalkError as exc:
                self._fault(seat, FaultKind.TALK, str(exc))
                if isinstance(action, Play) and action.card in match.hand(seat):
                    match.apply(Play(action.card), seat)
                    return
            except MalformedActionError as exc:  # wrongly typed fields, from an in-process bot
                self._fault(seat, FaultKind.MALFORMED, str(exc))
            except IllegalActionError as exc:
                self._fault(seat, FaultKind.ILLEGAL_ACTION, str(exc))
        match.apply(match.default_action(), seat)

    def _collect_violations(self) -> None:
        for seat in range(self.match.players):
            self._charge_violations(seat)

    def _charge_violations(self, seat: int) -> None:
        """A malformed fault for each stray message of ``seat`` since the last call, up to its forfeit."""
        if self.match.forfeited[seat]:
            return
        for detail in self.seats[seat].violations():
            self._fault(seat, FaultKind.MALFORMED, detail)
            if self.match.forfeited[seat]:
                break  # a flood of stray messages costs the seat the match, not the record its size

    def _fault(self, seat: int, kind: FaultKind, detail: str) -> None:
        fault = Fault(seat, self.match.deal_number, kind, detail)
        self.faults.append(fault)
        self.fault_counts[seat] += 1
        note = f"fault {self.fault_counts[seat]} of {self.policy.max_faults} ({kind}): {fault.detail}"
        if kind is FaultKind.DISCONNECT or self.fault_counts[seat] >= self.policy.max_faults:
            self.match.forfeit(seat)
            note += "; this seat forfeits the match, and the referee plays it from now on"
        self.seats[seat].notify(note)

    async def _finish(self) -> None:
        match = self.match
        for seat in self._present():  # the last deal ends the match: its tricks are still news
            await self.seats[seat].deal_end(match.observation(seat))
        ranks = match.ranks()
        for seat, player in enumerate(self.seats):
            own = [f for f in self.faults if f.seat == seat]
            result = MatchResult(
                self.match_id, match.totals, ranks, tuple(f"{f.kind}: {f.detail}" for f in own)
            )
            await player.end(result, match.forfeited[seat], own)

    def _outcome(self, status: MatchStatus, started: float, reason: str = "") -> MatchOutcome:
        return MatchOutcome(
            match_id=self.match_id,
            status=status,
            record=self.match.record(),
            faults=tuple(self.faults),
            void_reason=reason,
            latencies=tuple(tuple(times) for times in self.latencies),
            elapsed=time.monotonic() - started,
            debug=tuple(self.debug.lines),
        )
