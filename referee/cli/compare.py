"""``referee compare``: is bot A better than bot B, on the same deals from the same seats. Its exit code
is the verdict, so its own errors (even click's usage errors) exit ``EXIT_UNUSABLE``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click
from click.core import ParameterSource

from referee.cli.common import (
    log_level_option,
    parse_rules,
    run_until_signal,
    sandbox_options,
    table_options,
)

if TYPE_CHECKING:
    from referee.compare import Plan

EXIT_UNUSABLE: Final = 4
"""``referee.compare.EXIT_UNUSABLE``, written out so that ``referee compare --help`` need not load the
comparison (tests/test_cli_package.py checks they agree)."""
OPPONENT: Final = "sample_bots.heuristic:HeuristicBot"
"""``referee.compare.OPPONENT``, for the help text, likewise."""
SPRT_OPTIONS: Final = ("h0", "h1", "alpha", "beta")


class _CompareUsageError(click.UsageError):
    exit_code = EXIT_UNUSABLE


class _CompareCommand(click.Command):
    """``referee compare`` exits 0, 1 or 2 with a verdict, so a wrong flag or argument must not exit 2
    (click's usage code, which would read as "undecided" in CI): here it exits ``EXIT_UNUSABLE``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise _CompareUsageError(exc.format_message(), exc.ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _CompareUsageError(exc.format_message(), exc.ctx) from None


class _Unusable(click.ClickException):
    """A comparison that cannot give a verdict: a bot that does not load or start, a bad hypothesis, no
    sandbox where one is required, a referee that keeps failing. One line, exit ``EXIT_UNUSABLE``."""

    exit_code = EXIT_UNUSABLE


@click.command("compare", cls=_CompareCommand)
@click.argument("bots", nargs=-1, metavar="A B [C ...]")
@click.option(
    "--against",
    multiple=True,
    metavar="BOT",
    help="An opponent, filling the seats beside the candidate in order (repeated if fewer); repeat it for "
    f"several. Default: {OPPONENT}.",
)
@click.option(
    "--players", type=click.IntRange(2, 4), default=4, show_default=True, help="Seats at the table."
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Fixes every deal, to replay a comparison; default: a fresh one, printed at the end.",
)
@click.option(
    "--matches",
    type=click.IntRange(min=1),
    default=400,
    show_default=True,
    help="Matches at most (two per pair; exactly this many with --fixed), rounded down to whole rounds "
    "of 2 x players. Two bots only.",
)
@click.option(
    "--sprt/--fixed",
    default=True,
    show_default=True,
    help="Stop as soon as a sequential test decides between --h0 and --h1 (the default), or play every "
    "one of --matches and judge by the 95% interval.",
)
@click.option("--h0", type=float, default=0.0, show_default=True, help="H0: A - B points per match.")
@click.option("--h1", type=float, default=2.0, show_default=True, help="H1: A - B points per match.")
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="P(accept H1 | H0); with three bots or more, the family-wise error rate of the ranking.",
)
@click.option("--beta", type=float, default=0.05, show_default=True, help="P(accept H0 | H1).")
@click.option(
    "--margin",
    type=float,
    default=0.0,
    show_default=True,
    help="Three bots or more: two bots within this many points per match of each other may be declared "
    "equal (the indifference zone); 0 never declares equal.",
)
@click.option(
    "--max-tables",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Three bots or more: tables at most (each is every balanced seating of one deal seed).",
)
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=1, show_default=True, help="Matches at once."
)
@table_options
@click.option("--json", "as_json", is_flag=True, help="The result as JSON on stdout (docs/COMPARE.md).")
@sandbox_options
@log_level_option("warning", "on stderr")
def compare_command(
    bots: tuple[str, ...],
    against: tuple[str, ...],
    players: int,
    seed: int | None,
    matches: int,
    sprt: bool,
    h0: float,
    h1: float,
    alpha: float,
    beta: float,
    margin: float,
    max_tables: int,
    concurrency: int,
    rules: tuple[str, ...],
    per_action: float,
    bank: float,
    max_faults: int,
    logs: Path | None,
    as_json: bool,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    log_level: str,
) -> None:
    """Is bot A better than bot B? Both play the same deals from the same seat against the same opponents.
    With three bots or more: their ranking, with every adjacent pair decided.

    A and B are bots as `referee match` takes them: a command line (quoted) or a module:Class, each
    named as it names itself. Reports the mean points difference per match (A - B) with its 95%
    confidence interval and the likelihood that A is better, and stops as soon as a sequential test
    decides (--fixed plays every one of --matches instead). Exit code: 0 A is better, 1 A is not
    better, 2 undecided, 4 no verdict (a bad option or bot; one line says which).

    Three bots or more sit together at duplicate tables until every adjacent pair is decided (better,
    or equal within --margin; P(any wrong) at most --alpha): exit 0, or 2 when --max-tables runs out.
    """
    import secrets

    from pyramid_sdk.bot import TimeControl
    from pyramid_sdk.seeds import SEED_BITS
    from referee.compare import CompareError, make_plan
    from referee.match.bots import BotSpecError
    from referee.stats import HypothesisError, Sprt

    if len(bots) < 2:
        raise click.UsageError(f"compare needs two bots or more, got {len(bots)}")
    context = click.get_current_context()
    if len(bots) > 2:
        _rank(bots, context.params)
        return
    _refuse(context, ("margin", "max_tables"), "three bots or more")
    a, b = bots
    given = [
        f"--{name}"
        for name in SPRT_OPTIONS
        if context.get_parameter_source(name) is not ParameterSource.DEFAULT
    ]
    if given and not sprt:
        raise click.UsageError(f"{', '.join(given)} apply only to the sequential test, not with --fixed")
    parsed = parse_rules(players, rules)
    if seed is None:
        seed = secrets.randbits(SEED_BITS)  # printed at the end, when every bot has stopped
    try:
        plan = make_plan(
            a,
            b,
            against,
            parsed,
            seed,
            matches,
            Sprt(h0, h1, alpha, beta) if sprt else None,
            TimeControl(per_action, bank),
            max_faults,
            concurrency,
            tuple(path.resolve() for path in ro_paths),
        )
    except (BotSpecError, CompareError, HypothesisError) as exc:
        raise _Unusable(str(exc)) from None
    _play(plan, players, seed, logs, sandbox, log_level, as_json)


def _play(
    plan: Plan, players: int, seed: int, logs: Path | None, sandbox: str, log_level: str, as_json: bool
) -> None:
    """Plays the comparison ``plan`` with its progress on stderr, prints its result, and exits with its
    verdict."""
    import asyncio
    import json

    from referee.cli.display import CompareDisplay
    from referee.compare_play import compare
    from referee.logs import referee_logging
    from referee.match.bots import BotSpecError
    from referee.match.faults import RefereeInternalError
    from referee.match.launcher import Confinement
    from referee.match.sandbox import SandboxError, SandboxMode

    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    confinement = Confinement(SandboxMode(sandbox), hidden=(logs.resolve(),) if logs else ())
    display = CompareDisplay(players)
    try:
        with referee_logging(log_level):
            result = run_until_signal(compare(plan, display, logs, confinement))
    except (BotSpecError, SandboxError, RefereeInternalError) as exc:
        display.close()
        raise _Unusable(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        display.close()
        click.echo(f"interrupted: no verdict; seed {seed} (--seed {seed} plays the same deals)", err=True)
        sys.exit(130)
    finally:
        display.close()
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo("\n".join(result.lines()))
        click.echo(f"seed {seed} (--seed {seed} replays this comparison)")
    sys.exit(int(result.verdict))


def _refuse(context: click.Context, names: tuple[str, ...], only: str) -> None:
    """A usage error naming the options of ``names`` given on the command line, which are ``only`` for
    the other kind of comparison."""
    given = [
        f"--{name.replace('_', '-')}"
        for name in names
        if context.get_parameter_source(name) is not ParameterSource.DEFAULT
    ]
    if given:
        raise click.UsageError(f"{', '.join(given)}: only for {only}")


def _rank(bots: tuple[str, ...], options: dict[str, Any]) -> None:
    """``referee compare A B C …``: the ranking of three bots or more, its progress on stderr (a line per
    table, and one per adjacent pair as it is decided), its result on stdout, its ending as the exit code."""
    import asyncio
    import json
    import secrets

    from pyramid_sdk.bot import TimeControl
    from pyramid_sdk.seeds import SEED_BITS
    from referee.compare import CompareError
    from referee.logs import referee_logging
    from referee.match.bots import BotSpecError
    from referee.match.faults import RefereeInternalError
    from referee.match.launcher import Confinement
    from referee.match.sandbox import SandboxError, SandboxMode
    from referee.ranking import Method, RankingError
    from referee.ranking_plan import decision_line, make_rank_plan
    from referee.ranking_play import Progress, rank

    context = click.get_current_context()
    players, seed, logs, as_json = options["players"], options["seed"], options["logs"], options["as_json"]
    _refuse(context, ("h0", "h1", "beta", "matches", "sprt"), "two bots (A B)")
    parsed = parse_rules(players, options["rules"])
    if seed is None:
        seed = secrets.randbits(SEED_BITS)
    try:
        plan = make_rank_plan(
            bots,
            options["against"],
            parsed,
            seed,
            options["max_tables"],
            Method(alpha=options["alpha"], margin=options["margin"]),
            TimeControl(options["per_action"], options["bank"]),
            options["max_faults"],
            options["concurrency"],
            tuple(path.resolve() for path in options["ro_paths"]),
        )
    except (BotSpecError, CompareError, RankingError) as exc:
        raise _Unusable(str(exc)) from None

    def progress(step: Progress) -> None:
        if step.table:
            click.echo(f"table {step.tables}: {', '.join(step.table)}", err=True)
        for index in step.decided:
            pair = step.standing.pairs[index]
            relation = step.standing.relations[index]
            click.echo(
                f"{pair.upper} {relation.value} {pair.lower}: decided after {step.tables} tables "
                f"({decision_line(step.standing, index).split(': ', 1)[1]})",
                err=True,
            )

    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    confinement = Confinement(SandboxMode(options["sandbox"]), hidden=(logs.resolve(),) if logs else ())
    try:
        with referee_logging(options["log_level"]):
            result = run_until_signal(rank(plan, progress, logs, confinement))
    except (BotSpecError, SandboxError, RefereeInternalError) as exc:
        raise _Unusable(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        click.echo(f"interrupted: no verdict; seed {seed} (--seed {seed} plays the same tables)", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo("\n".join(result.lines()))
        click.echo(f"seed {seed} (--seed {seed} replays this ranking)")
    sys.exit(int(result.ending))
