"""What the outbox keeps of a sent mail for quote removal (``pbem.mail.quoted``) is what parsing the
mail's bytes gives (``message.quoted_mail``, as a reply to a mail sent before they were kept is
read): the same subject and the same line keys, for every sample mail in every language, with plain
and long names; and the quick reader of pbem's own HTML reads the lines the tolerant parser reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.mail.compose import MailComposer
from pbem.mail.i18n import LANGUAGES
from pbem.mail.quoted import quoted_record, read_quoted
from pbem.mail.reading.html_text import html_to_text, own_html_to_text
from pbem.mail.reading.message import quoted_mail
from pbem.mail.reading.reply_text import answered_lines
from pbem.mail.samples import sample_contexts
from tests.mail.long_names import long_name_contexts

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain="hearts.example.org")


@pytest.mark.parametrize("names", ["plain", "long"])
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_kept_lines_are_the_lines_of_the_bytes(composer: MailComposer, language: str, names: str) -> None:
    contexts = sample_contexts(language) if names == "plain" else long_name_contexts(language)
    checked = 0
    for kind, samples in contexts.items():
        for context in samples:
            composed = composer.compose(kind, context)
            kept = read_quoted(composed.quoted)
            parsed = quoted_mail(composed.raw)
            assert kept.subject == parsed.subject, kind
            assert kept.keys == answered_lines(*parsed.texts), kind
            checked += 1
    assert checked > 100


def test_own_html_reads_as_the_parser_reads_it(composer: MailComposer) -> None:
    for kind, samples in sample_contexts("en").items():
        for context in samples:
            html = composer.render(context).html
            assert answered_lines(own_html_to_text(html)) == answered_lines(html_to_text(html)), kind


@pytest.mark.parametrize("html", [
    "<blockquote>Quoted<br>lines</blockquote><p>New</p>",
    '<div class="gmail_quote">Earlier mail</div><div>Mine</div>',
    "<pre>one\ntwo</pre>",
    '<p id="signature">Sent from my phone</p>',
    "<P>One<BR>two</P><DIV>three</DIV>",
])
def test_html_that_is_not_pbems_own_goes_to_the_parser(html: str) -> None:
    assert own_html_to_text(html) == html_to_text(html)


def test_a_record_reads_back() -> None:
    record = quoted_record("[hearts #4] Friday\x07table", "Your turn\n\n> 4♠ K♠", "<p>Your <b>turn</b></p>")
    kept = read_quoted(record)
    assert kept.subject == "[hearts #4] Friday table"
    assert kept.keys == frozenset({"your turn", "4♠ k♠"})
