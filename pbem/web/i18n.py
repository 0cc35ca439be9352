"""Translating the web pages with the same gettext catalogs as the mails.

The web pages have their own small catalogs, ``pbem/web/locale/<lang>/LC_MESSAGES/
messages.po`` (extracted from ``templates/web`` with ``pbem/web/babel.cfg``), loaded by
the mail side's ``load_translations`` and falling back to the mail catalogs
(``pbem/locale``): a phrase the mails already say ("hearts", "to the right", "It is your
turn.") is translated once, there, and left empty here.

Per request we only choose a language and let Jinja's i18n extension find that
request's translations (the pattern Flask-Babel uses, without its extra machinery): the
Jinja environment is the app's one, shared by all threads, and the translations travel
in ``flask.g``.

A game page speaks its player's language; other pages (the dev mailbox) the browser's.
"""

from __future__ import annotations

import gettext
import logging
import threading
from pathlib import Path

from flask import Flask, current_app, g, request

from pbem.mail.i18n import LANGUAGES, load_translations, normalise_language

__all__ = ["WebTranslations", "current_language", "install_i18n", "use_language", "web_locale_dir"]

log = logging.getLogger("pbem.web")

_G_TRANSLATIONS = "pbem_translations"
_G_LANGUAGE = "pbem_language"
_EXTENSION_KEY = "pbem_translations"


def web_locale_dir() -> Path:
    """``pbem/web/locale``: the web pages' own catalogs, shipped inside the package."""
    return Path(__file__).resolve().parent / "locale"


class WebTranslations:
    """Translations per language, compiled on first use and kept for the app's life."""

    def __init__(
        self,
        default_language: str,
        *,
        web_dir: Path | None = None,
        mail_dir: Path | None = None,
    ) -> None:
        self.default_language = normalise_language(default_language)
        self.web_dir = web_dir or web_locale_dir()
        self.mail_dir = mail_dir
        self._loaded: dict[str, gettext.NullTranslations] = {}
        self._lock = threading.Lock()

    def get(self, language: str) -> gettext.NullTranslations:
        found = self._loaded.get(language)
        if found is None:
            with self._lock:
                found = self._loaded.get(language)
                if found is None:
                    found = self._load(language)
                    self._loaded[language] = found
        return found

    def _load(self, language: str) -> gettext.NullTranslations:
        web = self._load_one(language, self.web_dir, "web page")
        web.add_fallback(self._load_one(language, self.mail_dir, "mail"))
        return web

    @staticmethod
    def _load_one(language: str, directory: Path | None, what: str) -> gettext.NullTranslations:
        try:
            return load_translations(language, directory)
        except FileNotFoundError:
            # The mails refuse to go out untranslated; a page is better shown in English
            # than not at all.  Logged once per language and process.
            log.warning("no %s %s catalog installed: those phrases stay English", language, what)
            return gettext.NullTranslations()


def install_i18n(app: Flask, translations: WebTranslations) -> None:
    """Give the app's Jinja environment ``_``, ``gettext`` and ``{% trans %}`` that
    translate into the current request's language."""
    app.extensions[_EXTENSION_KEY] = translations
    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.add_extension("jinja2.ext.do")
    app.jinja_env.policies["ext.i18n.trimmed"] = True

    def _current() -> gettext.NullTranslations:
        found = g.get(_G_TRANSLATIONS)
        if found is None:
            found = translations.get(translations.default_language)
        return found

    def _gettext(message: str) -> str:
        return _current().gettext(message)

    def _ngettext(singular: str, plural: str, n: int) -> str:
        return _current().ngettext(singular, plural, n)

    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
        _gettext, _ngettext, newstyle=True
    )
    app.context_processor(lambda: {"language": current_language()})


def use_language(language: str | None) -> str:
    """Translate this request's pages into ``language`` (a player's preference), or the
    browser's best supported language when none is given.  Returns the language used."""
    translations: WebTranslations = current_app.extensions[_EXTENSION_KEY]
    if language:
        chosen = normalise_language(language, translations.default_language)
    else:
        chosen = request.accept_languages.best_match(LANGUAGES) or translations.default_language
    setattr(g, _G_TRANSLATIONS, translations.get(chosen))
    setattr(g, _G_LANGUAGE, chosen)
    return chosen


def current_language() -> str:
    language = g.get(_G_LANGUAGE)
    return language if isinstance(language, str) else "en"
