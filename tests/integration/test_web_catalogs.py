"""The web pages' message catalogs: in step with templates/web, and every phrase translated
either here or, for a phrase the mails share, in the mail catalogs it falls back to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from pbem.mail.i18n import catalog_path as mail_catalog_path
from pbem.web.i18n import WebTranslations, web_locale_dir

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ["pt", "ro"]
PLACEHOLDER = re.compile(r"%\(\w+\)s")


def extracted_ids() -> set[str | tuple[str, ...]]:
    cfg_path = ROOT / "pbem" / "web" / "babel.cfg"
    with cfg_path.open(encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg, str(cfg_path))
    return {
        message if isinstance(message, str) else tuple(message)
        for _f, _l, message, _c, _ctx in extract_from_dir(str(ROOT), method_map, options_map)
    }


def read(path: Path):
    with path.open("rb") as handle:
        return read_po(handle)


def ids(catalog) -> set[str | tuple[str, ...]]:
    return {m.id if isinstance(m.id, str) else tuple(m.id) for m in catalog if m.id}


def test_web_pot_is_in_step_with_the_templates() -> None:
    extracted = extracted_ids()
    assert len(extracted) > 50
    pot = ids(read(web_locale_dir() / "messages.pot"))
    assert extracted == pot, "run pybabel extract (see pbem/web/babel.cfg)"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_web_phrase_is_translated_here_or_by_the_mail_catalog(language: str) -> None:
    web = read(web_locale_dir() / language / "LC_MESSAGES" / "messages.po")
    pot = ids(read(web_locale_dir() / "messages.pot"))
    assert ids(web) == pot, "run pybabel update (see pbem/web/babel.cfg)"
    mail = {m.id: m.string for m in read(mail_catalog_path(language)) if m.id and m.string}
    untranslated = []
    for message in web:
        if not message.id:
            continue
        assert not message.fuzzy, message.id
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if all(strings):
            sources = message.id if isinstance(message.id, tuple) else (message.id,)
            wanted = set(PLACEHOLDER.findall(sources[-1]))
            for string in strings:
                assert set(PLACEHOLDER.findall(string)) == wanted, (message.id, string)
        elif message.id not in mail:
            untranslated.append(message.id)
    assert untranslated == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_web_translations_fall_back_to_the_mail_catalogs(language: str) -> None:
    translations = WebTranslations("en").get(language)
    mail = {m.id: m.string for m in read(mail_catalog_path(language)) if m.id}
    assert translations.gettext("to the right") == mail["to the right"] != "to the right"
    assert translations.gettext("Your hand") != "Your hand"  # a web-only phrase
