"""The commands that read a league's stored results and write nothing to them: ``leaderboard``,
``matches``, ``export``, ``report`` and ``replay`` (which also shows a match record file)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

import click

from referee.cli.common import InputError

if TYPE_CHECKING:
    from referee.report.text import Replayable

FORMAT_NAMES: Final = ("csv", "json", "markdown", "table")
"""The leaderboard's formats, the keys of ``referee.report.text.FORMATS``, written out so that
``referee leaderboard --help`` need not load the report (tests/test_cli_package.py checks they agree)."""


@click.command("leaderboard")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default="table", show_default=True)
@click.option("--crosstable", "cross", is_flag=True, help="Then the crosstable, as the HTML report shows it.")
def leaderboard_command(league_file: str, fmt: str, cross: bool) -> None:
    """Prints the leaderboard of LEAGUE from its stored results (sorted by μ − 3σ)."""
    from collections import Counter

    from referee.cli.storage import results, say_settlement, stored_matches
    from referee.remote.record import remote_lines
    from referee.report.crosstable import crosstable
    from referee.report.text import FORMATS, crosstable_text, leaderboard_table
    from referee.results.reading import fragility_of, standings

    store, league, seed = results(league_file)
    stored = stored_matches(store)  # read once: the board, the crosstable and the settlement all use it
    read = standings(league, seed, stored)
    board = read.board
    fragile = fragility_of(read)
    if fmt == "table":
        click.echo(leaderboard_table(board, league, fragile=fragile), nl=False)
    else:
        click.echo(FORMATS[fmt](board, league), nl=False)
        if fragile is not None:  # a line of the league, not of a row: on stderr, to stay parseable
            click.echo(fragile.text(), err=True)
    if cross:
        names = [s.entrant for s in board.standings]
        click.echo("\n" + crosstable_text(crosstable(names, read.schedule, stored, board.mode)), nl=False)
    say_settlement(read, err=fmt != "table")
    for name, reason in store.disqualified().items():  # JSON, CSV, Markdown: on stderr, to stay parseable
        click.echo(f"disqualified: {name}: {reason}", err=fmt != "table")
    played = Counter(name for summary in stored.values() for name in summary.seats)
    for line in remote_lines(league.remote_names, league.database, played):
        click.echo(line, err=fmt != "table")


@click.command("replay")
@click.argument("source", metavar="LEAGUE|FILE.jsonl", type=click.Path(dir_okay=False))
@click.argument("match_id", required=False)
@click.option("--deal", type=click.IntRange(min=1), help="Only this deal, card by card.")
def replay_command(source: str, match_id: str | None, deal: int | None) -> None:
    """Shows a match deal by deal, with every pyramid drawn as on paper; --deal N shows deal N card by card.

    From a league file, MATCH_ID is an id from `referee matches` (like r1:alice,bob) or a schedule position
    from 1. A file ending in .jsonl is a match record instead: one match of `referee match --record`, or
    a league's `referee export`, whose MATCH_ID is an id or a line from 1 (leave it out for a file of
    one match). A league's deals show once every match of their table is played.
    """
    from referee.report.text import replay_text
    from referee.report.transcript import deal_by_card
    from referee.results.disclosure import HIDDEN_NOTE

    shown, deals_shown, where = _to_replay(source, match_id)
    if deal is None:
        click.echo(replay_text(shown, deals_shown), nl=False)
        return
    if not deals_shown:
        raise click.ClickException(f"match {shown.match_id} of {where}: {HIDDEN_NOTE}")
    if deal > len(shown.record.deals):
        raise click.BadParameter(
            f"match {shown.match_id} has deals 1 to {len(shown.record.deals)}", param_hint="--deal"
        )
    click.echo("seats: " + ", ".join(f"{seat}={name}" for seat, name in enumerate(shown.record.seats)))
    click.echo(deal_by_card(shown.record, deal))


def _to_replay(source: str, match_id: str | None) -> tuple[Replayable, bool, str]:
    """The match ``referee replay`` shows, whether its deals may be shown, and where it comes from."""
    from referee.cli.storage import loader, results, stored_matches
    from referee.league.planning import schedule_of
    from referee.report.records import NoSuchRecord, RecordsError, find_record
    from referee.results.disclosure import disclosure

    if source.endswith(".jsonl"):
        try:
            recorded = find_record(Path(source), match_id)
        except NoSuchRecord as exc:
            raise click.ClickException(str(exc)) from None
        except RecordsError as exc:
            raise InputError(str(exc)) from None
        return recorded, recorded.deals_shown, source
    store, league, seed = results(source)
    if match_id is None:
        raise click.UsageError(
            f"which match of {source}? give its id or schedule position (`referee matches {source}`)"
        )
    stored = stored_matches(store)
    schedule = schedule_of(league, seed, stored)
    if match_id.isdigit() and 1 <= int(match_id) <= len(schedule):
        match_id = schedule[int(match_id) - 1].match_id
    if match_id not in stored:
        raise click.ClickException(
            f"no stored match {match_id!r} in {league.database}; `referee matches {source}` lists the "
            "stored ones"
        )
    match = next(loader(store)([match_id]))
    return match, disclosure(schedule, stored).deals_shown(match), str(league.database)


@click.command("matches")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--entrant", metavar="NAME", help="Only the matches this entrant played.")
@click.option("--status", type=click.Choice(["complete", "void"]), help="Only the matches of this status.")
def matches_command(league_file: str, entrant: str | None, status: str | None) -> None:
    """Lists the stored matches of LEAGUE: position, id, status, points per seat, faults per entrant.

    Results only, never a deal. `referee replay LEAGUE ID` shows one of them (ID or position).
    """
    from referee.cli.storage import results, stored_matches
    from referee.league.planning import schedule_of
    from referee.report.text import matches_text

    store, league, seed = results(league_file)
    stored = stored_matches(store)
    known = {e.name for e in league.entrants} | {name for m in stored.values() for name in m.seats}
    if entrant is not None and entrant not in known:
        raise click.BadParameter(
            f"no entrant {entrant!r} in {league.name}; its entrants are {', '.join(sorted(known))}",
            param_hint="--entrant",
        )
    click.echo(matches_text(schedule_of(league, seed, stored), stored, entrant, status), nl=False)


@click.command("export")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default="-",
    help="File (default stdout).",
)
def export_command(league_file: str, fmt: str, output: Path) -> None:
    """Writes every stored match of LEAGUE, one JSON object per line (docs/FORMATS.md)."""
    from referee.cli.storage import loader, results, stored_matches
    from referee.league.planning import schedule_of
    from referee.report.text import export_lines, write_lines

    store, league, seed = results(league_file)
    stored = stored_matches(store)
    lines = export_lines(league, schedule_of(league, seed, stored), stored, loader(store))
    if str(output) == "-":
        for line in list(lines):  # every line made before the first is printed: a failure prints none
            click.echo(line)
        return
    try:
        count = write_lines(output, lines)
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write the export: {exc.strerror or exc}") from None
    click.echo(f"export: {count} match{'es' if count != 1 else ''} of {league.name} written to {output}")


@click.command("report")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option(
    "-o", "--output", type=click.Path(file_okay=False, path_type=Path), default="report", show_default=True
)
@click.option("--serve", is_flag=True, help="Then serve it at http://127.0.0.1:PORT until Ctrl-C.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
def report_command(league_file: str, output: Path, serve: bool, port: int) -> None:
    """Writes LEAGUE's results as a static HTML site (opens from disk, no network needed)."""
    import contextlib
    import functools
    import http.server

    from referee.cli.storage import failure, results, unread
    from referee.report.site import rewrite_report
    from referee.results.errors import StoreError
    from referee.results.reading import fragility_of, standings

    store, league, seed = results(league_file)
    try:
        read = standings(league, seed, store.summaries())
        index = rewrite_report(league, seed, output, store, read=read)
    except StoreError as exc:
        raise failure(exc, unread(exc)) from None
    click.echo(f"report: {index}")
    if (fragile := fragility_of(read)) is not None:  # not on the pages: the served ones cannot afford it
        click.echo(fragile.text())
    if serve:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(output))
        with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
            click.echo(f"serving at http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C stops)")
            with contextlib.suppress(KeyboardInterrupt):
                server.serve_forever()
