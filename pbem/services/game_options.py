"""A new game's rules and computer players as people write them (README, "Starting a game").

One reader for both fronts: the ``name: value`` lines of a mail to ``new@`` (``pbem.services.inbound``)
and ``pbem game new --option name=value --bots …`` (``pbem.services.operator``). An option's name is
read with its Portuguese and Romanian forms (the mail reader's :data:`~pbem.mail.reading.commands.OPTION_ALIASES`),
and its value by the kind of value the engine's :class:`~pbem.engine.Rules` field holds (RULES.md §3,
§6), its words in any of the three languages (:data:`~pbem.mail.reading.commands.OPTION_WORDS`):

=====================  ==================================================================
yes or no              ``sun: yes``, ``pass_to_partner: sim``, ``kitty_exchange: da``, on/off, true/false
a number               ``target: 50``, ``jd_bonus: -10``; ``end_after_hands: none`` where it may be none
a word                 ``moon: new``, ``kitty: first trick`` (or ``first_trick``), ``partnership: echipa``
a list                 ``removed_cards: 2D 2C`` (or ``2♦, 2♣``), ``pass_cycle: left right hold``;
                       ``none`` for an empty list
cards and their points ``extra_penalties: KS 10, AS 7`` (also ``KS=10 AS=7``, ``K♠ 10``); ``none``
=====================  ==================================================================

A value already of its kind (the command line's JSON: ``--option 'pass_cycle=["hold"]'``) is taken as
it is. The preset is ``rules: black maria`` or ``black-maria``. The computer players are ``bots: 3``
(the server's default bot), ``bots: 3 strong``, ``bots: 2 heuristic, 1 random``; a strength is a bot's
name (``pbem.bots.BOTS``) or the word a table shows for it (:mod:`.bot_names`: easy, medium, strong).

Whatever cannot be used raises :class:`OptionRefused` with a code and its details: the engine's
(``InvalidRules``: ``DECK_DOES_NOT_DIVIDE``, ``UNKNOWN_PRESET`` with the presets and the closest…) or
this reader's (``NOT_A_BOOL``, ``NOT_AN_INT``, ``NOT_A_MAP``, ``BAD_BOT_STRENGTH``), each explained
to the player by the ``rules_problem`` phrase of the mail templates.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping
from typing import Any

from pbem.bots import BOTS
from pbem.engine import InvalidRules, Rules
from pbem.mail.notation import fold
from pbem.mail.reading.commands import OPTION_ALIASES, OPTION_NO, OPTION_WORDS, OPTION_YES, bot_groups

__all__ = ["BOT_KINDS", "OptionRefused", "bot_kind", "make_rules", "option_name", "preset_name",
           "read_bots", "read_option"]

#: The computer players one may ask for, by their ``pbem.bots`` names.
BOT_KINDS: tuple[str, ...] = tuple(sorted(BOTS, key=lambda k: (("random", "heuristic", "strong") + (k,)).index(k)))
#: Written for "nothing" (an empty list, an option set to none).
NONE_WORDS = frozenset({"none", "nothing", "no", "empty", "-", "nenhum", "nenhuma", "nada", "nao",
                        "niciunul", "niciuna", "nimic", "nu"})
#: Words around a strength that say nothing more: ``bots: 3 strong bots``.
_BOT_FILLER = frozenset({"bot", "bots", "robo", "robos", "robot", "robots", "boti", "roboti", "computer",
                         "computers", "computador", "computadores", "calculator", "calculatoare", "player",
                         "players", "jogador", "jogadores", "jucator", "jucatori", "de", "x"})
#: Options whose values are cards (RULES.md §3): kept as written (the engine reads ``2♦``, ``10h``, and
#: a refusal quotes a wrong card as the player wrote it); other words are folded to the engine's.
CARD_OPTIONS = frozenset({"removed_cards", "bonus_card", "extra_penalties"})
#: The longest value quoted back in a refusal.
_QUOTED = 60


class OptionRefused(ValueError):
    """An option (or the options together) that cannot be used: a code and its details, as the
    engine's :class:`~pbem.engine.InvalidRules` has them."""

    def __init__(self, code: str, **details: Any) -> None:
        super().__init__(f"{code}: {details}")
        self.code = code
        self.details = details


def option_name(text: str) -> str:
    """An option's name as written (``Removed cards``, ``jogadores``) -> the engine's (``removed_cards``,
    ``players``)."""
    key = re.sub(r"[\s-]+", "_", fold(str(text)).strip())
    return OPTION_ALIASES.get(key, key)


def preset_name(text: str) -> str:
    """A preset as written (``Black Maria``, ``partnership individual``) -> the engine's name
    (``black-maria``); unknown names are left for the engine to refuse with the closest one."""
    return re.sub(r"[\s_]+", "-", fold(str(text)).strip())


def _kind(name: str) -> str | None:
    """``bool``, ``int``, ``int_or_none``, ``word``, ``list``, ``map``, or None for no option."""
    hint = _HINTS.get(name)
    if hint is None:
        return None
    args = set(typing.get_args(hint))
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        if args == {int, type(None)}:
            return "int_or_none"
        hint = next(a for a in args if a is not type(None))
    if hint is bool:
        return "bool"
    if hint is int:
        return "int"
    if hint is str:
        return "word"
    if typing.get_origin(hint) is tuple:
        inner = typing.get_args(hint)[0]
        return "map" if typing.get_origin(inner) is tuple else "list"
    return None


_HINTS = typing.get_type_hints(Rules)


def _quoted(value: Any) -> str:
    return " ".join(str(value).split())[:_QUOTED]


def _word(text: str) -> str:
    """A word of a value, folded, spaces as ``_`` (``First trick`` -> ``first_trick``), in English."""
    word = re.sub(r"[\s-]+", "_", fold(text).strip())
    return OPTION_WORDS.get(word, word)


def read_option(name: str, value: Any) -> Any:
    """The value of option ``name`` (the engine's name) as :class:`~pbem.engine.Rules` takes it.
    A value that is not text is taken as it is; text is read by the option's kind (module doc).
    :class:`OptionRefused` when it cannot be read as that kind."""
    kind = _kind(name)
    if not isinstance(value, str) or kind is None:
        return value
    text = " ".join(value.split())
    folded = fold(text).strip().rstrip(".")
    if kind == "bool":
        if folded in OPTION_YES:
            return True
        if folded in OPTION_NO:
            return False
        raise OptionRefused("NOT_A_BOOL", option=name, value=_quoted(text))
    if kind in ("int", "int_or_none"):
        if kind == "int_or_none" and folded in NONE_WORDS:
            return None
        try:
            return int(folded.replace("\u2212", "-").replace(" ", ""))
        except ValueError:
            raise OptionRefused("NOT_AN_INT", option=name, value=_quoted(text)) from None
    word = str.strip if name in CARD_OPTIONS else _word
    if kind == "word":
        return word(text)
    if kind == "list":
        if folded in NONE_WORDS:
            return ()
        return tuple(word(item) for item in re.split(r"[\s,;]+", text) if item)
    # kind == "map": cards and their points
    if folded in NONE_WORDS:
        return {}
    tokens = [t for t in re.split(r"[\s,;=:]+", text) if t]
    pairs: dict[str, int] = {}
    for card, points in zip(tokens[::2], tokens[1::2]):
        try:
            pairs[card] = int(points.replace("\u2212", "-"))
        except ValueError:
            raise OptionRefused("NOT_A_MAP", option=name, value=_quoted(text)) from None
    if not tokens or len(tokens) % 2:
        raise OptionRefused("NOT_A_MAP", option=name, value=_quoted(text))
    return pairs


def make_rules(preset: str, options: Mapping[str, Any]) -> Rules:
    """The rules of ``preset`` with ``options`` over it, names and values as written (module doc).
    :class:`OptionRefused` with the reason when a value cannot be read or the rules cannot work
    (the engine's code and details: an unknown option gets the closest names)."""
    values = {option_name(key): value for key, value in options.items()}
    values = {name: read_option(name, value) for name, value in values.items()}
    try:
        return Rules.make(preset_name(preset), **values)
    except InvalidRules as error:  # the player's words quoted back at most _QUOTED characters long
        details = {k: _quoted(v) if isinstance(v, str) else v for k, v in error.details.items()}
        raise OptionRefused(error.code, **details) from error
    except (TypeError, ValueError) as error:  # a value of an unexpected shape (the command line's JSON)
        raise OptionRefused("BAD_RULES", problem=_quoted(error)) from error


def bot_kind(text: str, default: str) -> str:
    """A computer player's strength as written (``strong``, ``forte``, ``easy``, ``3 strong bots``'s
    words; nothing: ``default``) -> its ``pbem.bots`` name. :class:`OptionRefused`
    (``BAD_BOT_STRENGTH``, with the strengths) for a word that is none."""
    words = [w for w in re.findall(r"[^\W_]+", fold(text)) if w not in _BOT_FILLER]
    if not words:
        return default
    word = "_".join(words)
    kind = OPTION_WORDS.get(word, word)
    if kind not in BOTS:
        raise OptionRefused("BAD_BOT_STRENGTH", value=_quoted(text), strengths=list(BOT_KINDS))
    return kind


def read_bots(text: Any, default: str) -> tuple[str, ...]:
    """``bots:`` -> the computer players, one name per seat: ``3`` -> three ``default``,
    ``3 strong``, ``2 heuristic, 1 random`` (also ``2 fortes e 1 fácil``). Nothing: none.
    :class:`OptionRefused` (``BAD_OPTION``: no count; ``BAD_BOT_STRENGTH``) otherwise."""
    if isinstance(text, int) and not isinstance(text, bool) and 0 <= text:
        return (default,) * text
    if text is None or not str(text).strip():
        return ()
    groups = bot_groups(str(text))
    if groups is None:
        raise OptionRefused("BAD_OPTION", option="bots", value=_quoted(text))
    return tuple(kind for count, words in groups for kind in (bot_kind(words, default),) * count)
