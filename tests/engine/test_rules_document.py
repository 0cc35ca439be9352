"""docs/rules.md describes the engine's rules: every option and preset, and nothing the engine lacks.

The document is read as Markdown: the options are the ``### `name` `` entries of its "Options" section,
the presets those of its "Presets" section. Each check compares what the document says with the
engine itself (``Rules`` fields and defaults, the choice tuples, ``PRESETS``, the refusal codes raised
in ``pbem/engine/rules.py``), so an option added to the engine without its entry, an entry for an
option the engine does not have, or a preset, default or choice that drifted, fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from pbem.engine import rules as engine_rules
from pbem.engine.cards import CARD_NAMES
from pbem.engine.rules import PRESETS, REMOVED_BY_PLAYERS, Rules, default_pass_cycle

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rules.md"

FIELDS = {f.name: f for f in dataclasses.fields(Rules)}
#: The options whose values are words from a fixed list, and that list as the engine has it.
CHOICES = {
    "pass_cycle": engine_rules.PASS_DIRECTIONS,
    "first_lead": engine_rules.FIRST_LEADS,
    "heart_values": engine_rules.HEART_VALUES,
    "moon": engine_rules.MOONS,
    "tie": engine_rules.TIES,
    "partnership": engine_rules.PARTNERSHIPS,
    "partner_moon": engine_rules.PARTNER_MOONS,
    "kitty": engine_rules.KITTIES,
}
CHOICE_WORDS = {word for words in CHOICES.values() for word in words}
#: Words a new-game mail or the command line takes beside the rules options: the preset (``rules:``,
#: ``preset:``), computer players (``bots:``), a pass (``pass: QS AH KH``) and the placeholder of
#: ``name: value``.
NOT_RULES_KEYS = {"rules", "preset", "bots", "pass", "name"}

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_SPAN = re.compile(r"`([^`\n]+)`")
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
_WORD = re.compile(r"^[a-z][a-z0-9_]*$")
_KEY_VALUE = re.compile(r"^(?:--option\s+)?'?([a-z][a-z0-9_]*)\s*[:=]\s*\S")


def doc_text() -> str:
    assert DOC.is_file(), "docs/rules.md is missing"
    return DOC.read_text(encoding="utf-8")


def without_fences(text: str) -> str:
    return _FENCE.sub("", text)


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section (up to the next ``## ``)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/rules.md has no '## {title}' section"
    return match.group(1)


def entries(body: str) -> dict[str, str]:
    """The ``### `name` `` entries of a section, by name, with their bodies."""
    found: dict[str, str] = {}
    parts = re.split(r"^### (.*)\n", body, flags=re.M)
    for heading, text in zip(parts[1::2], parts[2::2]):
        match = re.fullmatch(r"`([^`]+)`", heading.strip())
        assert match, f"an entry heading is not one name in backticks: {heading!r}"
        assert match.group(1) not in found, f"{match.group(1)} has two entries"
        found[match.group(1)] = text
    return found


def spans(text: str) -> list[str]:
    return _SPAN.findall(without_fences(text))


def options() -> dict[str, str]:
    return entries(section(doc_text(), "Options"))


def presets() -> dict[str, str]:
    return entries(section(doc_text(), "Presets"))


def rendered(value: object) -> str:
    """An option value as the document writes it (``true``, ``-10``, ``choice``, ``none``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def line_of(body: str, label: str) -> str:
    lines = [line for line in body.splitlines() if line.startswith(f"- {label}:")]
    assert len(lines) == 1, f"expected one '- {label}:' line, found {len(lines)}"
    return lines[0]


# -- options ------------------------------------------------------------------------------------


def test_every_option_of_the_engine_has_an_entry_and_every_entry_is_an_option():
    documented = set(options())
    missing = sorted(set(FIELDS) - documented)
    unknown = sorted(documented - set(FIELDS))
    assert not missing, f"options of Rules with no entry in docs/rules.md: {missing}"
    assert not unknown, f"docs/rules.md has entries for options the engine does not know: {unknown}"


def test_the_options_come_in_the_engines_order():
    assert list(options()) == [name for name in FIELDS if name in options()]


@pytest.mark.parametrize("name", [n for n, f in FIELDS.items()
                                  if n not in ("removed_cards", "pass_cycle") and not isinstance(f.default, tuple)])
def test_each_simple_default_is_the_engines(name):
    body = options().get(name)
    assert body is not None, f"no entry for {name}"
    default = _SPAN.findall(line_of(body, "Default"))
    assert default, f"{name}: the Default line names no value in backticks"
    assert default[0] == rendered(FIELDS[name].default), f"{name}: documented default {default[0]!r}"


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_each_list_of_choices_is_the_engines(name):
    body = options().get(name)
    assert body is not None, f"no entry for {name}"
    documented = _SPAN.findall(line_of(body, "Values"))
    assert sorted(documented) == sorted(CHOICES[name]), f"{name}: documented values {documented}"


def engine_refusal_codes() -> set[str]:
    """Every code ``pbem/engine/rules.py`` raises ``InvalidRules`` with."""
    tree = ast.parse(Path(engine_rules.__file__).read_text(encoding="utf-8"))
    codes = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "InvalidRules"
                and node.args and isinstance(node.args[0], ast.Constant)):
            codes.add(node.args[0].value)
    assert len(codes) > 10, "the refusal codes were not found in rules.py"
    return codes


def test_the_refusal_codes_are_the_engines_every_one():
    engine = engine_refusal_codes()
    documented = {s for s in spans(doc_text()) if re.fullmatch(r"[A-Z][A-Z_]{3,}", s) and "_" in s}
    assert not documented - engine, f"codes the engine never gives: {sorted(documented - engine)}"
    assert not engine - documented, f"refusal codes not in docs/rules.md: {sorted(engine - documented)}"


def test_the_options_section_names_no_other_word_as_an_option():
    known = set(FIELDS) | CHOICE_WORDS | set(PRESETS) | {"true", "false", "none"}
    for name, body in options().items():
        strange = [s for s in spans(body) if _WORD.match(s) and s not in known]
        assert not strange, f"the entry of {name} names {strange}, neither an option nor one of its values"


# -- presets ------------------------------------------------------------------------------------


def test_every_preset_has_an_entry_and_every_entry_is_a_preset():
    documented = set(presets())
    assert not set(PRESETS) - documented, f"presets with no entry: {sorted(set(PRESETS) - documented)}"
    assert not documented - set(PRESETS), f"entries for presets the engine lacks: {sorted(documented - set(PRESETS))}"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_preset_entry_says_what_the_preset_sets(preset):
    body = presets().get(preset)
    assert body is not None, f"no entry for {preset}"
    written = spans(body)
    for option, value in PRESETS[preset].items():
        if isinstance(value, (bool, int, str)):
            assert f"{option}={rendered(value)}" in written, f"{preset}: `{option}={rendered(value)}` is not said"
        else:
            assert option in written or any(s.startswith(f"{option}=") for s in written), \
                f"{preset}: `{option}` is not said"
    for span in written:
        match = _KEY_VALUE.match(span)
        if match:
            assert match.group(1) in FIELDS, f"{preset}: `{span}` sets no option the engine knows"
    for word in (s for s in written if _WORD.match(s)):
        assert word in set(FIELDS) | CHOICE_WORDS | set(PRESETS) | {"true", "false", "none"}, \
            f"{preset}: `{word}` is neither an option nor a value"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_preset_entry_gives_its_moon_total(preset):
    match = re.search(r"^Moon total: `(\d+)`", presets().get(preset, ""), re.M)
    assert match, f"{preset}: no 'Moon total: `N`' line"
    assert int(match.group(1)) == Rules.make(preset).table.moon_total


# -- the document as a whole ----------------------------------------------------------------------


def test_the_player_count_table_is_the_engines():
    rows = {}
    for line in section(doc_text(), "Player counts").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit():
            rows[int(cells[0])] = cells
    assert sorted(rows) == sorted(REMOVED_BY_PLAYERS)
    for players, (_, removed, each, lead, cycle) in rows.items():
        rules = Rules(players=players)
        assert set(removed.split()) - {"none"} == set(REMOVED_BY_PLAYERS[players]), f"{players} players: removed"
        assert int(each) == rules.table.hand_size, f"{players} players: cards each"
        assert lead == CARD_NAMES[rules.table.lowest_club], f"{players} players: first lead"
        assert tuple(cycle.split()) == default_pass_cycle(players), f"{players} players: pass cycle"


def test_the_document_names_no_option_the_engine_does_not_know():
    text = doc_text()
    keys = [(s, _KEY_VALUE.match(s)) for s in spans(text)]
    for fence in _FENCE.findall(text):  # the mail and command-line examples
        for line in fence.splitlines()[1:-1]:
            keys += [(line, re.match(r"^\s*([a-z][a-z0-9_]*):\s", line))]
            keys += [(line, m) for m in re.finditer(r"--option\s+'?([a-z][a-z0-9_]*)=", line)]
    for where, match in keys:
        if match:
            assert match.group(1) in FIELDS or match.group(1) in NOT_RULES_KEYS, \
                f"docs/rules.md gives `{match.group(1)}` (in {where!r}), which is not an option of the engine"
    for span in spans(text):
        if _SNAKE.match(span):
            assert span in FIELDS or span in CHOICE_WORDS, f"docs/rules.md names `{span}`, which the engine lacks"


def anchor(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (lower case, punctuation dropped, spaces as -)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_document_links_only_inside_the_repository_and_to_its_own_headings():
    text = doc_text()
    anchors = {anchor(h) for h in re.findall(r"^#{1,6} (.*)$", without_fences(text), re.M)}
    targets = re.findall(r"\]\(([^)\s]+)\)", without_fences(text))
    assert targets, "docs/rules.md links nothing (not even its own sections)"
    for target in targets:
        assert "://" not in target and not target.startswith(("/", "..")), f"a link outside the repository: {target}"
        path, _, fragment = target.partition("#")
        if path:
            assert (DOC.parent / path).resolve().is_relative_to(ROOT) and (DOC.parent / path).exists(), target
        elif fragment:
            assert fragment in anchors, f"a link to no heading of docs/rules.md: {target}"
