"""The command that starts a league: ``init`` writes one, with its bots, into a folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from referee.cli.common import InputError


@click.command("init")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--name", help="The league's name (default: the folder's).")
def init_command(folder: Path, name: str | None) -> None:
    """Writes a league to start from into FOLDER (new or empty): league.yaml, a working bot in Python and
    one in Node.js, each in its own folder, and a README with the commands to run it.

    The league needs no checkout of Pyramid Arena: its opponents are the sample bots that come with the
    referee. The Node.js bot joins it where the Node.js SDK, node and npm are found here; otherwise it is
    written and left out, and the README says how to add it. Nothing is ever overwritten.
    """
    from referee.starter import StarterError, write_starter

    program = Path(sys.executable).parent / "referee"
    try:
        starter = write_starter(
            folder.resolve(), name or folder.resolve().name, str(program) if program.exists() else "referee"
        )
    except StarterError as exc:
        raise InputError(str(exc)) from None
    click.echo(f"init: a league in {starter.folder}: {', '.join(starter.files)}")
    if starter.node_problem:
        click.echo(
            f"node: {starter.node_problem}; node-bot is written but not in the league, where montecarlo "
            "takes its seat (README.md: adding the Node.js bot)"
        )
    click.echo(f"next: cd {starter.folder} && referee run league.yaml   (README.md has the rest)")
