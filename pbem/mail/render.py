"""Rendering a `MailContext` into a subject, a sender name, a text part and an HTML part.

One Jinja environment per (language, format) pair, built lazily and cached for the life of
the renderer: the translations are installed into the environment (no per-render lookup of
the language, no ambient state), and the formatting filters are closures that know whether
they write text or HTML.  The shared sentence macros (``_phrases.jinja``) are therefore
compiled once per format, so the same sentence prints ``Q♠`` in the text part and a red or
black ``<span>`` in the HTML part while translators see it once.

Template layout (``templates/email/``): ``<kind>.txt`` and ``<kind>.html`` per kind of mail,
extending ``_layout.txt`` / ``_layout.html``.  Every template sees the shared macros as globals:
``p`` (``_phrases.jinja``), ``t`` (``_time.jinja``), ``m`` (``_macros.txt`` or
``_macros.html``, by format) and ``pre`` (``_preheader.jinja``, the inbox preview line); an
``{% import .. as p %}`` of its own still works.  The text layout's first line is the Subject
and its second the sender's display name, so subjects are translated like everything else.
"""

from __future__ import annotations

import functools
import gettext
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FunctionType
from typing import Any

from babel import Locale
from babel.dates import format_skeleton, format_time, get_timezone
from babel.lists import format_list
from jinja2 import BytecodeCache, Environment, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket
from jinja2.runtime import Context, Macro
from markupsafe import Markup, escape

from . import cards_display as cd
from .context import MailContext
from .i18n import LANGUAGES, SOURCE_LANGUAGE, load_translations, normalise_language

__all__ = ["TEXT_WIDTH", "MailRenderer", "RenderedMail", "tidy_text", "wrap_text"]

_HTML_BLANK_LINES = re.compile(r"\n\s*\n+")

#: Columns of a text part's lines, the customary width of mail text: prose is wrapped to fit;
#: a link or an address wider than that stands alone on its line, unbroken.
TEXT_WIDTH = 72
#: A list item's marker ("* ", "- ", "12. "): its continuation lines hang after it.
_LIST_MARKER = re.compile(r"(?:[-*•] |\d{1,3}[.)] )")


@dataclass(frozen=True, slots=True)
class RenderedMail:
    """The words of one mail, before MIME."""

    subject: str
    from_name: str
    text: str
    html: str


def tidy_text(body: str, width: int | None = None) -> str:
    r"""A text part as sent: spaces and tabs at the ends of lines dropped, runs of blank lines
    made one, no blank lines at either end, one final line break.  (What
    ``re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", body)).strip("\n") + "\n"`` gives, in a
    fifth of its time: those two regexes were a tenth of a mail's rendering.)

    With ``width``, lines wider than that are wrapped as `wrap_text` does, in the same pass
    (a length check per line when nothing is too long)."""
    lines = body.split("\n")
    last = lines.pop()  # no line break after it: its trailing spaces stay, as with the regex
    kept: list[str] = []
    blank = True  # blank lines at the start are dropped
    for line in lines:
        line = line.rstrip(" \t")
        if line:
            if width is not None and len(line) > width:
                kept.extend(_wrap_line(line, width))
            else:
                kept.append(line)
            blank = False
        elif not blank:
            kept.append(line)
            blank = True
    if width is not None and len(last) > width:
        kept.extend(_wrap_line(last, width))
    else:
        kept.append(last)
    return "\n".join(kept).strip("\n") + "\n"


def wrap_text(body: str, width: int = TEXT_WIDTH) -> str:
    """``body`` with every line wider than ``width`` broken at spaces to fit.

    A wrapped line keeps its indentation, and the lines it continues on hang under its text:
    after a list item's marker (``* ``, ``- ``, ``3. ``), or in an indented two-column row
    (``  word   what it does``) under the second column.  Lines are broken only at plain
    spaces, so a link, a mail address (the signed reply address) or cards joined by no-break
    spaces are never split; a word wider than the line stands alone on its own.  Lines that
    fit, tables and hand rows among them, are left as they are (the ``-- `` signature
    separator too), so wrapping twice changes nothing.
    """
    out: list[str] = []
    for line in body.split("\n"):
        if len(line) > width:
            out.extend(_wrap_line(line, width))
        else:
            out.append(line)
    return "\n".join(out)


def _wrap_line(line: str, width: int) -> list[str]:
    indent = len(line) - len(line.lstrip(" "))
    hang = indent
    marker = _LIST_MARKER.match(line, indent)
    if marker is not None:
        hang = marker.end()
    elif indent:
        gap = line.find("  ", indent)
        if gap != -1:
            column = len(line) - len(line[gap:].lstrip(" "))
            if column <= width // 2:
                hang = column
    words = [word for word in line[hang:].split(" ") if word]
    if len(words) < 2:
        return [line]
    rows: list[list[str]] = [[]]
    room = width - hang
    size = -1
    for word in words:
        if rows[-1] and size + 1 + len(word) > room:
            rows.append([word])
            size = len(word)
        else:
            rows[-1].append(word)
            size += 1 + len(word)
    pad = " " * hang
    return [line[:hang] + " ".join(rows[0])] + [pad + " ".join(row) for row in rows[1:]]


class _MailContext(Context):
    """A template context whose ``call`` goes straight to plain functions and to macros.

    Jinja calls every function, filter-less call and macro through ``Context.call``, which first
    looks for ``pass_context``-style markers on the object and on its ``__call__`` (two failed
    attribute lookups for a plain function): about an eighth of a mail's rendering.  Our
    gettext functions, Jinja's macros and our cached ones carry no marker (checked on each
    call all the same); anything else takes Jinja's path.
    """

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's signature)
        if type(__obj) in _DIRECT_CALLS and not hasattr(__obj, "jinja_pass_arg"):
            if kwargs:
                kwargs.pop("_block_vars", None)
                kwargs.pop("_loop_vars", None)
            return __obj(*args, **kwargs)
        return super().call(__obj, *args, **kwargs)


class _CompiledTemplates(BytecodeCache):
    """The compiled templates, shared by every environment of the process that writes the same
    format (text or HTML): compiling the templates is nearly all the cost of a renderer's first mail
    in a language (about a second), and every environment and renderer compiled them again (one per
    language and format; a renderer per ``Services``, so per test).  The code differs only by the
    format (``autoescape``); the language is the environment's gettext, looked up at render time.
    A bucket holds the source's checksum: an edited template is compiled afresh."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def get_bucket(self, environment: Environment, name: str, filename: str | None, source: str) -> Bucket:
        key = f"{'html' if environment.autoescape else 'text'}:{self.get_cache_key(name, filename)}"
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)  # checks the checksum: another source is compiled again

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


class _MailEnvironment(Environment):
    """A Jinja environment whose templates see its globals through a plain dict.

    Jinja gives each template a ``ChainMap`` over the environment's globals, so that globals
    added later still show.  Ours are all set before the first template is loaded, and the
    ChainMap was the most expensive part of ``{% import %}`` (done several times per mail):
    to reuse the imported module, Jinja checks that the importer's globals are a subset of
    the imported template's, which through a ChainMap costs two lookups per global in Python
    (~15% of a mail's rendering); through a dict the same check runs in C.
    """

    context_class = _MailContext

    def make_globals(self, d: Mapping[str, object] | None) -> dict[str, object]:  # type: ignore[override]
        return {**self.globals, **(d or {})}


def _resolve_templates_dir(templates_dir: str | Path) -> Path:
    """Accept either ``templates/`` (the project's root) or ``templates/email/`` itself."""
    path = Path(templates_dir)
    if (path / "email" / "_layout.txt").is_file():
        return path / "email"
    if (path / "_layout.txt").is_file():
        return path
    raise FileNotFoundError(f"no mail templates (_layout.txt) in {path} or {path / 'email'}")


def _make_filters(locale: Locale, html: bool) -> dict[str, object]:
    """Formatting filters for one language and format; no words of their own."""

    def card(value: str) -> str:
        return cd.card_html(value) if html else cd.card_text(value)

    def join_list(items: Sequence[str], style: str) -> str:
        if not items:
            return ""
        if html:
            return Markup(format_list([str(escape(i)) for i in items], style=style, locale=locale))
        return format_list(list(items), style=style, locale=locale)

    def cards(values: Iterable[str], style: str = "standard") -> str:
        """Cards as a sentence's list, sorted as in a hand: "3♣ and 9♣", "A♠, Q♠ or 5♠"; a card
        named twice (two decks, RULES.md §6.6) once, as "Q♠ ×2"."""
        ordered = cd.counted(cd.sort_cards(values))
        if not ordered:
            return ""
        if html:  # the card spans are our own markup: no escaping needed
            return Markup(format_list([str(cd.card_html(c)) + ("&nbsp;×2" if k > 1 else "") for c, k in ordered],
                                      style=style, locale=locale))
        return format_list([cd.card_text(c) + (cd.TWICE if k > 1 else "") for c, k in ordered], style=style,
                           locale=locale)

    def card_row(values: Iterable[str], sort: bool = True) -> str:
        """Cards as plain symbols separated by spaces, in both formats ("4♥ 7♥"): for one-line
        texts such as the inbox preview, which no client colours.  Sorted as in a hand unless
        ``sort`` is false (a queue keeps its order); a card held twice in a sorted row once, "Q♠ ×2".
        (A filter rather than ``map("card")|join(" ")``, which was most of the preview line's time.)"""
        if not sort:
            return " ".join([cd.card_text(c) for c in values])
        return " ".join([cd.card_text(c) + (cd.TWICE if k > 1 else "") for c, k in cd.counted(cd.sort_cards(values))])

    def ranks(group: Sequence[str]) -> str:
        """One suit's ranks as a hand row shows them (a card held twice: "Q ×2")."""
        if html:
            return Markup(cd.ranks_text(group, "&nbsp;&nbsp;", "&nbsp;×2"))
        return cd.ranks_text(group)

    def names(values: Iterable[str], style: str = "standard") -> str:
        return join_list([str(v) for v in values], style)

    def suit_symbol(suit: str) -> str:
        return cd.suit_html(suit) if html else cd.SUIT_SYMBOLS[suit]

    def suit_colour(suit: str) -> str:
        return cd.RED if cd.is_red(suit) else cd.BLACK

    def rank(value: str) -> str:
        return cd.rank_text(value[0])

    def para(text: str) -> str:
        """A paragraph of the HTML mails (a filter, not a macro: macros cost ~10 µs a call)."""
        return Markup('<p style="margin:0 0 10px 0;">{}</p>').format(text)

    def heading(text: str) -> str:
        return Markup('<p style="margin:16px 0 6px 0;font-weight:bold;color:#333;">{}</p>').format(
            text
        )

    def when(value: datetime, timezone: str = "UTC") -> str:
        """A deadline in the reader's zone and words, its zone as a compact offset: "Fri, May 17,
        2024, 7:30 PM UTC+1" (the locale's own date-time pattern).  The zone's full name ("Western
        European Summer Time") made every deadline sentence long, and repeated it in each."""
        if isinstance(value, datetime):
            # Shown to the minute: the same minute is worded once (deadlines are "now + N
            # hours", so the mails of one move, and of the moves in the same minute, share it).
            value = value.replace(second=0, microsecond=0)
        return _when(value, timezone)

    @functools.lru_cache(maxsize=512)
    def _when(value: datetime, timezone: str) -> str:
        tz = get_timezone(timezone)
        date = format_skeleton("yMMMEd", value, tzinfo=tz, locale=locale)
        time = format_time(value, "short", tzinfo=tz, locale=locale)
        zone = _utc_offset((value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(tz).utcoffset())
        pattern = str(locale.datetime_formats["medium"])
        return f"{pattern.replace('{1}', date).replace('{0}', time)} {zone}"

    def seat_name(seat: int, names: Sequence[str]) -> str:
        """A seat's player name; ``#n`` only if the seat is unknown (a caller's bug)."""
        if isinstance(seat, int) and 0 <= seat < len(names):
            return names[seat]
        return f"#{seat}"

    def oneline(value: str) -> str:
        """Whitespace, line breaks included, folded to single spaces (subjects, names)."""
        return " ".join(value.split())

    def split_lines(value: str) -> list[str]:
        return [line.strip() for line in value.split("\n") if line.strip()]

    return {
        "card": card,
        "cards": cards,
        "card_row": card_row,
        "names": names,
        "suits": cd.group_by_suit,
        "suit_symbol": suit_symbol,
        "suit_colour": suit_colour,
        "rank": rank,
        "sorted_cards": cd.sort_cards,
        "when": when,
        "split_lines": split_lines,
        "ranks": ranks,
        "oneline": oneline,
        "seat_name": seat_name,
        "para": para,
        "heading": heading,
    }


def _utc_offset(offset: timedelta | None) -> str:
    """"UTC", "UTC+1", "UTC-3", "UTC+5:30": the same in every language, exact on any date."""
    minutes = int((offset or timedelta()).total_seconds() // 60)
    if minutes == 0:
        return "UTC"
    sign, minutes = ("+", minutes) if minutes > 0 else ("-", -minutes)
    hours, rest = divmod(minutes, 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def _make_gettext(translations: gettext.NullTranslations, html: bool) -> dict[str, object]:
    """``_``/``gettext``/``ngettext`` bound to one language and format.

    They behave exactly like Jinja's "newstyle" gettext (the string is always %-formatted
    with the keyword arguments; ``ngettext`` supplies ``num``; under autoescape the
    translation is markup and the arguments are escaped), but as plain functions: Jinja's
    own wrappers take the template context and resolve ``gettext`` on every call, three
    calls deep, which was a fifth of a mail's rendering time.
    """
    lookup = translations.gettext
    plural = translations.ngettext

    def gettext_(message: str, /, **variables: object) -> str:
        translated = lookup(message)
        return (Markup(translated) if html else translated) % variables

    def ngettext_(singular: str, plural_: str, num: int, /, **variables: object) -> str:
        variables.setdefault("num", num)
        translated = plural(singular, plural_, num)
        return (Markup(translated) if html else translated) % variables

    return {"_": gettext_, "gettext": gettext_, "ngettext": ngettext_}


#: The shared macros every template sees, by the name it calls them by, in loading order:
#: ``p`` the sentences, ``t`` the times and deadlines, ``m`` the hands, tables and scores, ``pre``
#: the inbox preview line of each kind (the text part's first line; the HTML preheader repeats it).
_MACRO_MODULES: tuple[tuple[str, str], ...] = (
    ("p", "_phrases.jinja"), ("t", "_time.jinja"), ("m", "_macros.{suffix}"), ("pre", "_preheader.jinja"))

#: Macros whose output depends only on their arguments (they are imported without context, so
#: they see nothing but their arguments and the environment's language and format) and that
#: are called with plain values (tuples, strings, numbers, frozen dataclasses).  Their output is
#: kept per environment: a player's hand is the same in the mails of several turns, and every
#: mail closes with the same lines.  Macros whose arguments differ in nearly every call are not
#: kept: ``table``, ``scores`` and ``legal`` are given the reader's own game or seat, and in the
#: benchmark's games they never met the same arguments twice (hashing those arguments cost more
#: than the cache saved).
_PURE_MACROS: dict[str, tuple[str, ...]] = {
    "_macros.txt": ("hand", "your_hand", "plays", "last_trick", "points_table"),
    "_macros.html": ("hand", "your_hand", "plays", "last_trick", "points_table"),
    "_phrases.jinja": ("subject_tag", "fewer_mails"),
}
_MACRO_CACHE_SIZE = 4096


class _CachedMacro:
    """A pure macro with its results kept by arguments (forgotten all at once when full)."""

    __slots__ = ("_macro", "_results")

    def __init__(self, macro: Callable[..., str]) -> None:
        self._macro = macro
        self._results: dict[object, str] = {}

    def __call__(self, *args: object, **kwargs: object) -> str:
        key = (args, tuple(kwargs.items())) if kwargs else args
        try:
            return self._results[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable argument (a list): not kept
            return self._macro(*args, **kwargs)
        result = self._macro(*args, **kwargs)
        if len(self._results) >= _MACRO_CACHE_SIZE:
            self._results.clear()
        self._results[key] = result
        return result


#: What ``_MailContext.call`` calls directly (unless it carries a ``pass_context``-style marker).
_DIRECT_CALLS = frozenset({FunctionType, Macro, _CachedMacro})


class MailRenderer:
    """Renders mails from the templates; build one per process and share it (thread-safe)."""

    def __init__(
        self,
        templates_dir: str | Path,
        *,
        locale_dir: Path | None = None,
        default_language: str = SOURCE_LANGUAGE,
    ) -> None:
        self.templates_dir = _resolve_templates_dir(templates_dir)
        self.locale_dir = locale_dir
        self.default_language = normalise_language(default_language)
        self._loader = FileSystemLoader(str(self.templates_dir))
        self._environments: dict[tuple[str, bool], Environment] = {}
        self._lock = threading.Lock()

    def environment(self, language: str, html: bool) -> Environment:
        """The cached environment for one language and format (built on first use)."""
        key = (language, html)
        env = self._environments.get(key)
        if env is None:
            with self._lock:
                env = self._environments.get(key)
                if env is None:
                    env = self._build_environment(language, html)
                    self._environments[key] = env
        return env

    def _build_environment(self, language: str, html: bool) -> Environment:
        env = _MailEnvironment(
            loader=self._loader,
            autoescape=html,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            auto_reload=False,
            # Every template stays loaded (a plain dict, not Jinja's locked LRU that reorders a
            # deque on every lookup: ~5% of a mail); there are a few dozen of them.
            cache_size=-1,
            extensions=["jinja2.ext.i18n", "jinja2.ext.do"],
            bytecode_cache=_COMPILED,
        )
        env.policies["ext.i18n.trimmed"] = True
        translations = load_translations(language, self.locale_dir)
        env.install_gettext_translations(translations, newstyle=True)  # type: ignore[attr-defined]
        env.globals.update(_make_gettext(translations, html))
        env.filters.update(_make_filters(Locale.parse(language), html))
        env.globals["language"] = language
        # The shared macros as globals, each loaded once the ones it uses are there (every
        # template sees the globals as they were when it was loaded): an ``{% import %}`` in
        # each template and its layout, on each render, was a tenth of a mail's rendering.
        for alias, name in _MACRO_MODULES:
            env.globals[alias] = env.get_template(name.format(suffix="html" if html else "txt")).module
        for name, macros in _PURE_MACROS.items():
            # The module object of each global above (and of any ``{% import %}`` of ``name``:
            # Jinja keeps one per template when the importer's globals are the environment's).
            module = env.get_template(name).module
            for macro in macros:
                setattr(module, macro, _CachedMacro(getattr(module, macro)))
        return env

    def language_for(self, context: MailContext) -> str:
        return normalise_language(context.language, self.default_language)

    def render(self, context: MailContext, *, subject_tail: str | None = None) -> RenderedMail:
        """Render both parts of one mail in the recipient's language."""
        language = self.language_for(context)
        kind = context.kind
        variables = {
            "recipient": context.recipient,
            "game": context.game,
            "detail": context.detail,
            "kind": kind,
            "game_id": context.game_id,
            "subject_tail": subject_tail,
        }
        text_out = self.environment(language, False).get_template(f"{kind}.txt").render(variables)
        subject, from_name, body = (text_out.split("\n", 2) + ["", ""])[:3]
        subject = " ".join(subject.split())
        from_name = " ".join(from_name.split())
        body = tidy_text(body, TEXT_WIDTH)
        body = body.replace("\n--\n", "\n-- \n")  # the signature separator keeps its space
        variables["subject"] = subject
        # The inbox preview line (_preheader.jinja) opens the text body: the HTML preheader
        # reuses it rather than rendering the macro again.
        variables["preview"] = " ".join(body.split("\n\n", 1)[0].split())
        html_out = self.environment(language, True).get_template(f"{kind}.html").render(variables)
        html_out = _HTML_BLANK_LINES.sub("\n", html_out).strip() + "\n"
        return RenderedMail(subject=subject, from_name=from_name, text=body, html=html_out)

    def preload(self, languages: Iterable[str] = LANGUAGES) -> None:
        """Build every environment and compile every template now (e.g. at worker start)."""
        for language in languages:
            for html in (False, True):
                env = self.environment(language, html)
                suffix = ".html" if html else ".txt"
                for name in env.list_templates():
                    if name.endswith(suffix) or name.endswith(".jinja"):
                        env.get_template(name)
