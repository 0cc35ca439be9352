"""The settings a command runs with: built from the ``PBEM_*`` environment once per invocation.

A command that needs them takes them as its first argument with ``@pass_settings``::

    @click.command()
    @pass_settings
    def smtp(settings: Settings) -> None: ...

The commands that only read (``READ_ONLY_COMMANDS``) leave nothing behind when run where no
server's data is (README, "Configuration"): without ``PBEM_SECRET_KEY`` and with no development
secret in the data directory yet, they get a key made up for this one invocation instead of
``Settings.from_env`` writing ``<data dir>/secret_key`` (and the directory); nothing they do
is signed, so no later process needs that key.  Every other command keeps the secret it finds,
or writes it, as before.
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

import click

from pbem.config import SECRET_KEY_FILE, ConfigError, Settings

__all__ = ["READ_ONLY_COMMANDS", "pass_settings", "settings_from"]

#: Commands (their path below ``pbem``) that never write nor sign anything.
READ_ONLY_COMMANDS = frozenset({
    "db current", "dns", "game check", "game list", "game show", "mail list", "mail show", "player export",
})

F = TypeVar("F", bound=Callable[..., Any])


def settings_from(ctx: click.Context) -> Settings:
    """The process's Settings, built from the environment once per invocation."""
    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        try:
            root.obj = _from_env(read_only=_command_path(ctx) in READ_ONLY_COMMANDS)
        except ConfigError as error:
            raise click.ClickException(f"configuration: {error}") from error
    return root.obj


def _command_path(ctx: click.Context) -> str:
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def _from_env(*, read_only: bool) -> Settings:
    env = os.environ
    if read_only and not env.get("PBEM_SECRET_KEY"):
        # A key of this invocation's own; the settings are otherwise exactly the environment's.
        settings = Settings.from_env({**env, "PBEM_SECRET_KEY": secrets.token_hex(32)})
        written = settings.data_dir / SECRET_KEY_FILE
        if settings.environment != "production" and not written.exists():
            return settings
    return Settings.from_env(env)


def pass_settings(function: F) -> F:
    """Decorator: call the command with the Settings as its first argument."""

    @click.pass_context
    @functools.wraps(function)
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        return ctx.invoke(function, settings_from(ctx), *args, **kwargs)

    return wrapper  # type: ignore[return-value]
