"""The mail commands' home: one module per family under ``pbem.services.commands``, found through
the registry of ``pbem.services.requests``, imported by the dispatcher alone."""

from __future__ import annotations

import importlib
import pkgutil
import typing

import pbem.services.commands as commands
from pbem.mail.reading import commands as cmd
from pbem.services import inbound, requests
from tests.test_layers import EDGES

#: Answered to a seat as an unknown command: they belong to other addresses (``new@``, ``invite+…``).
NOT_SEAT_COMMANDS = {cmd.Accept, cmd.Decline, cmd.NewGame}

def test_every_seat_command_has_a_registered_handler() -> None:
    readable = set(typing.get_args(cmd.Command))
    assert set(requests.SEAT_COMMANDS) == readable - NOT_SEAT_COMMANDS


def test_every_command_module_is_registered_by_the_package() -> None:
    found = {f"{commands.__name__}.{m.name}" for m in pkgutil.iter_modules(commands.__path__)}
    assert found == set(commands.COMMAND_MODULES)
    handlers = {handler.__module__ for handler, _ in requests.SEAT_COMMANDS.values()}
    assert handlers == found  # each module registers, and only they do


def test_only_the_dispatcher_imports_the_commands() -> None:
    """The rest of the import rules, for these modules as for all, are tests/test_layers.py's."""
    users = {edge.source for edge in EDGES if edge.target.startswith(commands.__name__)
             and edge.source.startswith("pbem.services.") and not edge.source.startswith(commands.__name__)}
    assert users == {inbound.__name__}


def test_command_modules_import_cleanly_on_their_own() -> None:
    for name in commands.COMMAND_MODULES:
        importlib.import_module(name)
