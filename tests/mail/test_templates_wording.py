"""Words a reader of one language meets in every mail the same way: the command word the footer
names is the same during a game, after it and in mails about no game (the footer of a Portuguese
mail said “help” during a game and “ajuda” after it), and the Portuguese rules sentences say
"a carta de paus mais baixa" (a card), not "o paus mais baixo".
"""

from __future__ import annotations

import re

import pytest

from pbem.mail.i18n import LANGUAGES, catalog_path
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts
from pbem.resources import templates_dir

#: The word each language's footer asks to reply for the commands (a word the reader knows:
#: pbem/mail/reading/commands.py's phrase table).
HELP_WORD = {"en": "help", "pt": "ajuda", "ro": "ajutor"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_footer_names_the_same_help_word_in_and_after_a_game(language: str) -> None:
    renderer = MailRenderer(templates_dir())
    found: dict[str, set[str]] = {}
    for kind, contexts in sample_contexts(language).items():
        for ctx in contexts:
            footer = renderer.render(ctx).text.rpartition("\n-- \n")[2]
            where = "over" if ctx.game is not None and ctx.game.phase == "over" else (
                "game" if ctx.game is not None else "none")
            words = set(re.findall(r"[“„](\w+)”", footer)) & set(HELP_WORD.values())
            found.setdefault(where, set()).update(words)
    assert set(found) == {"game", "over", "none"}
    assert all(words == {HELP_WORD[language]} for words in found.values()), found


def test_portuguese_names_the_lowest_club_as_a_card() -> None:
    text = catalog_path("pt").read_text(encoding="utf-8")
    assert "o paus mais baixo" not in text
    assert "Quem tem a carta de paus mais baixa sai com ela na primeira vaza." in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_trick_mail_waiting_for_a_player_shows_the_trick_on_the_table(language: str) -> None:
    """The trick mail's "Waiting for Dana." comes with the cards already played to the next trick
    (README, "Playing by mail": each mail shows the trick so far), in both parts."""
    renderer = MailRenderer(templates_dir())
    ctx = sample_contexts(language)["trick_done"][0]
    assert ctx.game is not None and ctx.game.trick and ctx.game.to_move not in (None, ctx.game.seat)
    mail = renderer.render(ctx)
    text = " ".join(mail.text.split())
    so_far = {"en": "Trick 6 so far:", "pt": "Vaza 6 até agora:", "ro": "Levata 6 până acum:"}[language]
    assert so_far in text, text
    assert text.index(so_far) < text.rindex({"en": "Waiting for", "pt": "À espera de", "ro": "Se așteaptă"}[language])
    assert so_far in " ".join(re.sub(r"<[^>]+>", " ", mail.html).split())


@pytest.mark.parametrize("language", LANGUAGES)
def test_cancelled_cards_are_marked_in_the_trick_grid(language: str) -> None:
    """RULES.md §6.6: the cards a twin cancelled are marked in the HTML trick grid itself (struck
    through, with the word), not only in the sentence under it; the others are not."""
    renderer = MailRenderer(templates_dir())
    ctx = next(c for c in sample_contexts(language)["trick_done"]
               if any(t.twins for t in c.detail.tricks))
    html = renderer.render(ctx).html
    cells = re.findall(r"<td align=\"center\"[^>]*>(.*?)</td>", html, re.S)
    twins = {card for t in ctx.detail.tricks for card in t.twins}
    word = {"en": "cancelled", "pt": "anulada", "ro": "anulată"}[language]
    struck = [cell for cell in cells if "line-through" in cell]
    assert struck and all(word in cell for cell in struck)
    assert len(struck) == sum(sum(1 for p in t.plays if p.card in t.twins) for t in ctx.detail.tricks), twins
    assert all("line-through" not in cell and word not in cell for cell in cells if cell not in struck)
