"""Helpers for end-to-end tests: real bot processes, a real referee server on loopback, real gRPC."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pyramid_sdk import Match, MatchRecord, Phase, Rules
from pyramid_sdk.actions import PLAYS, Action
from pyramid_sdk.bot import Bot, MatchInfo, TimeControl
from pyramid_sdk.seeds import derive_seed
from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.match.bots import BotSpec
from referee.match.faults import FaultPolicy
from referee.match.launcher import Confinement
from referee.match.outcome import MatchOutcome
from referee.match.playing import play_match
from referee.match.setup import open_table
from support import ROOT

PY = sys.executable
RANDOM = f"{PY} sample_bots/random_bot.py"
FAST = TimeControl(per_action=0.5, bank=1.0)
"""Short limits for matches with a misbehaving bot, roomy enough for the good bots on a busy machine."""


def misbehaving(behaviour: str) -> str:
    return f"{PY} tests/bots/misbehaving.py {behaviour}"


def play(
    commands: Sequence[str],
    seed: int = 7,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    max_faults: int = 3,
    record_messages: bool = False,
    absent_ok: bool = False,
    log_dir: Path | None = None,
    paths: tuple[Path, ...] = (),
    confinement: Confinement | None = None,
) -> tuple[MatchOutcome, list[list[pb.ConnectResponse]]]:
    """Plays one match between bot commands (run from the repo root) and returns the outcome and, per
    seat, every message the referee sent that seat."""
    rules = rules or Rules(players=len(commands))
    sent: list[list[pb.ConnectResponse]] = [[] for _ in commands]
    specs = [
        replace(BotSpec.parse(command, name=f"seat{i}", cwd=ROOT), paths=paths)
        for i, command in enumerate(commands)
    ]

    async def main() -> MatchOutcome:
        taps = [log.append for log in sent] if record_messages else None
        async with open_table(
            specs,
            log_dir,
            taps,
            absent_ok=absent_ok,
            hello_timeout=1.0,
            connect_timeout=15.0,
            confinement=confinement,
        ) as seats:
            return await play_match(
                seats,
                rules,
                seed,
                match_id=f"test-{seed}",
                time_control=time_control or TimeControl(1.0, 20.0),
                fault_policy=FaultPolicy(max_faults),
            )

    return asyncio.run(main()), sent


def actions_in(record: MatchRecord) -> list[tuple[int, int, Action]]:
    """Every (deal number, seat, action) of a record in the order they happened."""
    players = record.rules.players
    actions: list[tuple[int, int, Action]] = []
    for deal in record.deals:
        actions.append((deal.number, deal.declarer, deal.declaration))
        for trick in deal.tricks:
            actions += [
                (deal.number, trick.seat_of(i, players), PLAYS[c.index]) for i, c in enumerate(trick.cards)
            ]
    return actions


def assert_played_as(record: MatchRecord, seat: int, bot: Bot, decisions: int | None = None) -> None:
    """Every decision of ``seat`` in the record (or its first ``decisions``) is exactly what ``bot``,
    seeded as the referee seeds it, chooses from the same observation: the seat's play was not disturbed
    by anything around it."""
    match = Match(record.rules, record.seed, record.seats)
    bot.match_start(
        MatchInfo(
            "check", seat, record.seats, record.rules, TimeControl(), derive_seed(record.seed, "bot", seat)
        )
    )
    left = decisions
    for number, acting, action in actions_in(record):
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        assert match.deal_number == number
        if acting == seat and left != 0:
            expected = bot.act(match.observation(seat))
            assert expected == action, (
                f"deal {number}: seat {seat} played {action}, its bot chooses {expected}"
            )
            left = None if left is None else left - 1
        match.apply(action, acting)


def assert_no_unknown_cards(record: MatchRecord, seat: int, messages: Sequence[pb.ConnectResponse]) -> int:
    """No message to ``seat`` names a card it may not know: its own cards as dealt, and the cards played in
    the deal up to that moment (checked against what really was played). Returns the observations checked."""
    checked = 0
    for message in messages:
        kind = message.WhichOneof("kind")
        if kind == "match_start":
            assert message.match_start.seed != record.seed, "a bot must never get the match seed"
        elif kind == "action_request":
            request = message.action_request
            legal = {a.card for a in request.legal_actions if a.WhichOneof("kind") == "card"}
            checked += _check_observation(record, seat, request.observation, legal)
        if kind in ("action_request", "match_end") and getattr(message, kind).HasField("last_deal"):
            checked += _check_observation(record, seat, getattr(message, kind).last_deal, set())
    return checked


def _check_observation(record: MatchRecord, seat: int, obs: pb.Observation, legal_cards: set[str]) -> int:
    deal = record.deals[obs.deal_number - 1]
    played = [trick.cards for trick in deal.tricks]
    seen: list[str] = []
    for index, trick in enumerate(obs.tricks):
        assert list(trick.cards) == [c.code for c in played[index]]
        seen += trick.cards
    current = list(obs.current_trick.cards)
    if current:
        assert current == [c.code for c in played[len(obs.tricks)]][: len(current)]
    seen += current
    own = {card.code for card in deal.hands[seat]}
    named = set(obs.hand) | set(seen) | legal_cards
    assert named <= own | set(seen), f"seat {seat} was told of {sorted(named - own - set(seen))}"
    assert set(obs.hand) <= own
    return 1
