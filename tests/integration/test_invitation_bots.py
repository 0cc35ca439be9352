"""The invitation that asks a creator to confirm a game against the computer ("bots: 3", nobody
else listed) says the game starts on "yes", never that other players will be invited; and on
"yes" it does start, the computer players named as a table would name them."""

from __future__ import annotations

from dataclasses import replace
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest

from pbem.mail.i18n import LANGUAGES
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts
from tests.harness.players import Received
from tests.harness.services import DOMAIN, ServicesFactory
from tests.integration.test_bounded_work import mail
from tests.integration.test_services_game import deliver

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
#: "the other players are invited", in en, pt and ro (the sentence of a game with people to invite).
OTHERS_INVITED = ("the other players are invited", "os outros jogadores são então convidados",
                  "ceilalți jucători sunt invitați")


def text_of(raw: bytes) -> str:
    message = message_from_bytes(raw, policy=default)
    return message.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]


def test_a_game_against_the_computer_invites_nobody_else(services: ServicesFactory) -> None:
    svc = services()
    (invitation,) = deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", "new game\nbots: 3\n", "<start@a.test>"),
                            "alice@a.test", f"new@{DOMAIN}")
    text = " ".join(text_of(invitation.raw).split())
    assert "3 seats are taken by computer players: " in text  # named, with their strength
    assert text.count("(computer, ") == 3
    assert "the game starts at once: there is nobody else to invite" in text
    assert not [words for words in OTHERS_INVITED if words in text]

    received = Received.parse(invitation.raw)
    started = deliver(svc, mail("alice@a.test", received.reply_to, "yes", "<yes@a.test>"), "alice@a.test",
                      received.reply_to)
    assert started and {m.recipient for m in started} == {"alice@a.test"}
    first = " ".join(text_of(started[0].raw).split())
    assert "(bot " not in first and "(computer, medium)" in first  # PBEM_DEFAULT_BOT: heuristic


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_confirmation_sentence_fits_whom_there_is_to_invite(language: str) -> None:
    renderer = MailRenderer(TEMPLATES)
    confirmations = [c for c in sample_contexts(language)["invitation"] if c.detail.confirm]
    with_people = next(c for c in confirmations if c.detail.players)
    alone = replace(with_people, detail=replace(with_people.detail, players=(), bots=3))
    for ctx, invites_others in ((with_people, True), (alone, False)):
        mail_ = renderer.render(ctx)
        for part in (" ".join(mail_.text.split()), mail_.html):
            said = [words for words in OTHERS_INVITED if words in part]
            assert bool(said) == invites_others, (language, ctx.detail.players, said)
