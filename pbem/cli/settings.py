"""The settings a command runs with: built from the ``PBEM_*`` environment once per invocation.

A command that needs them takes them as its first argument with ``@pass_settings``::

    @click.command()
    @pass_settings
    def smtp(settings: Settings) -> None: ...
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from pbem.config import ConfigError, Settings

__all__ = ["pass_settings", "settings_from"]

F = TypeVar("F", bound=Callable[..., Any])


def settings_from(ctx: click.Context) -> Settings:
    """The process's Settings, built from the environment once per invocation."""
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
