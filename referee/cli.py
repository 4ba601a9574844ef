"""The ``referee`` command line. Each command is a thin shell over the library; errors are one line."""

from __future__ import annotations

import random

import click
from pyramid_sdk import Match, Phase, Rules, RulesError

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


@main.command()
@click.option(
    "--players", type=click.IntRange(2, 4), default=4, show_default=True, help="Seats at the table."
)
@click.option("--seed", type=click.IntRange(min=0), default=2026, show_default=True, help="Match seed.")
@click.option("--rule", "rules", multiple=True, metavar="KEY=VALUE", help="A rule option, e.g. talk=off.")
def demo(players: int, seed: int, rules: tuple[str, ...]) -> None:
    """Plays one match between random in-process players and prints it.

    A look at the rules engine at work; bots over gRPC and tournaments come with `match` and `run`.
    """
    match = Match(_parse_rules(players, rules), seed, [f"random{seat}" for seat in range(players)])
    rng = random.Random(seed)
    while match.phase is not Phase.MATCH_OVER:
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        else:
            match.apply(rng.choice(match.legal_actions()))
    click.echo(brief(match.record()))
