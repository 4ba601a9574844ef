"""``referee token``: issue, revoke and list the tokens of a league's remote entrants (docs/REMOTE.md).
Only click is imported at the top; the token book and the league file are read inside each command."""

from __future__ import annotations

import datetime
from collections import Counter
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from referee.league.config import League

DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _league(path: str) -> League:
    from referee.league.config import LeagueError, load_league
    from referee.results.owner import made_by

    try:
        return load_league(path, check_commands=False, made_by=made_by)
    except LeagueError as exc:
        raise click.ClickException(str(exc)) from None


def _remote_entrant(league: League, name: str) -> None:
    names = [entrant.name for entrant in league.entrants if entrant.spec.remote]
    if name not in names:
        listed = ", ".join(names) or "none"
        raise click.ClickException(
            f"{league.path}: {name!r} is not a remote entrant of this league (remote: true); "
            f"its remote entrants: {listed}"
        )


def _lifetime(text: str | None) -> float | None:
    """``30d``, ``12h``, ``90m`` or seconds, as seconds.

    >>> _lifetime("12h"), _lifetime("90"), _lifetime(None)
    (43200.0, 90.0, None)
    """
    if text is None:
        return None
    unit = DURATIONS.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in DURATIONS else text
    try:
        value = float(number) * unit
    except ValueError:
        raise click.BadParameter(f"{text!r}: give a duration like 30d, 12h or 90m") from None
    if value <= 0:
        raise click.BadParameter(f"{text!r}: a token must live a while")
    return value


@click.group("token")
def token_group() -> None:
    """Tokens of remote entrants (docs/REMOTE.md): issue, revoke, list."""


@token_group.command("issue")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.argument("name")
@click.option("--expires", metavar="DURATION", help="The token stops working after this long: 30d, 12h, 90m.")
def issue_command(league_file: str, name: str, expires: str | None) -> None:
    """Prints a new token for remote entrant NAME, once: only its salted hash is kept. Any earlier token
    of NAME stops working (a connection that used it is dropped before its next match)."""
    from referee.remote.tokens import TokenBook, TokenError, tokens_path

    league = _league(league_file)
    _remote_entrant(league, name)
    book = TokenBook(tokens_path(league.database))
    try:
        token = book.issue(name, _lifetime(expires))
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(token)
    click.echo(
        f"token of {name!r} issued (shown this once; any earlier one is revoked): give it to the bot's "
        "author, who keeps it in a file named by PYRAMID_TOKEN_FILE (docs/REMOTE.md)",
        err=True,
    )


@token_group.command("revoke")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.argument("name")
def revoke_command(league_file: str, name: str) -> None:
    """Revokes NAME's token: its hellos are refused, and a connection that used it is dropped."""
    from referee.remote.tokens import TokenBook, TokenError, tokens_path

    league = _league(league_file)
    try:
        revoked = TokenBook(tokens_path(league.database)).revoke(name)
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"token of {name!r} revoked" if revoked else f"{name!r} had no token")


@token_group.command("list")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
def list_command(league_file: str) -> None:
    """Lists the remote entrants, when each token was issued and expires (never a token), and what the
    league's runs saw of each connection."""
    from referee.remote.record import remote_lines
    from referee.remote.tokens import TokenBook, TokenError, tokens_path

    league = _league(league_file)
    try:
        grants = TokenBook(tokens_path(league.database)).grants()
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    for entrant in (e for e in league.entrants if e.spec.remote):
        grant = grants.get(entrant.name)
        if grant is None:
            click.echo(f"{entrant.name}: no token (referee token issue {league_file} {entrant.name})")
            continue
        ends = f", expires {_when(grant.expires)}" if grant.expires else ""
        click.echo(f"{entrant.name}: token issued {_when(grant.issued)}{ends}")
    for line in remote_lines(league.remote_names, league.database, _played(league)):
        click.echo(line)


def _played(league: League) -> Counter[str]:
    """Matches stored per entrant, so that one that played is never said to have never connected when
    the record of connections is missing; none if the league has no readable results (the tokens are
    still listed: this command is about them)."""
    from referee.results.errors import StoreError
    from referee.results.store import Store

    if not league.database.exists():
        return Counter()
    try:
        store = Store(league.database, write=False)
    except StoreError:
        return Counter()
    try:
        return Counter(name for summary in store.summaries().values() for name in summary.seats)
    except StoreError:
        return Counter()
    finally:
        store.close()


def _when(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
