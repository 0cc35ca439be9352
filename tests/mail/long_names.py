"""The sample mails with long names: every player's name and game title about forty
characters, and the links as long as the real signed ones (`pbem.mail.links`).

The layout tests (a phone's width in a browser, 72 columns of text) render these beside the
plain samples of `pbem.mail.samples`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace

from pbem.mail.context import MailContext
from pbem.mail.links import game_token
from pbem.mail.samples import sample_contexts

__all__ = ["LONG_NAMES", "long_name_contexts"]

LONG_NAMES = {
    "Zoë Ávila": "Zoë Ávila Albuquerque de Vasconcelos Lima",
    "João Brandão": "João Pedro Brandão Magalhães de Sá Pereira",
    "Ștefan Țurcanu": "Ștefan-Alexandru Țurcanu-Popescu Dumitrescu",
    "Dana": "Dana Constantinescu-Vlădescu Ionescu Lupu",
    "Ana": "Ana Margarida Figueiredo Castelo-Branco",
    "zoe": "zoe.albuquerque.de.vasconcelos.lima.1987",
    "Friday table": "The Friday evening table of the chess club",
    "Ștefan's game": "Ștefan-Alexandru's game with the neighbours",
}

#: A seat's page as `pbem.mail.links.game_link` writes it, on a longer host name.
LONG_URL = f"https://hearts-by-email.example.org/game/{game_token('a' * 32, 12345, 3)}"


def _lengthened(value: object, name: str = "") -> object:
    """``value`` with every name or title of `LONG_NAMES` replaced and every link made long,
    inside dataclasses, tuples and mappings too."""
    if isinstance(value, str):
        if name.endswith("_url") and value:
            return LONG_URL + "/replay" if value.endswith("/replay") else LONG_URL
        return LONG_NAMES.get(value, value)
    if isinstance(value, tuple):
        return tuple(_lengthened(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _lengthened(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _lengthened(getattr(value, f.name), f.name) for f in fields(value) if f.init}
        return replace(value, **changes)
    return value


def long_name_contexts(language: str = "en") -> dict[str, list[MailContext]]:
    """`sample_contexts` with long names, titles and links."""
    return {kind: [_lengthened(c) for c in contexts]  # type: ignore[misc]
            for kind, contexts in sample_contexts(language).items()}
