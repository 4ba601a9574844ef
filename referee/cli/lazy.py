"""A click group that imports a command's module only when the command is used: click's documented
"lazily loading subcommands" pattern, driven by a table of names (``referee.cli.COMMANDS``)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click


class LazyGroup(click.Group):
    """A group whose commands are ``module:attribute`` strings, imported on first use: naming a command
    (or listing the group's help, which shows each one's first line) loads its module and nothing else."""

    def __init__(self, *args: Any, commands: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            return self.load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def load(self, name: str) -> click.Command:
        """The command ``name`` of the table, imported now (a wrong table entry is our bug: loud)."""
        module_name, _, attribute = self.lazy_commands[name].partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy_commands[name]} is not a click command")
        return command
