"""The message catalogs: in step with the templates, complete, and well formed."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from pbem.mail.i18n import (
    LANGUAGES,
    SOURCE_LANGUAGE,
    catalog_path,
    load_translations,
    locale_dir,
    normalise_language,
)

ROOT = Path(__file__).resolve().parents[2]
TRANSLATED = [lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE]


def _extracted_ids() -> set[str | tuple[str, ...]]:
    with open(ROOT / "babel.cfg", encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg, str(ROOT / "babel.cfg"))
    ids: set[str | tuple[str, ...]] = set()
    for _filename, _lineno, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map
    ):
        ids.add(message if isinstance(message, str) else tuple(message))
    return ids


def _catalog_ids(path: Path) -> set[str | tuple[str, ...]]:
    with path.open("rb") as f:
        catalog = read_po(f)
    return {m.id if isinstance(m.id, str) else tuple(m.id) for m in catalog if m.id}


def test_catalogs_live_inside_the_package() -> None:
    assert locale_dir() == ROOT / "pbem" / "locale"
    for language in TRANSLATED:
        assert catalog_path(language).is_file()


def test_template_pot_is_in_step_with_the_templates() -> None:
    extracted = _extracted_ids()
    assert len(extracted) > 150
    pot = _catalog_ids(locale_dir() / "messages.pot")
    assert extracted - pot == set(), "run pybabel extract (see babel.cfg)"
    assert pot - extracted == set(), "run pybabel extract (see babel.cfg)"


@pytest.mark.parametrize("language", TRANSLATED)
def test_catalog_is_complete_and_well_formed(language: str) -> None:
    path = catalog_path(language)
    pot = _catalog_ids(locale_dir() / "messages.pot")
    assert _catalog_ids(path) == pot, "run pybabel update (see babel.cfg)"
    with path.open("rb") as f:
        catalog = read_po(f, locale=language)
    problems = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if "fuzzy" in message.flags or not all(strings):
            problems.append(f"untranslated: {message.id!r}")
        if isinstance(message.id, tuple) and len(strings) != catalog.num_plurals:
            problems.append(f"plural forms: {message.id!r}")
    for message, errors in catalog.check():
        problems += [f"{message.id!r}: {error}" for error in errors]
    assert problems == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_placeholders_survive_translation(language: str) -> None:
    """Every %(name)s of a msgid is in its translation (and no other), so formatting works."""
    import re

    placeholder = re.compile(r"%\((\w+)\)s")
    with catalog_path(language).open("rb") as f:
        catalog = read_po(f, locale=language)
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = set().union(*(placeholder.findall(i) for i in ids)) - {"num"}
        for string in strings:
            found = set(placeholder.findall(string)) - {"num"}
            assert found == wanted, (message.id, string)


def test_plural_rules() -> None:
    pt = load_translations("pt")
    assert pt.ngettext("%(num)s player.", "%(num)s players.", 1) == "%(num)s jogador."
    assert pt.ngettext("%(num)s player.", "%(num)s players.", 0) == "%(num)s jogadores."
    ro = load_translations("ro")
    forms = [ro.ngettext("%(num)s player.", "%(num)s players.", n) for n in (1, 2, 19, 20, 101, 120)]
    assert forms == ["%(num)s jucător.", "%(num)s jucători.", "%(num)s jucători.",
                     "%(num)s de jucători.", "%(num)s jucători.", "%(num)s de jucători."]


def test_source_language_needs_no_catalog() -> None:
    assert load_translations("en").gettext("Hearts") == "Hearts"


def test_missing_catalog_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_translations("pt", tmp_path)


def test_fuzzy_entries_are_not_used(tmp_path: Path) -> None:
    po = (
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        '#, fuzzy\nmsgid "Hearts"\nmsgstr "Copas"\n\n'
        'msgid "Total"\nmsgstr "Soma"\n'
    )
    target = tmp_path / "pt" / "LC_MESSAGES"
    target.mkdir(parents=True)
    (target / "messages.po").write_text(po, encoding="utf-8")
    translations = load_translations("pt", tmp_path)
    assert translations.gettext("Hearts") == "Hearts"
    assert translations.gettext("Total") == "Soma"


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("pt", "pt"), ("pt_BR", "pt"), ("PT-pt", "pt"), ("ro-RO", "ro"), ("en_GB", "en"),
     ("fr", "en"), ("", "en"), (None, "en")],
)
def test_normalise_language(tag, expected) -> None:
    assert normalise_language(tag) == expected
