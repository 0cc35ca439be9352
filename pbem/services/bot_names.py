"""The names of the computer players at a table: "Marta (computer, strong)".

A table calls its players by their first names, so a computer player gets one too, from a
fixed, culturally mixed list, marked as a computer with its strength (README, "Playing by
mail").  The name is a pure function of the game and the seat (:func:`first_name`): the same
in every mail and on every page of the game, distinct from every other computer player's at
the table and never a human player's there (compared case- and accent-blind, first names too).

Each seat has its own lane of the list (a seeded permutation of :data:`FIRST_NAMES`, cut in
``LANES`` interleaved lanes), so two seats can never draw the same name, and a seat that turns
into a computer player mid-game (a resignation) changes no other computer player's name.

A name is a :class:`BotName`: a ``str`` whose value is the English form, carrying its parts, so
everything that handles names as strings (matching "replace Marta", sorting, lengths) works
unchanged.  The words "computer" and the strength are translated into the reader's language
by :func:`localized` just before a mail is rendered (``pbem.services.mailing.queue_mail``) or a
page is shown (``pbem.web.game``), from the mail catalogs (``babel.cfg`` extracts this module).
"""

from __future__ import annotations

import dataclasses
import functools
import gettext
import hashlib
import random
import re
import unicodedata
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from types import MappingProxyType
from typing import Any, TypeVar

from pbem.mail.i18n import load_translations, normalise_language

__all__ = ["FIRST_NAMES", "LANES", "STRENGTHS", "BotName", "first_name", "label", "localized"]

T = TypeVar("T")


def N_(message: str) -> str:  # noqa: N802 (gettext's marker name, known to the extractor)
    """Marks a message for extraction; translated later, in the reader's language."""
    return message


#: First names from many languages, short enough for a score table's column.
FIRST_NAMES: tuple[str, ...] = (
    "Marta", "Kenji", "Amara", "Lars", "Priya", "Mateo", "Yasmin", "Ioana",
    "Tomás", "Aiko", "Kwame", "Sofia", "Dmitri", "Leila", "Sven", "Chiara",
    "Rafael", "Mei", "Omar", "Ingrid", "Tiago", "Anya", "Jamal", "Elena",
    "Hiroshi", "Nadia", "Pablo", "Zainab", "Henrik", "Lucia", "Arjun", "Freya",
    "Kofi", "Camila", "Ravi", "Mira", "Emil", "Inês", "Luca", "Fatima",
    "Mihai", "Noor", "Oskar", "Nia", "Joaquim", "Sara", "Yusuf", "Lin",
)

#: Lanes of the permutation, one per seat: at least the largest table (the engine seats 3 to 7
#: players), each lane ``len(FIRST_NAMES) // LANES`` names long.
LANES = 8

#: The label of each computer player (``pbem.bots.BOTS``) by its strength: "easy" plays any
#: legal card at random, "medium" follows rules of thumb, "strong" plays out the hand.
STRENGTHS: dict[str, str] = {
    "random": N_("%(name)s (computer, easy)"),
    "heuristic": N_("%(name)s (computer, medium)"),
    "strong": N_("%(name)s (computer, strong)"),
}
#: A computer player this list does not know (a bot added later).
UNRATED = N_("%(name)s (computer)")


def _fold(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).strip()


@functools.lru_cache(maxsize=4096)
def _order(game_id: int) -> tuple[str, ...]:
    """This game's permutation of the list (the same on every machine and run)."""
    seed = int.from_bytes(hashlib.sha256(f"pbem bot names {game_id}".encode()).digest()[:8], "big")
    names = list(FIRST_NAMES)
    random.Random(seed).shuffle(names)
    return tuple(names)


def first_name(game_id: int, seat: int, humans: Iterable[str] = ()) -> str:
    """The first name of the computer player in ``seat`` of game ``game_id``; ``humans``: the
    names of the human players at the table, which it must not equal."""
    taken: set[str] = set()
    for human in humans:
        folded = _fold(human)
        taken.add(folded)
        taken.update(folded.split()[:1])
    lane = _order(game_id)[seat % LANES::LANES]
    for name in lane:
        if _fold(name) not in taken:
            return name
    return f"{lane[0]} {seat + 1}"  # a lane's every name taken by humans: a number tells them apart


class BotName(str):
    """A computer player's name; its value is the English label."""

    first: str
    message: str

    def __new__(cls, first: str, bot: str | None) -> BotName:
        message = STRENGTHS.get(bot or "", UNRATED)
        value = super().__new__(cls, message % {"name": first})
        value.first = first
        value.message = message
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (self.first, self.message)

    def translated(self, translations: gettext.NullTranslations) -> str:
        """The label in the translations' language, as a plain ``str``."""
        return translations.gettext(self.message) % {"name": self.first}


def _rebuild(first: str, message: str) -> BotName:
    bot = next((k for k, v in STRENGTHS.items() if v == message), None)
    return BotName(first, bot)


def label(game_id: int, seat: int, bot: str | None, humans: Iterable[str] = ()) -> BotName:
    """The name mails and pages show for the computer player in ``seat``."""
    return BotName(first_name(game_id, seat, humans), bot)


@functools.lru_cache(maxsize=8)
def _translations(language: str) -> gettext.NullTranslations:
    return load_translations(language)


def localized(value: T, language: str | None) -> T:
    """``value`` with every :class:`BotName` in it, at any depth of dataclasses, tuples, lists and
    mappings, replaced by its label in ``language``; what holds none is returned as it is (the very
    object).  Run on every mail: plain values are passed over by their type, without a call."""
    lang = normalise_language(language or "")
    if lang == "en":
        return value
    return _walk(value, _translations(lang))


#: Types that never hold a name: passed over without a look inside.
_PLAIN: frozenset[type] = frozenset({str, int, float, bool, bytes, type(None), datetime, date, timedelta})
#: The init fields of each dataclass seen so far that may hold a name (``dataclasses.fields`` is
#: slow), or None for a type that is neither a dataclass, a tuple, a list nor a dict; and all its fields.
_FIELDS: dict[type, tuple[str, ...] | None] = {}
_ALL_FIELDS: dict[type, tuple[str, ...]] = {}


def _walk(value: Any, translations: gettext.NullTranslations) -> Any:
    kind = type(value)
    if kind is BotName:
        return value.translated(translations)
    if kind in _PLAIN:
        return value
    if kind is tuple or kind is list:
        items = None
        for k, item in enumerate(value):
            if type(item) in _PLAIN:
                continue
            new = _walk(item, translations)
            if new is not item:
                if items is None:
                    items = list(value)
                items[k] = new
        return value if items is None else kind(items)
    if kind is dict or kind is MappingProxyType:  # the contexts freeze their mappings in proxies
        pairs = None
        for key, item in value.items():
            if type(item) in _PLAIN:
                continue
            new = _walk(item, translations)
            if new is not item:
                if pairs is None:
                    pairs = dict(value)
                pairs[key] = new
        if pairs is None:
            return value
        return pairs if kind is dict else MappingProxyType(pairs)
    names = _FIELDS.get(kind, ())
    if names == ():
        names = _fields_of(kind)
    if names is None:
        return value
    changes = None
    for name in names:
        item = getattr(value, name)
        if type(item) in _PLAIN:
            continue
        new = _walk(item, translations)
        if new is not item:
            if changes is None:
                changes = {}
            changes[name] = new
    if changes is None:
        return value
    # A copy with the names swapped (``dataclasses.replace`` costs a call per field; these
    # classes check nothing a name could break).
    copy = object.__new__(kind)
    for name in _ALL_FIELDS[kind]:
        object.__setattr__(copy, name, changes[name] if name in changes else getattr(value, name))
    return copy


def _fields_of(kind: type) -> tuple[str, ...] | None:
    """The fields of a dataclass that may hold a name: not those declared as numbers, times,
    flags or literals only (read from the annotation's words)."""
    if not dataclasses.is_dataclass(kind):
        _FIELDS[kind] = None
        return None
    every = dataclasses.fields(kind)
    _ALL_FIELDS[kind] = tuple(f.name for f in every)
    found = tuple(f.name for f in every if f.init and not _nameless(f.type))
    _FIELDS[kind] = found
    return found


_NAMELESS_WORDS = frozenset({"int", "bool", "float", "datetime", "date", "timedelta", "None", "tuple",
                             "frozenset", "Literal", "ClassVar", "bytes"})
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _nameless(annotation: object) -> bool:
    text = _QUOTED.sub("", annotation if isinstance(annotation, str) else repr(annotation))
    return set(_WORD.findall(text)) <= _NAMELESS_WORDS
