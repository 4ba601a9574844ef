"""The ``referee`` command line: a click group whose commands load only when they are used.

``referee --help`` and ``referee X --help`` must start fast (under 0.3 s; benchmarks/README.md), so the
group knows its commands by name from :data:`COMMANDS` and imports a command's module only when that
command is named or its one-line help is listed. The modules that declare commands import just click
and the light option helpers of :mod:`referee.cli.common` at their top; everything below the CLI (gRPC,
protobuf, rich, pydantic, TrueSkill, Dask, the league) is imported inside the command that uses it.

Each command parses, calls one or two functions of the library below it, and prints; an error is one
line (:class:`referee.cli.common.InputError`, ``click.ClickException``), never a traceback.

Adding a command is one line in :data:`COMMANDS`: its name and ``"module:attribute"`` of the click
command, e.g. ``"token": "referee.cli.token:token_command"``. Write the command in a module of its group
of commands (or a new one) with its library imports inside its function, and
``tests/test_cli_package.py`` checks that it resolves, has help, and that ``referee --help`` still loads
no gRPC.
"""

from __future__ import annotations

from typing import Final

import click

from referee.cli.lazy import LazyGroup

COMMANDS: Final = {
    "analyze": "referee.cli.analysis:analyze_command",
    "check": "referee.cli.bots:check_command",
    "compare": "referee.cli.compare:compare_command",
    "demo": "referee.cli.play:demo",
    "export": "referee.cli.results:export_command",
    "init": "referee.cli.leagues:init_command",
    "invite": "referee.cli.invite:invite_group",
    "leaderboard": "referee.cli.results:leaderboard_command",
    "logs": "referee.cli.debug:logs_command",
    "match": "referee.cli.play:match_command",
    "matches": "referee.cli.results:matches_command",
    "replay": "referee.cli.results:replay_command",
    "report": "referee.cli.results:report_command",
    "run": "referee.cli.run:run_command",
    "serve": "referee.cli.serve:serve_command",
    "submit": "referee.cli.bots:submit_command",
    "token": "referee.cli.token:token_group",
    "upload": "referee.cli.uploads:upload_command",
}
"""Every command: its name and where its click command is (``module:attribute``), loaded on first use."""


@click.group(cls=LazyGroup, commands=COMMANDS)
@click.version_option(package_name="pyramid-arena")
def main() -> None:
    """Pyramid Arena: run bot tournaments of the card game Pyramid."""
    from referee.process import raise_open_files

    raise_open_files()
