"""The ``referee`` command line. Each command is a thin shell over the library; errors are one line."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import click
from pyramid_sdk import Match, Phase, Rules, RulesError
from pyramid_sdk.bot import TimeControl

from referee.faults import FaultPolicy
from referee.launcher import BotSpec, BotSpecError
from referee.match_runner import MatchOutcome, MatchStatus, play_match
from referee.table import open_table
from referee.transcript import brief


def _parse_rules(players: int, options: tuple[str, ...]) -> Rules:
    values: dict[str, object] = {"players": players}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise click.BadParameter(
                f"{option!r}: expected KEY=VALUE, e.g. trick_winner=highest-rank", param_hint="--rule"
            )
        values[key.strip().replace("-", "_")] = int(value) if value.strip().isdigit() else value.strip()
    try:
        return Rules.from_dict(values)
    except RulesError as exc:
        raise click.BadParameter(str(exc), param_hint="--rule") from None


@click.group()
@click.version_option(package_name="pyramid-arena")
def main() -> None:
    """Pyramid Arena: run bot tournaments of the card game Pyramid."""


rule_option = click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="KEY=VALUE",
    help="A rule option, e.g. trick_winner=highest-rank.",
)
seed_option = click.option(
    "--seed", type=click.IntRange(min=0), default=2026, show_default=True, help="Match seed."
)


@main.command()
@click.option(
    "--players", type=click.IntRange(2, 4), default=4, show_default=True, help="Seats at the table."
)
@seed_option
@rule_option
def demo(players: int, seed: int, rules: tuple[str, ...]) -> None:
    """Plays one match between random players inside the referee and prints it."""
    match = Match(_parse_rules(players, rules), seed, [f"random{seat}" for seat in range(players)])
    rng = random.Random(seed)
    while match.phase is not Phase.MATCH_OVER:
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        else:
            match.apply(rng.choice(match.legal_actions()))
    click.echo(brief(match.record()))


@main.command("match")
@click.argument("bots", nargs=-1, required=True)
@seed_option
@rule_option
@click.option(
    "--per-action", type=click.FloatRange(min=0.001), default=1.0, show_default=True, help="Seconds."
)
@click.option(
    "--bank", type=click.FloatRange(min=0.0), default=20.0, show_default=True, help="Seconds per match."
)
@click.option("--max-faults", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--logs", type=click.Path(file_okay=False, path_type=Path), help="Folder for the bots' stderr.")
def match_command(
    bots: tuple[str, ...],
    seed: int,
    rules: tuple[str, ...],
    per_action: float,
    bank: float,
    max_faults: int,
    logs: Path | None,
) -> None:
    """Plays one match between 2-4 BOTS and prints it deal by deal.

    Each BOT is a command line run as its own process over gRPC (quote it: "python my_bot.py") or a
    module:Class played in-process, e.g. sample_bots.heuristic:HeuristicBot.
    """
    if not 2 <= len(bots) <= 4:
        raise click.UsageError(f"a match needs 2 to 4 bots, got {len(bots)}")
    parsed = _parse_rules(len(bots), rules)
    try:
        specs = _unique_names([BotSpec.parse(text) for text in bots])
        for spec in specs:
            spec.check()
    except BotSpecError as exc:
        raise click.UsageError(str(exc)) from None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    try:
        outcome = asyncio.run(_play(specs, parsed, seed, TimeControl(per_action, bank), max_faults, logs))
    except BotSpecError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(brief(outcome.record))
    for fault in outcome.faults:
        click.echo(
            f"fault: {outcome.record.seats[fault.seat]} deal {fault.deal} {fault.kind}: {fault.detail}"
        )
    if outcome.status is MatchStatus.VOID:
        raise click.ClickException(f"the match is void: {outcome.void_reason}")


def _unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    """Seat names must differ; repeated bots get #2, #3 ..."""
    seen: dict[str, int] = {}
    named = []
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
        name = spec.name if seen[spec.name] == 1 else f"{spec.name}#{seen[spec.name]}"
        named.append(BotSpec(name, spec.command, spec.module, spec.cwd))
    return named


async def _play(
    specs: list[BotSpec],
    rules: Rules,
    seed: int,
    time_control: TimeControl,
    max_faults: int,
    logs: Path | None,
) -> MatchOutcome:
    async with open_table(specs, logs) as seats:
        return await play_match(
            seats,
            rules,
            seed,
            match_id=f"match-{seed}",
            time_control=time_control,
            fault_policy=FaultPolicy(max_faults),
        )
