"""The ``pbem`` command line.

Subcommands live in their own areas' modules and are imported only when used,
so ``import pbem.cli`` and ``pbem db upgrade`` stay cheap.  To add one, write a
click command in your module and add ONE line to ``COMMANDS`` below:

    "smtp": "pbem.smtp.cli:smtp",

A command that needs configuration takes it with ``@pass_settings``::

    @click.command()
    @pass_settings
    def smtp(settings: Settings) -> None: ...
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from pbem import __version__

# name -> "module:attribute" of a click command or group, imported on first use.
COMMANDS: dict[str, str] = {
    "db": "pbem.db.cli:db",
    "simulate": "pbem.sim.cli:simulate",
    "game": "pbem.services.cli:game",
    "bench": "pbem.bench.cli:bench",
    "web": "pbem.web.cli:web",
    "serve": "pbem.cli_run:serve",
    "smtp": "pbem.cli_run:smtp",
    "worker": "pbem.cli_run:worker",
    "beat": "pbem.cli_run:beat",
    "mail": "pbem.cli_run:mail",
}

F = TypeVar("F", bound=Callable[..., Any])


class LazyGroup(click.Group):
    """A click group whose subcommands are imported when invoked (the click
    documentation's "lazily loading subcommands" pattern)."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*self.lazy_commands, *super().list_commands(ctx)})  # type: ignore[arg-type]

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        target = self.lazy_commands.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)  # type: ignore[arg-type]
        module_name, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


def settings_from(ctx: click.Context) -> Any:
    """The process's Settings, built from the environment once per invocation."""
    from pbem.config import ConfigError, Settings

    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        try:
            root.obj = Settings.from_env(os.environ)
        except ConfigError as error:
            raise click.ClickException(f"configuration: {error}") from error
    return root.obj


def pass_settings(function: F) -> F:
    """Decorator: call the command with the Settings as its first argument."""

    @click.pass_context
    @functools.wraps(function)
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        return ctx.invoke(function, settings_from(ctx), *args, **kwargs)

    return wrapper  # type: ignore[return-value]


@click.group(cls=LazyGroup, lazy_commands=COMMANDS)
@click.version_option(__version__, prog_name="pbem")
def main() -> None:
    """pbem: Hearts by email.  Configuration comes from PBEM_* environment variables."""
