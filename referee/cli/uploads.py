"""``referee upload``: an author's source archive built and checked in the sandbox, then entered in a
league (issue #35; docs/LEAGUE.md, "Uploading a bot")."""

from __future__ import annotations

from pathlib import Path

import click

from referee.cli.common import InputError


@click.command("upload")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("entrant")
@click.argument("archive", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--uploads",
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder of uploaded versions, outside the league's folder [default: <league folder>-uploads].",
)
def upload_command(league_file: Path, entrant: str, archive: Path, uploads: Path | None) -> None:
    """Builds and checks an uploaded bot, then enters it: referee upload league.yaml alice bot.zip

    ARCHIVE is a .zip or .tar.gz with pyramid.yaml at its top (language, command, optional build). It is
    unpacked into UPLOADS/ENTRANT/VERSION/bot (VERSION a hash of its sources), built inside the sandbox
    with no network, checked as referee check does, and written into LEAGUE as a sandboxed entrant; a
    new upload of an entrant is a new version. Versions that no stored match uses any more are deleted.
    Exit code 2 for a refused archive, manifest, build or check; without bubblewrap, uploads are refused.
    """
    from referee.uploads.errors import UploadError
    from referee.uploads.pipeline import upload

    try:
        done = upload(league_file, entrant, archive, uploads)
    except UploadError as exc:
        raise InputError(f"not uploaded: {exc}") from None
    for line in done.check:
        click.echo(line)
    for old in done.pruned:
        click.echo(f"deleted version {old.version} of {entrant}: no stored match uses it")
    again = " (these sources were built and checked before)" if done.reused else ""
    click.echo(
        f"uploaded: {entrant} version {done.version.version} in {done.version.bot}{again}; "
        f"`referee run {league_file}` plays its matches"
    )
