"""Every line of every text part fits 72 columns, for every kind of mail, in
en, pt and ro, with the sample names and with names of about forty characters.

A longer line is allowed only when it is one word that cannot be broken: a link or a mail
address (the renderer never breaks those), alone on its line after its indentation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbem.mail.context import MailContext
from pbem.mail.i18n import LANGUAGES
from pbem.mail.render import MailRenderer, tidy_text, wrap_text
from pbem.mail.samples import sample_contexts
from tests.mail.long_names import long_name_contexts

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
WIDTH = 72
#: A word no renderer may break: a link or an address.
_UNBREAKABLE = re.compile(r"^\S*(?:://|mailto:|@)\S*$")


@pytest.fixture(scope="module")
def renderer() -> MailRenderer:
    return MailRenderer(TEMPLATES)


def _cases():
    for language in LANGUAGES:
        for names, contexts in (("names", sample_contexts(language)), ("long-names", long_name_contexts(language))):
            for kind, items in contexts.items():
                for i, context in enumerate(items):
                    yield pytest.param(context, id=f"{language}-{names}-{kind}-{i}")


def too_wide(text: str) -> list[str]:
    """The lines of ``text`` wider than `WIDTH` that are not one unbreakable word."""
    return [line for line in text.split("\n")
            if len(line) > WIDTH and not _UNBREAKABLE.match(line.strip())]


@pytest.mark.parametrize("context", list(_cases()))
def test_every_line_fits_72_columns(renderer: MailRenderer, context: MailContext) -> None:
    text = renderer.render(context).text
    wide = too_wide(text)
    assert not wide, "lines over 72 columns:\n" + "\n".join(f"{len(line):3} |{line}" for line in wide)


def test_the_measure_catches_a_long_line() -> None:
    assert too_wide("x" * 73) == ["x" * 73]
    assert too_wide("  https://hearts.example.org/game/" + "x" * 60) == []
    assert too_wide("Open https://hearts.example.org/game/" + "x" * 60) != []


# --- The wrap step itself --------------------------------------------------------------------


def test_prose_is_wrapped_at_72_with_its_indentation() -> None:
    words = " ".join(["word"] * 40)
    out = wrap_text(f"{words}\n  {words}\n")
    lines = out.rstrip("\n").split("\n")
    assert all(len(line) <= WIDTH for line in lines)
    first = [line for line in lines if not line.startswith(" ")]
    second = [line for line in lines if line.startswith("  ")]
    assert " ".join(first) == words and " ".join(s.strip() for s in second) == words
    assert all(line.startswith("  ") and not line.startswith("   ") for line in second)


def test_list_items_keep_a_hanging_indent() -> None:
    item = "- " + " ".join(["card"] * 30)
    lines = wrap_text(item + "\n").rstrip("\n").split("\n")
    assert lines[0].startswith("- ") and len(lines) > 1
    assert all(line.startswith("  ") and line[2] != " " for line in lines[1:])
    numbered = "12. " + " ".join(["card"] * 30)
    lines = wrap_text(numbered + "\n").rstrip("\n").split("\n")
    assert all(line.startswith("    ") and line[4] != " " for line in lines[1:])


def test_links_addresses_and_the_signature_are_never_broken() -> None:
    url = "https://hearts.example.org/game/" + "x" * 60
    address = "hearts+42.1.17.abcdefghijklmnop@hearts.example.org"
    text = f"The table on the web: {url}\nReply to {address} to play your card now please.\n-- \nHearts\n"
    out = wrap_text(text)
    assert url in out.split("\n") and address in " ".join(out.split("\n")).split()
    assert "\n-- \n" in out
    assert wrap_text(text) == wrap_text(wrap_text(text))


def test_short_lines_and_tables_are_left_alone() -> None:
    text = "Hello Ana,\n\n  Player      This hand  Total\n  Ana (you)          2     39\n"
    assert wrap_text(text) == text
    assert wrap_text(tidy_text(text)) == tidy_text(text)


def test_the_renderer_wraps_in_its_tidy_pass() -> None:
    """The renderer wraps while it tidies (one pass): the same as tidying, then wrapping."""
    words = " ".join(["word"] * 40)
    body = f"\n\nHello,   \n\n\n\n{words}\n  * {words}\n--\nHearts\n\n"
    assert tidy_text(body, 72) == wrap_text(tidy_text(body))
