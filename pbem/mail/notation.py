"""Card notation as players write it: ``QS``, ``q♠``, ``10h``, ``queen of spades``, ``dama de espadas``…

Everything here turns what a person typed into the canonical card names used everywhere else
(rank ``23456789TJQKA`` then suit ``CDHS``: ``QS``, ``TH``, ``2C``), and back into a few human
styles (used by tests and available to the mail composer).

Two kinds of mention are found in free text:

* **strong** mentions count wherever they appear: full names (``ace of spades``, ``ás de copas``,
  ``damă de pică``), a rank with a suit symbol (``Q♠``, ``♠Q``, ``10 ♥``), the Unicode playing-card
  characters (🂭), and compact rank+suit-letter tokens (``QS``, ``qs``, ``TH``, ``10d``);
* **weak** mentions are compact tokens that are also ordinary words or times: ``as`` (English word,
  Portuguese article), ``ah``, ``ad``, ``ac``, and ``2h``…``10h``, ``2d``…``10d`` (hours, days);
  and every rank and suit letter written apart, ``q s``, ``10 h``, ``A S`` (initials, "10 h" for
  ten hours), in any case.
  A weak mention counts only on a *card line*: a line that holds nothing but card mentions,
  punctuation, list connectors (``and``, ``e``, ``și``…) and an optional leading verb (``play``,
  ``jogo``, ``pass``…; :data:`CARD_LINE_WORDS`). So the line ``as`` is the ace of spades, the line
  ``pass: AS KS QS`` is three cards, but ``as you wish, QS`` is only the queen and ``às 10h`` is
  nothing. A weak token typed in capitals (``AS``, ``10H``) on a line that also has lower-case
  letters is taken as deliberate and counts as strong; one in title case (``As``, ``Ah``: how a
  sentence starts) counts only on a line of nothing but cards (``As``, ``As, Ks, Qs``).

Compact letter forms use the English suit letters only (``C D H S``); Portuguese and Romanian suit
initials would collide with them (``C`` is *copas*, hearts, in Portuguese) and are not read.
Accents are optional in full names (``as de inima rosie``, ``dama de pica``).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "CDHS"
#: Every canonical card name, clubs first, two to ace within a suit.
ALL_CARDS: Final[tuple[str, ...]] = tuple(r + s for s in SUITS for r in RANKS)

SUIT_SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
#: Symbols accepted on input: black and white suits, and the heavy heart emoji.
_SYMBOL_SUIT: Final = {
    "♣": "C", "♧": "C", "♦": "D", "♢": "D", "♥": "H", "♡": "H", "❤": "H", "♠": "S", "♤": "S",
}

# Full names. Keys are folded (lower case, no accents), values a rank letter or a suit letter.
# One table per language so a translator can see what is read; all are active at once, since a
# player's client language says little about how they name cards.
RANK_NAMES: Final[dict[str, dict[str, str]]] = {
    "en": {
        "ace": "A", "king": "K", "queen": "Q", "jack": "J", "knave": "J", "ten": "T", "nine": "9",
        "eight": "8", "seven": "7", "six": "6", "five": "5", "four": "4", "three": "3", "trey": "3",
        "two": "2", "deuce": "2",
    },
    "pt": {
        "as": "A", "rei": "K", "dama": "Q", "rainha": "Q", "valete": "J", "dez": "T", "nove": "9",
        "oito": "8", "sete": "7", "seis": "6", "cinco": "5", "quatro": "4", "tres": "3", "dois": "2",
        "duque": "2",
    },
    "ro": {
        "as": "A", "asul": "A", "rege": "K", "regele": "K", "popa": "K", "dama": "Q", "regina": "Q",
        "valet": "J", "valetul": "J", "zece": "T", "zecele": "T", "noua": "9", "noiarul": "9",
        "opt": "8", "optul": "8", "sapte": "7", "sase": "6", "cinci": "5", "cinciul": "5",
        "patru": "4", "patrul": "4", "trei": "3", "treiul": "3", "doi": "2", "doiul": "2",
    },
}
SUIT_NAMES: Final[dict[str, dict[str, str]]] = {
    "en": {
        "clubs": "C", "club": "C", "diamonds": "D", "diamond": "D", "hearts": "H", "heart": "H",
        "spades": "S", "spade": "S",
    },
    "pt": {
        "paus": "C", "ouros": "D", "ouro": "D", "copas": "H", "copa": "H", "espadas": "S",
        "espada": "S",
    },
    "ro": {
        "trefla": "C", "trefle": "C", "caro": "D", "romb": "D", "romburi": "D",
        "inima rosie": "H", "inimi rosii": "H", "inima": "H", "inimi": "H", "cupa": "H", "cupe": "H",
        "inima neagra": "S", "inimi negre": "S", "pica": "S",
    },
}
#: The word between rank and suit in a full name ("queen of spades", "dama de espadas").
NAME_LINKS: Final = ("of", "de")
#: Articles allowed before a single card given to :func:`parse_card` ("the 2 of clubs").
ARTICLES: Final = frozenset({"the", "a", "an", "o", "um", "uma", "un", "una"})

#: Words that may share a *card line* with weak mentions: list connectors and the verbs a player
#: puts before their cards. Folded forms (no accents, lower case).
CARD_LINE_WORDS: Final = frozenset({
    # connectors
    "and", "e", "si", "y", "&", "+",
    # English verbs and nouns
    "play", "playing", "plays", "pass", "passing", "card", "cards", "lead", "i", "ill", "my",
    "please", "pls", "ok", "okay",
    # Portuguese
    "jogo", "jogar", "joga", "jogue", "passo", "passar", "passa", "carta", "cartas", "minha",
    "minhas", "por", "favor",
    # Romanian
    "joc", "jucam", "joaca", "dau", "pun", "pas", "pasez", "carte", "carti", "cartea", "cartile",
    "te", "rog",
})

_RANK_TOKEN = r"(?:10|[2-9tjqka])"


@dataclass(frozen=True, slots=True)
class Mention:
    """One card found in text: the canonical card, its span in the text, and whether it is weak."""

    card: str
    start: int
    end: int
    weak: bool = False


def fold(text: str) -> str:
    """Lower-case ``text`` and strip accents, keeping its length, so spans found in the folded
    text are spans in the original (``Ás de Copas`` → ``as de copas``, ``pică`` → ``pica``)."""
    if text.isascii():
        return text.lower()
    return "".join(_fold_char(ch) for ch in text)


_FOLD_CACHE: dict[str, str] = {}


def _fold_char(ch: str) -> str:
    folded = _FOLD_CACHE.get(ch)
    if folded is None:
        base = unicodedata.normalize("NFD", ch)[0] if ord(ch) >= 0x80 else ch
        low = base.lower()
        folded = low if len(low) == 1 else base
        if len(_FOLD_CACHE) < 4096:
            _FOLD_CACHE[ch] = folded
    return folded


def _alternation(words: set[str]) -> str:
    """A regex alternation of words, longest first, spaces matching any run of spaces."""
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=lambda w: (-len(w), w)))


def _merged(tables: dict[str, dict[str, str]]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for table in tables.values():
        for word, letter in table.items():
            if merged.setdefault(word, letter) != letter:
                raise ValueError(f"word {word!r} names two different things")
    return merged


_RANK_WORD: Final = _merged(RANK_NAMES) | {str(n): RANKS[n - 2] for n in range(2, 11)} | {
    "a": "A", "k": "K", "q": "Q", "j": "J", "t": "T",
}
_SUIT_WORD: Final = _merged(SUIT_NAMES)

# Full names, matched in folded text.
_NAME_RE: Final = re.compile(
    rf"(?<![\w])(?P<rank>{_alternation(set(_RANK_WORD))})\s+(?:{'|'.join(NAME_LINKS)})\s+"
    rf"(?P<suit>{_alternation(set(_SUIT_WORD))})(?![\w])"
)
_SYMBOLS_CLASS: Final = "".join(_SYMBOL_SUIT)
# Compact forms, matched in the original text (so that "às" is never "as").
_COMPACT_RE: Final = re.compile(
    rf"""(?<![\w])(?P<r1>{_RANK_TOKEN})(?P<s1>[cdhs])(?![\w])                # QS, qs, 10h
        | (?<![\w])(?P<r2>{_RANK_TOKEN})[ ]?(?P<y2>[{_SYMBOLS_CLASS}])[\ufe0e\ufe0f]?  # Q♠, 10 ♥
        | (?P<y3>[{_SYMBOLS_CLASS}])[\ufe0e\ufe0f]?[ ]?(?P<r3>{_RANK_TOKEN})(?![\w])  # ♠Q
        | (?P<u>[\U0001F0A1-\U0001F0DE])                                        # 🂭
        | (?<![\w])(?P<r4>{_RANK_TOKEN})[ ](?P<s4>[cdhs])(?![\w])             # q s, 10 h (weak)
        """,
    re.IGNORECASE | re.VERBOSE,
)
#: Compact tokens that are also ordinary words or times; see the module docstring.
WEAK_TOKENS: Final = frozenset(
    {"as", "ah", "ad", "ac"} | {f"{n}h" for n in range(2, 11)} | {f"{n}d" for n in range(2, 11)}
)
# Unicode playing cards: U+1F0A1 ace of spades … U+1F0DE king of clubs; rows by suit, 0xC (knight)
# and 0xF are not cards of a French deck.
_UNICODE_SUIT_ROWS: Final = {0xA: "S", 0xB: "H", 0xC: "D", 0xD: "C"}
_UNICODE_RANKS: Final = {1: "A", **{n: RANKS[n - 2] for n in range(2, 11)}, 0xB: "J", 0xD: "Q", 0xE: "K"}
_LINE_WORD_RE: Final = re.compile(r"[^\W_]+|[&+]")


def _unicode_card(ch: str) -> str | None:
    code = ord(ch)
    suit = _UNICODE_SUIT_ROWS.get((code >> 4) & 0xF)
    rank = _UNICODE_RANKS.get(code & 0xF)
    return rank + suit if suit and rank else None


def _canonical_rank(token: str) -> str:
    return "T" if token == "10" else token.upper()


def find_mentions(text: str) -> list[Mention]:
    """Every card mention in ``text``, in order, weak ones included and marked (no line rule)."""
    mentions: list[Mention] = []
    folded = fold(text)
    for m in _NAME_RE.finditer(folded):
        card = _RANK_WORD[m["rank"]] + _SUIT_WORD[re.sub(r"\s+", " ", m["suit"])]
        mentions.append(Mention(card, m.start(), m.end()))
    taken_starts = [m.start for m in mentions]  # full names: in order, never overlapping
    for m in _COMPACT_RE.finditer(text):
        start, end = m.span()
        i = bisect_left(taken_starts, end)  # the last name starting before this token ends…
        if i and mentions[i - 1].end > start:  # …overlaps it: "as" inside "as de copas"
            continue
        weak = False
        if m["u"]:
            card = _unicode_card(m["u"])
            if card is None:
                continue
        elif m["r1"]:
            card = _canonical_rank(m["r1"]) + m["s1"].upper()
            token = m.group(0)
            weak = token.lower() in WEAK_TOKENS and not _deliberate_capitals(token, text, start)
        elif m["r4"]:
            card = _canonical_rank(m["r4"]) + m["s4"].upper()
            weak = True  # "q s", "10 h": only on a card line, whatever the case
        elif m["r2"]:
            card = _canonical_rank(m["r2"]) + _SYMBOL_SUIT[m["y2"]]
        else:
            card = _canonical_rank(m["r3"]) + _SYMBOL_SUIT[m["y3"]]
        mentions.append(Mention(card, start, end, weak))
    mentions.sort(key=lambda m: m.start)
    return mentions


def _deliberate_capitals(token: str, text: str, start: int) -> bool:
    """A weak token in capitals (``AS``, ``10H``) on a line that is not all capitals."""
    if token != token.upper():
        return False
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    return any(c.islower() for c in line)


def find_cards(text: str) -> list[tuple[str, tuple[int, int]]]:
    """The cards a player named in free text, as ``(card, (start, end))`` in order of appearance.

    Strong mentions count anywhere; weak ones only on card lines (see the module docstring).
    Repeats are kept: deciding what a repeated or second card means is the command parser's job.
    """
    mentions = find_mentions(text)
    if not mentions:
        return []
    found: list[tuple[str, tuple[int, int]]] = []
    line_words: dict[int, list[str]] = {}
    starts = [m.start for m in mentions]
    for m in mentions:
        if m.weak:
            line_start = text.rfind("\n", 0, m.start) + 1
            words = line_words.get(line_start)
            if words is None:
                words = line_words[line_start] = _other_words(text, line_start, mentions, starts)
            token = text[m.start : m.end]
            if " " not in token and token[0].isupper() and token[1:].islower():
                # "As", "Ah": how a sentence starts; a card only on a line of nothing but cards.
                if words:
                    continue
            elif not all(w in CARD_LINE_WORDS or w.isdigit() for w in words):
                continue
        found.append((m.card, (m.start, m.end)))
    return found


def _other_words(text: str, line_start: int, mentions: list[Mention], starts: list[int]) -> list[str]:
    """The folded words of the line starting at ``line_start`` that are not card mentions."""
    line_end = text.find("\n", line_start)
    if line_end < 0:
        line_end = len(text)
    rest = list(text[line_start:line_end])
    for m in mentions[bisect_left(starts, line_start) : bisect_left(starts, line_end)]:
        rest[m.start - line_start : m.end - line_start] = " " * (m.end - m.start)
    return _LINE_WORD_RE.findall(fold("".join(rest)))


def parse_card(token: str) -> str:
    """The canonical card written as ``token`` in any notation this module reads.

    ``token`` must be one card and nothing else (an article may precede it: ``the 2 of clubs``);
    weak forms count here, since the caller says this is a card. Raises ``ValueError`` otherwise.
    """
    text = token.strip().strip(".,;:!?").strip()
    candidates = [text]
    words = text.split(None, 1)
    if len(words) == 2 and fold(words[0]) in ARTICLES:
        candidates.append(words[1])
    for candidate in candidates:
        mentions = find_mentions(candidate)
        if len(mentions) == 1 and mentions[0].start == 0 and mentions[0].end == len(candidate):
            return mentions[0].card
    raise ValueError(f"not one card: {token!r}")


#: The styles :func:`format_card` writes, each read back by :func:`parse_card`.
STYLES: Final = (
    "canonical", "lower", "digits", "symbol", "symbol_first", "english", "portuguese",
    "portuguese_rainha", "romanian", "romanian_ascii", "unicode",
)
_EN_RANK: Final = {"A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten", "9": "nine",
                   "8": "eight", "7": "seven", "6": "six", "5": "five", "4": "four", "3": "three",
                   "2": "two"}
_EN_SUIT: Final = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
_PT_RANK: Final = {"A": "ás", "K": "rei", "Q": "dama", "J": "valete", "T": "dez", "9": "nove",
                   "8": "oito", "7": "sete", "6": "seis", "5": "cinco", "4": "quatro", "3": "três",
                   "2": "dois"}
_PT_SUIT: Final = {"C": "paus", "D": "ouros", "H": "copas", "S": "espadas"}
_RO_RANK: Final = {"A": "as", "K": "popă", "Q": "damă", "J": "valet", "T": "zece", "9": "nouă",
                   "8": "opt", "7": "șapte", "6": "șase", "5": "cinci", "4": "patru", "3": "trei",
                   "2": "doi"}
_RO_SUIT: Final = {"C": "treflă", "D": "caro", "H": "inimă roșie", "S": "pică"}
_UNICODE_ROW: Final = {suit: row for row, suit in _UNICODE_SUIT_ROWS.items()}
_UNICODE_COL: Final = {rank: col for col, rank in _UNICODE_RANKS.items()}


def format_card(card: str, style: str = "canonical") -> str:
    """Write a canonical card in one of :data:`STYLES` (``QS`` → ``Q♠``, ``queen of spades``…)."""
    if card not in ALL_CARDS:
        raise ValueError(f"not a canonical card: {card!r}")
    rank, suit = card[0], card[1]
    digits = "10" if rank == "T" else rank
    match style:
        case "canonical":
            return card
        case "lower":
            return card.lower()
        case "digits":
            return digits + suit
        case "symbol":
            return digits + SUIT_SYMBOLS[suit]
        case "symbol_first":
            return SUIT_SYMBOLS[suit] + digits
        case "english":
            return f"{_EN_RANK[rank]} of {_EN_SUIT[suit]}"
        case "portuguese":
            return f"{_PT_RANK[rank]} de {_PT_SUIT[suit]}"
        case "portuguese_rainha":
            return f"{'rainha' if rank == 'Q' else _PT_RANK[rank]} de {_PT_SUIT[suit]}"
        case "romanian":
            return f"{_RO_RANK[rank]} de {_RO_SUIT[suit]}"
        case "romanian_ascii":
            return fold(f"{_RO_RANK[rank]} de {_RO_SUIT[suit]}")
        case "unicode":
            return chr(0x1F000 | _UNICODE_ROW[suit] << 4 | _UNICODE_COL[rank])
    raise ValueError(f"unknown style: {style!r}")
