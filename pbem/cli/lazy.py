"""A click group whose commands are imported only when one is run (click's documentation, "Complex
Applications", lazily loading subcommands).

Each command is named by ``module:attribute`` in the group's table, with the short help that
``--help`` lists beside it, so listing the commands imports none of them: ``pbem --help`` starts
without SQLAlchemy, Celery, Jinja or the services (README, "Benchmarks": ``pbem bench cli``).
``tests/test_cli_start.py`` checks that each table's short help is the command's own;
``tests/test_layers.py`` reads the tables as import edges of the group's module (docs/architecture.md,
"Which part may import which").
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import click

__all__ = ["Lazy", "LazyGroup"]


class Lazy(NamedTuple):
    """Where a command is (``pbem.cli.game.listing:list_command``) and its short help."""

    target: str
    help: str

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def attribute(self) -> str:
        return self.target.partition(":")[2]


class LazyGroup(click.Group):
    """A group whose ``lazy`` commands are imported on first use (and listed without it)."""

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})  # type: ignore[arg-type]

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            self.add_command(self.load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)  # type: ignore[arg-type]

    def load(self, cmd_name: str) -> click.Command:
        """Import the command the table names (the table's one allowance for an import at run time)."""
        entry = self.lazy[cmd_name]
        command = getattr(importlib.import_module(entry.module), entry.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{entry.target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, as click lists them, from the table for those not imported."""
        commands = [(name, self.commands.get(name) or click.Command(name, help=self.lazy[name].help))
                    for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in commands if not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in shown])
