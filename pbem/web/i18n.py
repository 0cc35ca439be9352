"""Translating the web pages with the same gettext catalogs as the mails.

The catalogs and their loading are the mail side's (``pbem.mail.i18n``): one set of
``.po`` files, extracted from ``templates/email`` and ``templates/web`` alike, so a phrase
such as "hearts" is translated once.  Here we only choose a language per request and let
Jinja's i18n extension find that request's translations (the pattern Flask-Babel uses,
without its extra machinery): the Jinja environment is the app's one, shared by all
threads, and the translations travel in ``flask.g``.

A game page speaks its player's language; other pages (the dev mailbox) the browser's.
"""

from __future__ import annotations

import gettext
import logging
import threading
from pathlib import Path

from flask import Flask, current_app, g, request

from pbem.mail.i18n import LANGUAGES, load_translations, normalise_language

__all__ = ["WebTranslations", "current_language", "install_i18n", "use_language"]

log = logging.getLogger("pbem.web")

_G_TRANSLATIONS = "pbem_translations"
_G_LANGUAGE = "pbem_language"
_EXTENSION_KEY = "pbem_translations"


class WebTranslations:
    """Translations per language, compiled on first use and kept for the app's life."""

    def __init__(self, default_language: str, locale_dir: Path | None = None) -> None:
        self.default_language = normalise_language(default_language)
        self.locale_dir = locale_dir
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
        try:
            return load_translations(language, self.locale_dir)
        except FileNotFoundError:
            # The mails refuse to go out untranslated; a page is better shown in English
            # than not at all.  Logged once per language and process.
            log.warning("no %s message catalog installed: web pages fall back to English", language)
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
