"""The new text of a reply to a :data:`Command`.

:func:`parse_command` reads commands and cards in English, Portuguese and Romanian at once
(players mix their own language with their mail client's), case- and accent-insensitively.

**Command words** (:data:`COMMAND_WORDS`, one table) count only on a *command line*: a line that
is the command word and nothing else but a few filler words (:data:`FILLER_WORDS`: "please",
"I", "send me", "por favor", "te rog"…). So ``help``, ``Status?``, ``I resign`` and ``quais são
as regras`` are commands, but ``rules are silly, QS`` is a play of the queen. Commands that take
an argument (``say …``, ``vacation …``, ``queue …``, ``new game …``) take the rest of their line.
``queue clear``, ``autopilot off`` and ``notify <level> [everywhere]`` are described at
:class:`Queue`, :class:`Autopilot` and :class:`Notify`. A ``say …`` line is table talk: it never counts as anything else (``say nice QS!`` names no
card); read it with :func:`table_talk`. A reply of nothing but talk is :class:`Say`.

**Cards** are found by :func:`pbem.mail.notation.find_cards` in the lines that are not command or
talk lines. What they mean depends on ``expected`` (what the mail being answered asked for):

* ``"play"``: one card (repeated as often as you like) is :class:`Play`; two different cards are
  ``Ambiguous("TWO_CARDS")``: refused, never guessed;
* ``"pass"``: exactly ``pass_count`` different cards are :class:`Pass`, in the order written;
  another number is ``Unreadable("WRONG_CARD_COUNT")``;
* ``"discard"`` (``kitty_exchange``, RULES.md §6.2): the cards named are :class:`Discard`, however
  many (the engine checks the count); ``discard 7C 8D`` (``descarto …``, ``arunc …``) anywhere;
* ``"charge"`` (Turbo Hearts, RULES.md §6.4): the cards named are :class:`Charge`, however many (the
  engine checks them: chargeable, held, at most ``charge_limit``); ``none`` / ``nothing`` (``nada``,
  ``nimic``, :data:`CHARGE_NONE_WORDS`) alone is ``Charge(())``, nothing charged. ``charge QS TC`` and
  ``charge none`` (``anuncio …``, ``anunț …``) are read anywhere; a ``charge`` line naming neither is
  ``Unreadable("NO_COMMAND")``, one naming both ``Ambiguous("CHARGE_NONE_AND_CARDS")``;
* ``"moon"``: cards mean nothing; ``old``/``new`` (``velha``/``nova``, ``veche``/``nouă``, or
  "old moon"…) is :class:`MoonChoice`;
* ``"invitation"``: ``yes``/``sim``/``da`` also accept and ``no``/``não``/``nu`` also decline;
* ``"new_game"`` (mail to the new-game address): the whole text is a :class:`NewGame`;
* ``None`` (unknown): one card is a play; ``pass_count`` different cards a pass.

When a reply holds both a command line and cards, or two different commands, the first in the
text wins, unless one of them cannot be undone (:data:`IRREVERSIBLE`: resign, decline, abort):
then the reply is ``Ambiguous("CONFLICTING_COMMANDS")``.

Reason codes (the sentences live in the mail templates; ``details`` values are strings):

=========================  ==========  =====================================================
code                       class       details
=========================  ==========  =====================================================
``EMPTY``                  Unreadable  (none): no new text at all
``NO_COMMAND``             Unreadable  ``expected`` (if given): nothing recognisable
``UNKNOWN_WORD``           Unreadable  ``word``: a short reply that is no command or card
``DID_YOU_MEAN``           Unreadable  ``word`` (the line as written), ``suggestion`` (a card):
                                       a card name with a typo, "jak of hearts" (:func:`suggest_card`)
``WRONG_CARD_COUNT``       Unreadable  ``expected``, ``found`` (counts), ``cards``
``NO_PLAYERS``             Unreadable  (none): a new game naming no other player and no bots
``BAD_OPTION``             Unreadable  ``option``, ``value`` (at most 40 characters): an option
                                       of a new game that cannot be read (``bots: lots``)
``TWO_CARDS``              Ambiguous   ``cards``: the different cards named, space separated
``BOTH_MOON_CHOICES``      Ambiguous   (none): both old and new moon named
``CONFLICTING_COMMANDS``   Ambiguous   ``commands`` (names, space separated), ``cards``
``CHARGE_NONE_AND_CARDS``  Ambiguous   ``cards``: a charge naming cards and "none" at once
=========================  ==========  =====================================================

Command names (``Command.name``) are the keys of :data:`COMMAND_WORDS` plus ``play``, ``pass``,
``call``, ``no_pass``, ``moon``, ``unreadable`` and ``ambiguous``.

**Bounds.** Only the first :data:`MAX_COMMAND_CHARS` characters of the new text are read (cut at
a line end), and of them the first :data:`MAX_COMMAND_LINES` lines that are not blank: a command
is in a reply's first lines, and reading costs time per line. Addresses
are found token by token (:func:`.clean.find_addresses`), in time linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from difflib import get_close_matches
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar, Final, Union

from ..notation import CARD_LINE_WORDS, NAME_LINKS, RANK_NAMES, SUIT_NAMES, find_cards, find_mentions, fold
from .clean import find_addresses

#: Characters of a reply's new text that are read, and of its lines the non-empty ones read
#: (see the module docstring).
MAX_COMMAND_CHARS: Final = 32 * 1024
MAX_COMMAND_LINES: Final = 500
#: Filler words read before a command word on its line ("please send me the status"); a line
#: that starts with more is no command line.
MAX_LEADING_FILLERS: Final = 16
#: Characters of a line read for a yes or a no to an invitation (a sentence, not a page).
MAX_ANSWER_CHARS: Final = 500

# -- the commands ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play:
    card: str
    name: ClassVar[str] = "play"


@dataclass(frozen=True, slots=True)
class Pass:
    cards: tuple[str, ...]
    name: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True)
class Discard:
    """``kitty_exchange`` (RULES.md §6.2): the cards the kitty's taker discards face down
    (``discard 7C 8D``, ``descarto …``, ``arunc …``; or the cards alone when a discard is asked)."""

    cards: tuple[str, ...]
    name: ClassVar[str] = "discard"


@dataclass(frozen=True, slots=True)
class CallPass:
    """``dealer_calls_pass`` (RULES.md §6.3): the dealer's call, ``(direction, count)`` pairs in the
    order written (``2 left 1 right``, ``3 across``, ``mix``; pt ``2 esquerda 1 direita``, ro
    ``2 stânga 1 dreapta``, ``în față``, ``amestec``). The engine checks it (``BAD_CALL``)."""

    call: tuple[tuple[str, int], ...]
    name: ClassVar[str] = "call"


@dataclass(frozen=True, slots=True)
class Charge:
    """Turbo Hearts (RULES.md §6.4): the cards a seat charges (shows to the table) this hand, in the
    order written; ``()`` charges nothing (``charge none``, ``anuncio nada``, ``anunț nimic``). The
    engine checks them (``NOT_CHARGEABLE``, ``TOO_MANY_CHARGES``, ``CARD_NOT_IN_HAND``)."""

    cards: tuple[str, ...]
    name: ClassVar[str] = "charge"


@dataclass(frozen=True, slots=True)
class NoPass:
    """``pass_optional`` (RULES.md §6.3): the seat declines this hand's pass (``no pass``,
    ``não passo``, ``nu dau``), read only when a pass is asked."""

    name: ClassVar[str] = "no_pass"


@dataclass(frozen=True, slots=True)
class MoonChoice:
    choice: str  # "old" (the others score the moon) or "new" (the shooter subtracts it)
    name: ClassVar[str] = "moon"


@dataclass(frozen=True, slots=True)
class Help:
    name: ClassVar[str] = "help"


@dataclass(frozen=True, slots=True)
class Status:
    """Send my hand and the table again."""

    name: ClassVar[str] = "status"


@dataclass(frozen=True, slots=True)
class Games:
    """List my games."""

    name: ClassVar[str] = "games"


@dataclass(frozen=True, slots=True)
class Rules:
    name: ClassVar[str] = "rules"


@dataclass(frozen=True, slots=True)
class Resign:
    """``resign`` asks what resigning means; only ``resign confirm`` (``confirmed``) resigns."""

    confirmed: bool = False
    name: ClassVar[str] = "resign"


@dataclass(frozen=True, slots=True)
class Accept:
    """Accept an invitation."""

    name: ClassVar[str] = "accept"


@dataclass(frozen=True, slots=True)
class Decline:
    """Decline an invitation."""

    name: ClassVar[str] = "decline"


@dataclass(frozen=True, slots=True)
class NewGame:
    """Start a game: the other players' addresses (lower case) and ``key: value`` options as written.

    Option names are mapped from their Portuguese and Romanian forms (:data:`OPTION_ALIASES`) but
    not checked, and values are kept as written: the services read them against the engine's
    options (``pbem.services.game_options``, with the words of :data:`OPTION_WORDS`). ``players:``
    with addresses names the other players; ``players: 5`` (no address) is the option, the table's
    size. The one option read here is ``bots``: when present, ``options["bots"]`` is its groups,
    each a count in digits (at most :data:`MAX_BOTS`) and optionally a strength as written,
    comma separated (``"3"`` for ``bots: 03``, ``"3 strong"``, ``"2 heuristic, 1 random"`` for
    ``bots: 2 heuristic and 1 random``), and :attr:`bots` is the total count. A group without a count
    (``bots: three``, ``-1``, ``2.5``) is ``Unreadable("BAD_OPTION")``, never a NewGame: the answer
    asks for a number, as the mail templates say; the strength words are the services' to judge.
    """

    players: tuple[str, ...]
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    name: ClassVar[str] = "new_game"

    @property
    def bots(self) -> int:
        """The number of computer players asked for (0 when ``bots`` is not given)."""
        return sum(int(group.split()[0]) for group in self.options.get("bots", "0").split(","))


# Commands of long games (README, "Time", "Playing ahead", "Notifications"). They are recognised here; what they do is the services'.
@dataclass(frozen=True, slots=True)
class Vacation:
    """``vacation until <date>``, or ``vacation from <date> until <date>`` (planned ahead): the
    dates as written, for the service to read; ``starts`` is empty for a vacation from now."""

    until: str
    starts: str = ""
    name: ClassVar[str] = "vacation"


@dataclass(frozen=True, slots=True)
class Queue:
    """``queue QS AS 2C``: cards to play in this order when each becomes legal.

    ``queue clear`` (:data:`CLEAR_WORDS`) is ``Queue((), clear=True)``; a ``queue`` line naming
    no card and no clear word is ``Queue(())``, which the service refuses.
    """

    cards: tuple[str, ...]
    clear: bool = False
    name: ClassVar[str] = "queue"


@dataclass(frozen=True, slots=True)
class Autopilot:
    """``autopilot``: a computer player plays for me for the rest of this hand;
    ``autopilot off`` (``on=False``) stops it."""

    on: bool = True
    name: ClassVar[str] = "autopilot"


@dataclass(frozen=True, slots=True)
class Language:
    """``language pt`` / ``idioma português`` / ``limba română``: the language of my mails.
    ``code`` is ``en``, ``pt`` or ``ro``, or None when the line names none of them."""

    code: str | None
    name: ClassVar[str] = "language"


#: Language names and codes (folded) -> code.
LANGUAGE_NAMES: Final = {
    **dict.fromkeys(("en", "english", "ingles", "inglesa", "engleza"), "en"),
    **dict.fromkeys(("pt", "portuguese", "portugues", "portuguesa", "portugheza"), "pt"),
    **dict.fromkeys(("ro", "romanian", "romeno", "romena", "romana"), "ro"),
}


@dataclass(frozen=True, slots=True)
class ForcedCards:
    """``autoplay off``: ask me even when I have a single legal card; ``autoplay on``: play it for me
    (the default)."""

    on: bool = True
    name: ClassVar[str] = "forced_cards"


@dataclass(frozen=True, slots=True)
class Notify:
    """``notify every card`` / ``notify turn and trick`` / ``notify digest`` / ``notify turn only``.

    ``level`` is one of :data:`NOTIFY_LEVELS`' keys, or None when the line names none (the
    service answers with the choices); ``everywhere`` when the line also says "all games"
    (:data:`EVERYWHERE_WORDS`): the player's default for every game, not just this one.
    """

    level: str | None
    everywhere: bool = False
    name: ClassVar[str] = "notify"


@dataclass(frozen=True, slots=True)
class Say:
    """Table talk only (a reply that is nothing but ``say …`` lines)."""

    text: str
    name: ClassVar[str] = "say"


@dataclass(frozen=True, slots=True)
class History:
    name: ClassVar[str] = "history"


@dataclass(frozen=True, slots=True)
class Pause:
    name: ClassVar[str] = "pause"


@dataclass(frozen=True, slots=True)
class Resume:
    name: ClassVar[str] = "resume"


@dataclass(frozen=True, slots=True)
class Abort:
    name: ClassVar[str] = "abort"


@dataclass(frozen=True, slots=True)
class Extend:
    """``extend 24h`` / ``extend Bob`` / ``extend Bob 2d``: the rest of the line, for the service."""

    text: str
    name: ClassVar[str] = "extend"


@dataclass(frozen=True, slots=True)
class Replace:
    """``replace Bob ana@example.org``: the rest of the line, for the service."""

    text: str
    name: ClassVar[str] = "replace"


@dataclass(frozen=True, slots=True)
class TimeZone:
    """``timezone Europe/Lisbon``: the zone as written, for the service to check."""

    zone: str
    name: ClassVar[str] = "timezone"


@dataclass(frozen=True, slots=True)
class Unreadable:
    reason: str
    details: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    name: ClassVar[str] = "unreadable"


@dataclass(frozen=True, slots=True)
class Ambiguous:
    reason: str
    details: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    name: ClassVar[str] = "ambiguous"


Command = Union[
    Play, Pass, Discard, CallPass, NoPass, Charge, MoonChoice, Help, Status, Games, Rules, Resign, Accept, Decline, NewGame,
    Vacation, Queue, Autopilot, ForcedCards, Language, Notify, Say, History, Pause, Resume, Abort, Extend,
    Replace, TimeZone, Unreadable, Ambiguous,
]

# -- the words ---------------------------------------------------------------------------------

#: Every command word, by command and language. Folding makes accents and case optional; a
#: phrase of several words matches those words in order.
COMMAND_WORDS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "help": {"en": ("help", "commands", "?"), "pt": ("ajuda", "socorro", "comandos"),
             "ro": ("ajutor", "comenzi")},
    "status": {"en": ("status", "state", "hand", "table"),
               "pt": ("estado", "situação", "mão", "mesa"),
               "ro": ("stare", "starea", "situație", "situația", "mâna", "mâna mea", "masa")},
    "games": {"en": ("games", "list games", "list"), "pt": ("jogos", "partidas"),
              "ro": ("jocuri", "jocurile")},
    "rules": {"en": ("rules",), "pt": ("regras",), "ro": ("reguli", "regulile")},
    "resign": {"en": ("resign", "quit", "forfeit", "give up"),
               "pt": ("desisto", "desistir", "abandono", "abandonar"),
               "ro": ("renunț", "renunță", "abandonez", "abandon", "mă retrag", "retrag")},
    "resign_confirm": {"en": ("resign confirm", "confirm resign", "confirm resignation", "resign confirmed"),
                       "pt": ("desisto confirmo", "desistir confirmo", "confirmo desistir", "confirmo que desisto",
                              "confirmo a desistência"),
                       "ro": ("renunț confirm", "renunță confirm", "abandonez confirm", "confirm renunțarea",
                              "confirm că renunț")},
    "accept": {"en": ("accept", "join", "count me in"), "pt": ("aceito", "aceitar", "participo", "entro"),
               "ro": ("accept", "accepta", "particip", "intru")},
    "decline": {"en": ("decline", "refuse", "no thanks"), "pt": ("recuso", "recusar", "não obrigado"),
                "ro": ("refuz", "refuza", "declin", "nu mulțumesc")},
    "history": {"en": ("history", "moves"), "pt": ("histórico", "jogadas"),
                "ro": ("istoric", "istoricul", "mutări", "mutările")},
    "autopilot": {"en": ("autopilot", "auto pilot", "autopilot on"),
                  "pt": ("piloto automático", "piloto automático ligado", "ligar piloto automático"),
                  "ro": ("pilot automat", "pilot automat pornit", "pornește pilotul automat")},
    "autopilot_off": {"en": ("autopilot off", "auto pilot off", "stop autopilot", "no autopilot"),
                      "pt": ("piloto automático desligado", "desligar piloto automático",
                             "desliga o piloto automático"),
                      "ro": ("pilot automat oprit", "oprește pilotul automat", "fără pilot automat")},
    "language": {"en": ("language",), "pt": ("idioma", "lingua"), "ro": ("limba",)},
    "forced_on": {"en": ("autoplay on", "autoplay", "play forced cards", "play my only card"),
                  "pt": ("jogada automática ligada", "jogar cartas forçadas", "jogar a carta única"),
                  "ro": ("joc automat pornit", "joacă cărțile forțate", "joacă singura carte")},
    "forced_off": {"en": ("autoplay off", "no autoplay", "ask me always", "always ask me"),
                   "pt": ("jogada automática desligada", "sem jogada automática", "perguntar sempre"),
                   "ro": ("joc automat oprit", "fără joc automat", "întreabă-mă mereu")},
    "pause": {"en": ("pause",), "pt": ("pausa", "pausar"), "ro": ("pauză", "pauzeaza")},
    "resume": {"en": ("resume", "unpause", "continue"), "pt": ("retomar", "continuar"),
               "ro": ("reluare", "reia", "continuă")},
    "abort": {"en": ("abort", "cancel game"), "pt": ("abortar", "cancelar jogo", "cancelar partida"),
              "ro": ("anulează", "anulare", "anulează jocul")},
    # These take the rest of their line.
    "extend": {"en": ("extend", "more time"), "pt": ("prorrogar", "prolongar", "mais tempo"),
               "ro": ("prelungește", "prelungire", "mai mult timp")},
    "replace": {"en": ("replace", "substitute"), "pt": ("substituir", "substitui"),
                "ro": ("înlocuiește", "înlocuire")},
    "say": {"en": ("say",), "pt": ("diz", "dizer", "diga"), "ro": ("spune", "spun")},
    "discard": {"en": ("discard",), "pt": ("descarto", "descartar", "descarte"),
                "ro": ("arunc", "aruncă", "aruncați", "elimin")},
    # Turbo Hearts (RULES.md §6.4): ``charge QS TC``, ``charge none``
    "charge": {"en": ("charge", "i charge"), "pt": ("anuncio", "anunciar", "anuncia", "anuncie", "mostro"),
               "ro": ("anunț", "anunță", "anunțați", "arăt")},
    "timezone": {"en": ("timezone", "time zone"), "pt": ("fuso horário", "fuso"), "ro": ("fus orar", "fusul orar")},
    "vacation": {"en": ("vacation", "holiday", "away"), "pt": ("férias", "ausente"),
                 "ro": ("concediu", "vacanță", "plecat")},
    "queue": {"en": ("queue",), "pt": ("fila",), "ro": ("coadă",)},
    "notify": {"en": ("notify", "notifications", "notification"),
               "pt": ("notificar", "notificações", "notificação", "avisos"),
               "ro": ("notificări", "notificare", "notifică")},
    "new_game": {"en": ("new game", "newgame", "start game"), "pt": ("novo jogo", "nova partida", "jogo novo"),
                 "ro": ("joc nou", "partidă nouă")},
}
_TAKES_TEXT: Final = frozenset({"discard", "charge", "say", "vacation", "queue", "notify", "new_game", "extend", "replace",
                                 "timezone", "language"})
#: Commands that cannot be undone: never chosen when the reply also says something else.
IRREVERSIBLE: Final = frozenset({"resign", "resign_confirm", "decline", "abort"})
#: Words read only when the mail answered asked for them (``expected``).
EXPECTED_WORDS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "moon": {
        "moon_old": ("old", "old moon", "velha", "antiga", "lua velha", "veche", "vechi", "luna veche"),
        "moon_new": ("new", "new moon", "nova", "lua nova", "nouă", "nou", "luna nouă"),
    },
    "invitation": {
        "accept": ("yes", "sure", "ok", "okay", "sim", "claro", "da", "desigur"),
        "decline": ("no", "não", "nu"),
    },
    # pass_optional (RULES.md §6.3): declining the pass, when a pass is asked
    "pass": {
        "no_pass": ("no pass", "pass nothing", "keep my hand", "keep my cards", "decline the pass",
                    "não passo", "nao passo", "sem passe", "não passar", "fico com as cartas",
                    "nu dau", "nu dau nimic", "nu dau carti", "nu dau cărți", "păstrez cărțile"),
    },
    # Turbo Hearts (RULES.md §6.4): charging nothing, when a charge is asked (the cards alone charge them)
    "charge": {
        "charge_none": ("none", "nothing", "no charge", "no charges", "no cards", "i charge nothing",
                        "nada", "nenhuma", "nenhum", "não anuncio", "nao anuncio", "sem anúncio", "nenhuma carta",
                        "nimic", "niciuna", "niciunul", "nu anunț", "nu anunt", "fără anunț"),
    },
}
#: After ``charge``: nothing charged (``charge none``, ``anuncio nada``, ``anunț nimic``), folded.
CHARGE_NONE_WORDS: Final = frozenset({"none", "nothing", "no", "nada", "nenhuma", "nenhum", "nimic", "niciuna",
                                      "niciunul", "niciun"})
#: dealer_calls_pass (RULES.md §6.3): the words of a call (folded), as the engine names directions.
CALL_DIRECTION_WORDS: Final = {
    "left": "left", "esquerda": "left", "stanga": "left",
    "right": "right", "direita": "right", "dreapta": "right",
    "across": "across", "frente": "across", "fata": "across", "vizavi": "across", "opus": "across",
    "mix": "mix", "mixed": "mix", "misturar": "mix", "mistura": "mix", "amestec": "mix", "amesteca": "mix",
    "amestecat": "mix",
}
CALL_NUMBER_WORDS: Final = {
    "one": 1, "two": 2, "three": 3, "four": 4, "um": 1, "uma": 1, "dois": 2, "duas": 2, "tres": 3,
    "quatro": 4, "unu": 1, "una": 1, "o": 1, "doi": 2, "doua": 2, "trei": 3, "patru": 4,
}
#: Words a call may hold besides numbers and directions ("2 to the left and 1 to the right").
CALL_FILLERS: Final = frozenset({
    "to", "the", "and", "then", "card", "cards", "call", "i", "pass", "a", "e", "para", "carta", "cartas",
    "em", "passo", "si", "la", "in", "carte", "carti", "dau", "spre", "please", "por", "favor", "te", "rog",
})
#: Whatever was asked, these name a moon choice.
MOON_PHRASES: Final = {
    "moon_old": ("old moon", "lua velha", "luna veche"),
    "moon_new": ("new moon", "lua nova", "luna nouă"),
}
#: Words that may surround a command word on its line (folded: no accents, lower case).
FILLER_WORDS: Final = frozenset({
    # English
    "please", "pls", "plz", "i", "me", "my", "the", "a", "send", "show", "again", "now", "game",
    "this", "from", "of", "what", "are", "is", "want", "to", "d", "like", "need", "thanks", "thank",
    "you", "moon", "all", "for", "current", "?",
    # Portuguese
    "por", "favor", "o", "os", "as", "meu", "minha", "meus", "minhas", "manda", "mande", "envia",
    "envie", "mostra", "mostre", "de", "novo", "este", "esta", "jogo", "do", "da", "desta",
    "partida", "eu", "quero", "preciso", "quais", "sao", "qual", "e", "lua", "obrigado",
    "obrigada", "mim", "agora",
    # Romanian
    "te", "rog", "trimite", "trimiteti", "mi", "arata", "din", "nou", "jocul", "acest", "asta",
    "vreau", "sa", "care", "sunt", "este", "luna", "multumesc", "mie", "acum", "imi", "mea",
    "mele", "meu",
})
#: Words after ``queue`` that empty the queue.
CLEAR_WORDS: Final = frozenset({
    "clear", "cancel", "none", "off", "empty", "reset", "stop",
    "limpar", "limpa", "apagar", "apaga", "cancelar", "nenhuma", "vazia",
    "goleste", "sterge", "anuleaza", "nimic", "gol",
})
#: What ``notify …`` may ask for, by level; a phrase matches its words in order, anywhere in
#: the line, the longest phrase first (so "turn and trick" is not read as "turn").
NOTIFY_LEVELS: Final[dict[str, tuple[str, ...]]] = {
    "every_card": ("every card", "each card", "all cards", "every", "cards",
                   "cada carta", "todas as cartas", "cartas",
                   "fiecare carte", "toate cartile", "carti"),
    "turn_and_trick": ("turn and trick", "turn and tricks", "tricks", "trick", "normal", "default",
                       "vez e vaza", "vazas", "vaza", "padrao",
                       "rand si levata", "levate", "levata", "implicit"),
    "digest": ("digest", "daily", "once a day", "summary", "resumo", "diario", "uma vez por dia",
               "rezumat", "zilnic", "o data pe zi"),
    "turn_only": ("turn only", "my turn only", "only my turn", "my turn", "minimum", "off", "none",
                  "unsubscribe", "so a minha vez", "minha vez", "minimo", "desligar", "nada",
                  "doar randul meu", "randul meu", "minim", "oprit", "dezabonare"),
}
#: Words that make a ``notify`` line the player's choice for all their games.
EVERYWHERE_WORDS: Final = ("everywhere", "all games", "all my games", "every game",
                           "todos os jogos", "todos os meus jogos", "em todo lado",
                           "toate jocurile", "peste tot")

#: Option names in other languages, for new games by mail ("regras: omnibus"); folded, spaces as
#: ``_``. The engine's own names (RULES.md §3, §6) are read as they are.
OPTION_ALIASES: Final = {
    "regras": "rules", "reguli": "rules", "preset": "rules", "alvo": "target", "meta": "target",
    "pontos": "target", "tinta": "target", "puncte": "target", "robos": "bots", "robots": "bots",
    "boti": "bots", "roboti": "bots", "computers": "bots", "jogadores": "players", "jucatori": "players",
    "with": "players", "com": "players", "cu": "players",
    "cartas_removidas": "removed_cards", "cartas_retiradas": "removed_cards", "carti_scoase": "removed_cards",
    "carti_eliminate": "removed_cards", "ciclo_de_passe": "pass_cycle", "passes": "pass_cycle",
    "ciclu_de_pasare": "pass_cycle", "pasari": "pass_cycle", "cartas_a_passar": "pass_count",
    "carti_de_pasat": "pass_count", "lua": "moon", "luna": "moon", "sol": "sun", "soare": "sun",
    "penalidades_extra": "extra_penalties", "penalizari_extra": "extra_penalties",
    "maos": "end_after_hands", "maini": "end_after_hands", "parceria": "partnership",
    "parcerias": "partnership", "duplas": "partnership", "parteneriat": "partnership", "echipe": "partnership",
    "passar_ao_parceiro": "pass_to_partner", "pasare_la_partener": "pass_to_partner",
    "lua_do_parceiro": "partner_moon", "luna_partenerului": "partner_moon", "monte": "kitty",
    "talon": "kitty", "troca_do_monte": "kitty_exchange", "schimb_cu_talonul": "kitty_exchange",
    "baralhos": "decks", "pachete": "decks", "pachete_de_carti": "decks",
}

#: Option values in other languages (folded), as the engine writes them (RULES.md §3, §6):
#: ``moon: nova``, ``pass_cycle: esquerda direita``, ``partnership: echipa``; and the computer
#: players' strengths (``bots: 2 fortes``), also as :mod:`pbem.services.bot_names` shows them
#: (easy, medium, strong). Booleans are :data:`OPTION_YES` and :data:`OPTION_NO`.
OPTION_WORDS: Final = {
    "esquerda": "left", "direita": "right", "frente": "across", "manter": "hold",
    "ficar": "hold", "stanga": "left", "dreapta": "right", "vizavi": "across", "opus": "across",
    "pastrare": "hold", "pastreaza": "hold", "espalhar": "scatter", "imprastiat": "scatter",
    "velha": "old", "antiga": "old", "nova": "new", "escolha": "choice", "seguranca": "safety",
    "nenhuma": "none", "nenhum": "none", "veche": "old", "noua": "new", "alegere": "choice",
    "siguranta": "safety", "niciuna": "none", "niciunul": "none", "equipa": "team", "equipe": "team",
    "echipa": "team", "individuais": "individual", "individuala": "individual",
    "poupado": "spared", "crutat": "spared", "cobrado": "charged", "taxat": "charged",
    "penalidade": "penalty", "penalizare": "penalty",
    # the computer players' strengths (pbem.bots.BOTS)
    "easy": "random", "facil": "random", "aleatorio": "random", "usor": "random", "aleator": "random",
    "medium": "heuristic", "medio": "heuristic", "mediu": "heuristic",
    "hard": "strong", "forte": "strong", "fortes": "strong", "dificil": "strong", "puternic": "strong",
    "puternici": "strong", "greu": "strong",
}
OPTION_YES: Final = frozenset({"yes", "true", "on", "1", "sim", "verdadeiro", "ligado", "da", "adevarat",
                               "pornit"})
OPTION_NO: Final = frozenset({"no", "false", "off", "0", "nao", "falso", "desligado", "nu", "fals", "oprit"})

#: The largest ``bots:`` count read: two digits (the engine's tables are far smaller; the service
#: checks the count against the rules).
MAX_BOTS: Final = 99

# -- parsing -----------------------------------------------------------------------------------
_WORD: Final = re.compile(r"[^\W_]+|\?")
#: ``name: value`` (or ``name = value``): a name of a few words, or one word as long as the
#: engine's longest (``can_lead_hearts_instead_of_qs``).
_OPTION_LINE: Final = re.compile(r"^\s*([^\W\d](?:\w{25,39}|[\w -]{0,24}?))\s*[:=]\s*(\S.*?)\s*$")
#: ``from <date> until <date>`` (``de 20 de dezembro até 3 de janeiro``, ``de la 20 decembrie până
#: la 3 ianuarie``): a vacation planned ahead. The start is the shortest text before an "until" word.
_FROM_UNTIL: Final = re.compile(
    r"^(?:from|starting|a partir de|desde|de la|din|de)\s+(?P<starts>.+?)[\s,]+"
    r"(?:until|till|to|through|ate|até|pana la|până la|pina la)\s+(?P<until>.+)$",
    re.IGNORECASE,
)
_UNTIL: Final = re.compile(r"^(?:until|till|to|ate|até|pana (?:la|pe)|până (?:la|pe)|pina (?:la|pe))\b[\s:]*",
                           re.IGNORECASE)


def _phrase_table() -> dict[tuple[str, ...], str]:
    table: dict[tuple[str, ...], str] = {}
    for command, by_language in COMMAND_WORDS.items():
        for phrases in by_language.values():
            for phrase in phrases:
                words = tuple(_WORD.findall(fold(phrase)))
                if table.setdefault(words, command) != command:
                    raise ValueError(f"{phrase!r} names two commands")
    return table


_PHRASES: Final = _phrase_table()
_EXPECTED_PHRASES: Final = {
    expected: {tuple(_WORD.findall(fold(p))): cmd for cmd, phrases in table.items() for p in phrases}
    for expected, table in EXPECTED_WORDS.items()
}
_MOON_PHRASES: Final = {
    tuple(_WORD.findall(fold(p))): cmd for cmd, phrases in MOON_PHRASES.items() for p in phrases
}
_LONGEST: Final = max(len(p) for p in (*_PHRASES, *_MOON_PHRASES))


@dataclass(frozen=True, slots=True)
class _Line:
    index: int
    text: str
    command: str | None = None  # a command name, or moon_old / moon_new
    argument: str = ""


def parse_command(
    reply_text: str,
    language_hint: str | None = None,
    *,
    expected: str | None = None,
    pass_count: int = 3,
    suggest_from: Collection[str] | None = None,
) -> Command:
    """What the new text of a reply asks for (see the module docstring).

    ``language_hint`` (the player's language, if known) changes nothing in what is read: every
    language is read whatever the hint, since players mix languages. It only chooses the card
    words a typo is matched against first (:func:`suggest_card`). ``expected`` is ``"play"``, ``"pass"``, ``"moon"``, ``"invitation"``, ``"new_game"``
    or None; ``pass_count`` the number of cards a pass takes; ``suggest_from`` the cards a typo may be
    read as (the decision's ``X-Hearts-Legal``: to play, the legal cards; else the hand), any card
    when None.
    """
    language = language_hint  # read in every language; the hint only ranks typo suggestions
    lines = [line.strip() for line in _read_prefix(reply_text).replace("\r", "").split("\n")]
    lines = [line for line in lines if line][:MAX_COMMAND_LINES]
    if not lines:
        return Unreadable("EMPTY")
    if expected == "new_game":
        return _new_game("\n".join(lines))
    if expected == "call":
        for line in lines[:SUGGEST_LINES]:
            call = read_call(line, pass_count)
            if call is not None:
                return CallPass(call)
    if expected == "invitation":
        answer = _invitation_answer(lines[0])
        others = {type(_invitation_answer(line)) for line in lines[1:]} - {type(None)}
        if answer is not None and others <= {type(answer)}:
            return answer  # a contradicting later line goes to the usual reading: ambiguous
    read = [_read_line(i, line, expected) for i, line in enumerate(lines)]
    talk = [line.argument for line in read if line.command == "say"]
    commands = [line for line in read if line.command and line.command != "say"]
    card_lines = [line for line in read if not line.command]
    card_text = "\n".join(line.text for line in card_lines)
    found = find_cards(card_text)
    cards = list(dict.fromkeys(card for card, _ in found))
    named = _named_again(found, card_text)
    first_card_line = card_lines[card_text.count("\n", 0, found[0][1][0])].index if found else None

    moon = [l for l in commands if l.command in ("moon_old", "moon_new")]
    if moon:
        choices = {l.command for l in moon}
        if len(choices) > 1:
            return Ambiguous("BOTH_MOON_CHOICES")
        commands = [l for l in commands if l not in moon]
        if not commands:
            return MoonChoice("old" if moon[0].command == "moon_old" else "new")

    names = list(dict.fromkeys(l.command for l in commands if l.command))
    if names and (cards or len(names) > 1):
        if IRREVERSIBLE & set(names):
            details = {"commands": " ".join(names)}
            if cards:
                details["cards"] = " ".join(cards)
            return Ambiguous("CONFLICTING_COMMANDS", MappingProxyType(details))
        if cards and first_card_line is not None and first_card_line < commands[0].index:
            return _card_command(cards, expected, pass_count, named)
    if names:
        return _build(commands[0], "\n".join(lines), cards)
    if cards:
        return _card_command(cards, expected, pass_count, named)
    if talk:
        return Say("\n".join(talk))
    if expected not in ("moon", "invitation", "new_game"):
        guess = suggest_card(lines, language, suggest_from)
        if guess is not None:
            return Unreadable("DID_YOU_MEAN", MappingProxyType({"word": guess[0], "suggestion": guess[1]}))
    if len(lines) == 1 and len(lines[0].split()) <= 2 and len(lines[0]) <= 30:
        return Unreadable("UNKNOWN_WORD", MappingProxyType({"word": lines[0]}))
    return Unreadable("NO_COMMAND", MappingProxyType({"expected": expected} if expected else {}))


#: What :func:`suggest_card` reads: the first lines, each a short phrase.
SUGGEST_LINES: Final = 3
SUGGEST_WORDS: Final = 6
SUGGEST_CHARS: Final = 60
#: How close a word must be to a card word (``difflib`` ratio): "jak" is 0.86 of "jack".
SUGGEST_CUTOFF: Final = 0.75


def _card_words(language: str | None) -> tuple[str, ...]:
    """The words of full card names (ranks, suits, the link word) in ``language``, or in every
    language when it is unknown (folded, single words: "inima rosie" gives "inima" and "rosie")."""
    languages = [language] if language in RANK_NAMES else list(RANK_NAMES)
    words: dict[str, None] = {}
    for lang in languages:
        for table in (RANK_NAMES[lang], SUIT_NAMES[lang]):
            for name in table:
                words.update(dict.fromkeys(name.split()))
    words.update(dict.fromkeys(NAME_LINKS))
    return tuple(words)


_ALL_CARD_WORDS: Final = frozenset(_card_words(None))


def suggest_card(lines: list[str], language: str | None = None,
                 among: Collection[str] | None = None) -> tuple[str, str] | None:
    """A card name written with a typo ("jak of hearts", "dama de espdas"): the line as written
    and the one card it names once each unknown word is replaced by the closest card word of the
    player's ``language`` (``difflib.get_close_matches``; every language when that finds none).
    None when no short line of the first :data:`SUGGEST_LINES` reads so as one card, or when that
    card is not ``among`` the cards the reply may name (a card not held is no help: README,
    "Playing by mail")."""
    for line in lines[:SUGGEST_LINES]:
        if len(line) > SUGGEST_CHARS:
            continue
        words = _WORD.findall(fold(line))
        if not 2 <= len(words) <= SUGGEST_WORDS:
            continue
        for vocabulary in dict.fromkeys((_card_words(language), _card_words(None))):
            fixed = [_closest(w, vocabulary) for w in words]
            if fixed == words:
                continue
            cards = list(dict.fromkeys(card for card, _ in find_cards(" ".join(fixed))))
            if len(cards) == 1 and (among is None or cards[0] in among):
                return line, cards[0]
    return None


def _closest(word: str, vocabulary: tuple[str, ...]) -> str:
    if word in _ALL_CARD_WORDS or word in CARD_LINE_WORDS or word in FILLER_WORDS or not word.isalpha():
        return word
    found = get_close_matches(word, vocabulary, n=1, cutoff=SUGGEST_CUTOFF)
    return found[0] if found else word


#: How people answer an invitation in a sentence ("no, thanks - busy week", "sure, count me in"):
#: the first words of the reply's first line, or one of these phrases anywhere in it (folded).
INVITATION_DECLINE_STARTS: Final = frozenset({
    "no", "nope", "nah", "sorry", "unfortunately", "regretfully", "decline", "pass",
    "nao", "infelizmente", "desculpa", "desculpe", "lamento",
    "nu", "regret", "scuze",
})
INVITATION_DECLINE_PHRASES: Final = (
    ("can", "t"), ("cannot",), ("can", "not"), ("not", "this", "time"), ("maybe", "later"), ("not", "now"),
    ("no", "thanks"), ("nao", "posso"), ("nao", "da"), ("fica", "para", "outra"), ("nu", "pot"),
    ("din", "pacate"), ("imi", "pare", "rau"), ("nu", "multumesc"),
)
INVITATION_ACCEPT_STARTS: Final = frozenset({
    "yes", "yeah", "yep", "sure", "ok", "okay", "gladly", "happy", "count", "accept", "join", "absolutely",
    "sim", "claro", "aceito", "conta", "bora", "com", "da", "desigur", "accept", "sigur", "bineinteles", "particip",
})


def read_call(line: str, pass_count: int) -> tuple[tuple[str, int], ...] | None:
    """A dealer's call written on one line (``2 left 1 right``, ``3 across``, ``left``, ``mix``;
    ``2 esquerda 1 direita``, ``3 în față``, ``amestec``): ``(direction, count)`` pairs in the order
    written, a direction without a number taking the whole ``pass_count`` (``mix`` always does).
    None when the line holds anything else, so that commands and cards are read as usual."""
    words = _WORD.findall(fold(line))
    if not words or len(words) > 16:
        return None
    pairs: list[tuple[str, int]] = []
    count: int | None = None
    for word in words:
        if word.isdigit() and len(word) <= 2:
            count = int(word)
        elif word in CALL_NUMBER_WORDS and count is None:
            count = CALL_NUMBER_WORDS[word]
        elif word in CALL_DIRECTION_WORDS:
            direction = CALL_DIRECTION_WORDS[word]
            pairs.append((direction, pass_count if direction == "mix" or count is None else count))
            count = None
        elif word not in CALL_FILLERS:
            return None
    if not pairs or count is not None:
        return None
    return tuple(pairs)


def _invitation_answer(first_line: str) -> Command | None:
    """A yes or a no to an invitation written as a sentence; None when the line is neither
    (then the usual reading applies, and what is still unclear is asked back, never guessed)."""
    words = _WORD.findall(fold(first_line[:MAX_ANSWER_CHARS]))
    if not words:
        return None
    if words[0] in INVITATION_DECLINE_STARTS or any(_contains(words, p) for p in INVITATION_DECLINE_PHRASES):
        return Decline()
    if words[0] in INVITATION_ACCEPT_STARTS:
        return Accept()
    return None


def _read_prefix(text: str) -> str:
    """The first :data:`MAX_COMMAND_CHARS` of ``text``, cut after a line end when there is one."""
    if len(text) <= MAX_COMMAND_CHARS:
        return text
    end = text.rfind("\n", 0, MAX_COMMAND_CHARS)
    return text[: end if end > 0 else MAX_COMMAND_CHARS]


def table_talk(reply_text: str) -> str | None:
    """The text of the reply's ``say …`` lines (joined by newlines), or None when there are none."""
    texts = [line.strip() for line in _read_prefix(reply_text).split("\n")]
    lines = [_read_line(0, text, None) for text in [t for t in texts if t][:MAX_COMMAND_LINES]]
    talk = [line.argument for line in lines if line.command == "say" and line.argument]
    return "\n".join(talk) if talk else None


def _read_line(index: int, text: str, expected: str | None) -> _Line:
    folded = fold(text)
    words = _WORD.findall(folded)
    start = 0
    fillers_end = min(len(words), MAX_LEADING_FILLERS)
    while start < fillers_end and words[start] in FILLER_WORDS and not _starts_phrase(words, start, expected):
        start += 1
    for size in range(min(_LONGEST, len(words) - start), 0, -1):
        phrase = tuple(words[start : start + size])
        command = (
            _EXPECTED_PHRASES.get(expected, {}).get(phrase) if expected else None
        ) or _MOON_PHRASES.get(phrase) or _PHRASES.get(phrase)
        if command is None:
            continue
        if command in _TAKES_TEXT:
            if start:
                continue  # "please say…" is not the say command; keep it simple and strict
            return _Line(index, text, command, _argument(text, folded, phrase))
        if all(w in FILLER_WORDS for w in words[start + size :]):
            return _Line(index, text, command)
    return _Line(index, text)


def _starts_phrase(words: list[str], start: int, expected: str | None) -> bool:
    """Whether a filler word here also begins a command phrase ("give up" vs the filler "me")."""
    for size in range(min(_LONGEST, len(words) - start), 0, -1):
        phrase = tuple(words[start : start + size])
        if phrase in _PHRASES or phrase in _MOON_PHRASES or (
            expected and phrase in _EXPECTED_PHRASES.get(expected, {})
        ):
            return True
    return False


def _argument(text: str, folded: str, phrase: tuple[str, ...]) -> str:
    """The original text after the command phrase on its line, without a separating colon."""
    pattern = r"^\W*" + r"\W+".join(re.escape(w) for w in phrase) + r"(?![^\W_])[\s:,.\-–]*"
    m = re.match(pattern, folded)
    return text[m.end() :].strip() if m else ""


def _build(line: _Line, whole_text: str, cards: list[str] | None = None) -> Command:
    """The command of ``line``; ``cards``: those named on the reply's card lines (for a ``charge``
    line that names nothing itself, its cards written on the next lines)."""
    command = line.command
    if command == "vacation":
        planned = _FROM_UNTIL.match(line.argument.strip())
        if planned:
            return Vacation(planned.group("until").strip(), planned.group("starts").strip())
        return Vacation(_UNTIL.sub("", line.argument).strip())
    if command == "queue":
        cards = tuple(m.card for m in find_mentions(line.argument))
        words = set(_WORD.findall(fold(line.argument)))
        return Queue(cards, clear=not cards and bool(words & CLEAR_WORDS))
    if command == "notify":
        return _notify(line.argument)
    if command == "discard":
        return Discard(tuple(dict.fromkeys(m.card for m in find_mentions(line.argument))))
    if command == "no_pass":
        return NoPass()
    if command == "charge_none":
        return Charge(())
    if command == "charge":
        return _charge(line.argument, cards or [])
    if command == "autopilot_off":
        return Autopilot(on=False)
    if command in ("forced_on", "forced_off"):
        return ForcedCards(on=command == "forced_on")
    if command == "language":
        words = _WORD.findall(fold(line.argument))
        return Language(next((LANGUAGE_NAMES[w] for w in words if w in LANGUAGE_NAMES), None))
    if command == "new_game":
        return _new_game(whole_text)
    if command == "extend":
        return Extend(line.argument)
    if command == "timezone":
        return TimeZone(line.argument)
    if command == "replace":
        return Replace(line.argument)
    if command == "resign_confirm":
        return Resign(confirmed=True)
    simple: dict[str, type] = {
        "help": Help, "status": Status, "games": Games, "rules": Rules, "resign": Resign,
        "accept": Accept, "decline": Decline, "history": History, "autopilot": Autopilot,
        "pause": Pause, "resume": Resume, "abort": Abort,
    }
    return simple[command]()


def _charge(argument: str, cards: list[str]) -> Command:
    """``charge QS TC`` / ``charge none``: the cards of the line, else "none", else the cards of the
    reply's card lines (``charge`` on a line of its own); neither is no charge at all."""
    named = tuple(dict.fromkeys(m.card for m in find_mentions(argument)))
    none = bool(set(_WORD.findall(fold(argument))) & CHARGE_NONE_WORDS)
    if named and none:
        return Ambiguous("CHARGE_NONE_AND_CARDS", MappingProxyType({"cards": " ".join(named)}))
    if named:
        return Charge(named)
    if none:
        return Charge(())
    if cards and not _WORD.findall(fold(argument)):
        return Charge(tuple(cards))
    return Unreadable("NO_COMMAND", MappingProxyType({"expected": "charge"}))


def _contains(words: list[str], phrase: tuple[str, ...]) -> bool:
    """Whether ``phrase`` occurs in ``words`` (only where its first word is, found at C speed)."""
    size, first, k = len(phrase), phrase[0], -1
    while True:
        try:
            k = words.index(first, k + 1)
        except ValueError:
            return False
        if tuple(words[k : k + size]) == phrase:
            return True


_NOTIFY_PHRASES: Final = sorted(
    ((tuple(_WORD.findall(fold(p))), level) for level, phrases in NOTIFY_LEVELS.items() for p in phrases),
    key=lambda item: -len(item[0]),
)
_EVERYWHERE_PHRASES: Final = tuple(tuple(_WORD.findall(fold(p))) for p in EVERYWHERE_WORDS)


def _notify(argument: str) -> Notify:
    words = _WORD.findall(fold(argument))
    everywhere = False
    for phrase in _EVERYWHERE_PHRASES:
        for k in range(len(words) - len(phrase) + 1):
            if tuple(words[k : k + len(phrase)]) == phrase:
                words = words[:k] + words[k + len(phrase) :]  # "every game" is no level
                everywhere = True
                break
    level = next((level for phrase, level in _NOTIFY_PHRASES if _contains(words, phrase)), None)
    return Notify(level, everywhere)


def _named_again(found: list[tuple[str, tuple[int, int]]], text: str) -> list[str]:
    """The cards of ``found`` in order, a card named again in the same words kept each time (``QS QS
    2C``, ``Q♠ Q♠``: with two decks a pass may name a card held twice twice, RULES.md §6.6); a card
    named again otherwise (``QS, the queen of spades``) only once."""
    seen: dict[str, set[str]] = {}
    out: list[str] = []
    for card, (start, end) in found:
        words = " ".join(fold(text[start:end]).split())
        if card not in seen:
            seen[card] = {words}
            out.append(card)
        elif words in seen[card]:
            out.append(card)
    return out


def _card_command(cards: list[str], expected: str | None, pass_count: int,
                  named: list[str] | None = None) -> Command:
    """``cards``: each card named once; ``named``: with the repeats a pass may mean (`_named_again`)."""
    if expected == "pass" and named is not None and len(cards) != pass_count and len(named) == pass_count:
        return Pass(tuple(named))  # a card named twice: both copies (the engine refuses a card held once)
    joined = " ".join(cards)
    if expected == "discard":  # the engine checks the count (WRONG_DISCARD_COUNT, with the hand)
        return Discard(tuple(cards))
    if expected == "charge":  # RULES.md §6.4: the engine checks the cards (chargeable, held, charge_limit)
        return Charge(tuple(cards))
    if expected in ("moon", "invitation"):
        return Unreadable("NO_COMMAND", MappingProxyType({"expected": expected}))
    if expected == "pass" or (expected is None and len(cards) == pass_count and pass_count > 1):
        if len(cards) == pass_count:
            return Pass(tuple(cards))
        if expected == "pass":
            return Unreadable("WRONG_CARD_COUNT", MappingProxyType(
                {"expected": str(pass_count), "found": str(len(cards)), "cards": joined}
            ))
    if len(cards) == 1:
        return Play(cards[0])
    return Ambiguous("TWO_CARDS", MappingProxyType({"cards": joined}))


def _new_game(text: str) -> Command:
    """Players are every address in the text; options every ``key: value`` line without one. A game
    against computer players only (``bots: 3``) names nobody but the sender."""
    players: list[str] = []
    options: dict[str, str] = {}
    for line in text.split("\n"):
        found = [a.lower().rstrip(".") for a in find_addresses(line)]
        players.extend(found)
        if found:
            continue
        m = _OPTION_LINE.match(line)
        if m:
            key = re.sub(r"[\s-]+", "_", fold(m.group(1)).strip())
            options[OPTION_ALIASES.get(key, key)] = m.group(2)
    players = list(dict.fromkeys(players))
    # A "players:" line with addresses is read above (the other players); one without is the
    # table's size (``players: 5``), an option like the others.
    if "bots" in options:
        groups = bot_groups(options["bots"])
        if groups is None:
            return Unreadable("BAD_OPTION", MappingProxyType({"option": "bots", "value": options["bots"][:40]}))
        options["bots"] = ", ".join(f"{count} {words}".strip() for count, words in groups)
    if not players and "bots" not in options:
        return Unreadable("NO_PLAYERS")
    return NewGame(tuple(players), MappingProxyType(options))


#: Between groups of a ``bots:`` value: ``2 heuristic, 1 random``, ``2 fortes e 1 fácil``.
_BOT_GROUPS: Final = re.compile(r"\s*(?:[,;+&]|\band\b|\be\b|\bsi\b|\bși\b)\s*", re.IGNORECASE)
_BOT_GROUP: Final = re.compile(r"(\d{1,2})\.?(?:\s+(\S.{0,39}?))?[.!]?")


def bot_groups(value: str) -> list[tuple[int, str]] | None:
    """``bots:`` as (count, strength as written) groups, each count in ASCII digits (at most
    :data:`MAX_BOTS`); None when a group has no count (the services read the strengths)."""
    groups = []
    for part in _BOT_GROUPS.split(value.strip()):
        if not part:
            continue
        m = _BOT_GROUP.fullmatch(part)
        if m is None or not m.group(1).isascii():
            return None
        groups.append((int(m.group(1)), " ".join((m.group(2) or "").split())))
    return groups or None

