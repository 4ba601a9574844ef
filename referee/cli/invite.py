"""``referee invite``: issue, list and revoke the invite codes with which authors enter remote entrants
by themselves (``referee serve --entry invite``; docs/REMOTE.md, "Entering by yourself"). Only click is
imported at the top; the invite book and the league file are read inside each command."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

import click

from referee.cli.token import _league, _lifetime

if TYPE_CHECKING:
    from referee.remote.invites import InviteBook


def _book(league_file: str) -> InviteBook:
    from referee.remote.invites import InviteBook, invites_path

    return InviteBook(invites_path(_league(league_file).database))


@click.group("invite")
def invite_group() -> None:
    """Invite codes for authors to enter remote entrants at referee serve --entry invite: issue, list,
    revoke."""


@invite_group.command("issue")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--uses", type=click.IntRange(1, 1000), default=1, show_default=True, help="Entries the code admits."
)
@click.option(
    "--expires", metavar="DURATION", default="7d", show_default=True, help="How long it lasts: 7d, 12h, 90m."
)
def issue_command(league_file: str, uses: int, expires: str) -> None:
    """Prints a new invite code, once: only its salted hash is kept. An author enters with it at the
    server's /enter page (or POST /api/v1/entries), choosing the entrant's name there."""
    from referee.remote.invites import InviteError

    book = _book(league_file)
    lifetime = _lifetime(expires)
    assert lifetime is not None
    try:
        key, code = book.issue(uses, lifetime)
    except InviteError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(code)
    click.echo(
        f"invite {key} issued (shown this once): {uses} entr{'y' if uses == 1 else 'ies'}, for {expires}; "
        f"give it to the author, who enters at the server's /enter page (`referee invite revoke "
        f"{league_file} {key}` withdraws it)",
        err=True,
    )


@invite_group.command("list")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
def list_command(league_file: str) -> None:
    """Lists the invites: id, when issued and when it expires, entries used and left (never a code)."""
    import time

    from referee.remote.invites import InviteError

    try:
        invites = _book(league_file).invites()
    except InviteError as exc:
        raise click.ClickException(str(exc)) from None
    if not invites:
        click.echo(f"no invites (referee invite issue {league_file})")
    now = time.time()
    for invite in sorted(invites.values(), key=lambda i: i.issued):
        state = "expired" if now >= invite.expires else f"{invite.left} of {invite.uses} entries left"
        click.echo(
            f"{invite.id}: issued {_when(invite.issued)}, expires {_when(invite.expires)}; {invite.used} "
            f"used, {state}"
        )


@invite_group.command("revoke")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.argument("invite_id", metavar="ID")
def revoke_command(league_file: str, invite_id: str) -> None:
    """Revokes the invite ID: its code admits no more entries (the entrants it admitted stay: revoke
    their tokens with referee token revoke)."""
    from referee.remote.invites import InviteError

    try:
        revoked = _book(league_file).revoke(invite_id)
    except InviteError as exc:
        raise click.ClickException(str(exc)) from None
    if not revoked:
        raise click.ClickException(f"no invite {invite_id!r} (referee invite list {league_file})")
    click.echo(f"invite {invite_id} revoked")


def _when(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
