"""``referee logs``: an entrant's debug lines, the text its bot sent about its own decisions, for the
organiser (docs/PROTOCOL.md, "Debug lines"). It only reads, like the commands of
:mod:`referee.cli.results`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from referee.cli.common import InputError

if TYPE_CHECKING:
    from referee.results.debug import StoredDebugLine


@click.command("logs")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.argument("entrant", metavar="ENTRANT")
@click.option(
    "--match", "match_id", metavar="ID", help="Only this match's lines (an id of `referee matches`)."
)
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="Only the last N lines.")
def logs_command(league_file: str, entrant: str, match_id: str | None, limit: int | None) -> None:
    """Prints the debug lines ENTRANT's bot sent with its answers in LEAGUE, one a line: match id, deal,
    step of the deal (1 is the declaration, then the cards in play order) and text.

    For the organiser and the bot's author only: no export, report or page shows them. A bot's line
    breaks and other unprintable characters are shown escaped (\\n); an answer's text that was not kept
    (over the caps) is shown as such, with its size.
    """
    from referee.cli.storage import failure, results, unread
    from referee.match.debug import DebugFate
    from referee.results.debug import debug_lines, escaped, has_played, seats_of
    from referee.results.errors import StoreError

    store, league, _ = results(league_file)
    try:
        if entrant not in {e.name for e in league.entrants} and not has_played(store, entrant):
            names = ", ".join(sorted(e.name for e in league.entrants))
            raise InputError(f"no entrant {entrant!r} in {league.name}; its entrants are {names}")
        if match_id is not None:
            seats = seats_of(store, match_id)
            if seats is None:
                raise click.ClickException(
                    f"no stored match {match_id!r} in {league.database}; `referee matches {league_file} "
                    f"--entrant {entrant}` lists the stored ones"
                )
            if entrant not in seats:
                raise click.ClickException(
                    f"{entrant} did not play match {match_id} (its seats: {', '.join(seats)})"
                )
        lines = debug_lines(store, entrant, match_id, limit)
    except StoreError as exc:
        raise failure(exc, unread(exc)) from None
    finally:
        store.close()
    for line in lines:
        shown = escaped(line.text) if line.fate is DebugFate.KEPT else _not_kept(line)
        click.echo(f"{line.match_id}  deal {line.deal}  step {line.step}  {shown}")
    if not lines:
        where = f" in match {match_id}" if match_id is not None else ""
        click.echo(f"no debug lines of {entrant}{where} in {league.name}", err=True)


def _not_kept(line: StoredDebugLine) -> str:
    """What ``referee logs`` shows for an answer whose debug text was not kept (its fate says why)."""
    from pyramid_sdk.debugging import MAX_DEBUG_BYTES, MAX_DEBUG_PER_MATCH
    from referee.match.debug import DebugFate

    if line.fate is DebugFate.TOO_LONG:
        return f"(not kept: {line.size} bytes, over the limit of {MAX_DEBUG_BYTES} bytes per answer)"
    return (
        f"(not kept: {line.size} bytes, this match's lines of the entrant would pass {MAX_DEBUG_PER_MATCH})"
    )
