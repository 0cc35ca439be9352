"""Message catalogs: which languages mails are written in, and loading their translations.

The catalogs are gettext ``.po`` files under ``pbem/locale/<lang>/LC_MESSAGES/messages.po``
(inside the package, so an installed wheel ships them), extracted from the templates with
``pybabel extract -F babel.cfg``.  They are read at runtime with Babel and compiled in memory
once per language per process: no compiled ``.mo`` files to keep in step with the ``.po``
files, no build step, and the cost (a few milliseconds) is paid once when a renderer first
needs the language.  Fuzzy entries are left out, as gettext's ``msgfmt`` would.

English is the source language: its "translation" is the msgids themselves.
"""

from __future__ import annotations

import gettext
import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "SOURCE_LANGUAGE",
    "catalog_path",
    "load_translations",
    "locale_dir",
    "normalise_language",
]

DOMAIN = "messages"
SOURCE_LANGUAGE = "en"
#: Languages mails are written in: English complete, Portuguese and Romanian catalogs.
LANGUAGES: tuple[str, ...] = ("en", "pt", "ro")


def locale_dir() -> Path:
    """``pbem/locale``: the catalogs shipped inside the package."""
    return Path(__file__).resolve().parent.parent / "locale"


def catalog_path(language: str, directory: Path | None = None) -> Path:
    return (directory or locale_dir()) / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def normalise_language(tag: str | None, default: str = SOURCE_LANGUAGE) -> str:
    """Map a player's language preference (``pt_BR``, ``ro-RO``, ``EN``) to a mail language.

    Unknown or empty tags fall back to ``default``, so a preference we cannot honour still
    yields a readable mail rather than an error.
    """
    if not tag:
        return default
    primary = tag.replace("-", "_").split("_", 1)[0].strip().lower()
    return primary if primary in LANGUAGES else default


def load_translations(language: str, directory: Path | None = None) -> gettext.NullTranslations:
    """The translations for ``language``, compiled in memory from its ``.po`` file.

    The source language needs no catalog.  A supported language whose catalog is missing
    is an installation error and raises `FileNotFoundError` (better than mails silently
    falling back to English).
    """
    if language == SOURCE_LANGUAGE:
        return gettext.NullTranslations()
    path = catalog_path(language, directory)
    with path.open("rb") as po_file:
        catalog = read_po(po_file, locale=language, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(fp=compiled, domain=DOMAIN)
