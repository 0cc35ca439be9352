"""The inbox preview says what each mail wants (templates/email/_preheader.jinja).

Every mail of a game keeps the game's one subject (webmails thread by it), so the preview is
what tells the mails apart: the first line of the text part, before the greeting, and the
hidden preheader that opens the HTML body say the same sentence, and it is not the subject.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from pbem.mail.context import KINDS, FinishedTrick, HandResult, HandSummary, MailContext, Play, Recipient, TrickDone, YourTurn
from pbem.mail.i18n import LANGUAGES
from pbem.mail.render import MailRenderer, RenderedMail
from pbem.mail.samples import sample_contexts, sample_game
from tests.mail.long_names import long_name_contexts

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
_PREHEADER = re.compile(
    r'<body[^>]*>\s*<div style="display:none;max-height:0;[^"]*overflow:hidden;mso-hide:all;[^"]*">(.*?)</div>', re.S)


@pytest.fixture(scope="module")
def renderer() -> MailRenderer:
    return MailRenderer(TEMPLATES)


def preview(mail: RenderedMail) -> tuple[str, str]:
    """(the text part's first paragraph, the HTML preheader's text), whitespace folded."""
    first = mail.text.split("\n\n", 1)[0]
    match = _PREHEADER.search(mail.html)
    assert match, "no hidden preheader as the first thing in <body>"
    hidden = html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))
    return " ".join(first.split()), " ".join(hidden.split())


def _cases():
    for language in LANGUAGES:
        for names, contexts in (("names", sample_contexts(language)), ("long-names", long_name_contexts(language))):
            for kind, items in contexts.items():
                for i, context in enumerate(items):
                    yield pytest.param(context, id=f"{language}-{names}-{kind}-{i}")


@pytest.mark.parametrize("context", list(_cases()))
def test_every_mail_previews_what_it_wants(renderer: MailRenderer, context: MailContext) -> None:
    mail = renderer.render(context)
    text_line, hidden = preview(mail)
    assert text_line and hidden == text_line
    assert text_line != mail.subject
    greeting = mail.text.split("\n\n", 2)[1]
    assert context.recipient.name in greeting or "," in greeting  # the greeting comes after it


def test_every_kind_has_a_sample(renderer: MailRenderer) -> None:
    assert set(sample_contexts("en")) == set(KINDS)


def _en(renderer: MailRenderer, detail: object, **game: object) -> str:
    me = Recipient(name="Ana", address="ana@example.org")
    return preview(renderer.render(MailContext(recipient=me, detail=detail, game=sample_game(**game))))[0]  # type: ignore[arg-type]


def test_the_issues_examples(renderer: MailRenderer) -> None:
    """The sentences of the three most common mails, as the inbox shows them."""
    assert _en(renderer, YourTurn("play"), trick_number=5, legal=("7H", "4H")) == \
        "Your turn: trick 5, you may play 4♥ 7♥"
    trick = FinishedTrick(5, (Play(2, "5D"), Play(3, "KD"), Play(0, "9D"), Play(1, "AD")), 3, 0)
    assert _en(renderer, TrickDone(), last_trick=trick, to_move=3, legal=()) == "Dana took trick 5"
    assert _en(renderer, TrickDone(), last_trick=replace_winner(trick, 1), to_move=1) == "You took trick 5"
    assert _en(renderer, HandSummary(HandResult(3, (9, 4, 13, 0), (30, 38, 50, 22)))) == \
        "Hand 3 over: you 4, total 38"
    assert _en(renderer, YourTurn("pass"), phase="pass", pass_direction="left", trick=(), to_move=None,
               legal=(), waiting_for=(1,)) == "Pass 3 cards to the left"


def test_translated(renderer: MailRenderer) -> None:
    pt = Recipient(name="Ana", address="ana@example.org", language="pt")
    ro = Recipient(name="Ana", address="ana@example.org", language="ro")
    game = sample_game(trick_number=5, legal=("7H", "4H"))
    en_line = "Your turn: trick 5, you may play 4♥ 7♥"
    for who in (pt, ro):
        line = preview(renderer.render(MailContext(recipient=who, detail=YourTurn("play"), game=game)))[0]
        assert line != en_line and "4♥ 7♥" in line and "5" in line


def replace_winner(trick: FinishedTrick, winner: int) -> FinishedTrick:
    return FinishedTrick(trick.number, trick.plays, winner, trick.points)
