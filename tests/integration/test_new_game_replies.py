"""Answers to ``new@`` can be answered (README, "Starting a game"): every refusal of a new-game
request carries ``Reply-To: new@…`` and ``In-Reply-To`` the request, so that the corrected request
sent with Reply goes to ``new@`` again (it used to reach ``hearts@`` and get the help mail); the
invitation keeps its signed ``invite+…`` address. A new-game text mailed to another address of the
domain is answered with where to send it: to a verified player always, to an unverified address
only within the caps of README's "What a stranger may receive", as that mail's one answer. The help
mail says how to start a game. Through the services on the test's database.
"""

from __future__ import annotations

import dataclasses
import itertools
from email.utils import parseaddr
from pathlib import Path
from typing import Iterator

import pytest

from pbem.db.models import OutboundMessage
from pbem.services.app import Services
from tests.harness.players import Received, reply_bytes
from tests.integration.mailplay import (
    DOMAIN,
    address,
    deliver,
    last_outcome,
    make_services,
    new_game,
    parsed,
    prose_of,
)

NEW = f"new@{DOMAIN}"
_ids = itertools.count(1)


@pytest.fixture
def svc(db_url: str, tmp_path: Path) -> Iterator[Services]:
    services = make_services(db_url, tmp_path, PBEM_INVITES_PER_DAY="2")
    yield services
    services.close()


def write(svc: Services, sender: str, to: str, body: str) -> tuple[list[OutboundMessage], str]:
    """A mail from ``sender`` to ``to``; the mails it caused and its Message-ID."""
    message_id = f"<nr-{next(_ids)}@players.test>"
    raw = (f"From: {sender}\r\nTo: {to}\r\nSubject: Friday game\r\nMessage-ID: {message_id}\r\n"
           "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n").encode()
    return deliver(svc, raw, sender, to), message_id


def hit_reply(svc: Services, mail: OutboundMessage, body: str) -> list[OutboundMessage]:
    """Reply to ``mail`` as a mail client's Reply does: to its Reply-To, else to its From."""
    message = parsed(mail)
    to = parseaddr(str(message.get("Reply-To") or message["From"]))[1]
    received = dataclasses.replace(Received.parse(mail.raw), reply_to=to)
    return deliver(svc, reply_bytes(received, sender=mail.recipient, body=body), mail.recipient, to)


def header(mail: OutboundMessage, name: str) -> str:
    return str(parsed(mail).get(name, ""))


def test_a_stranger_replies_to_the_refusal_with_the_corrected_request(svc: Services) -> None:
    (refusal,), request_id = write(svc, "ana@players.test", NEW, "new game\nrules: omnibsu\nbots: 3")
    assert refusal.kind == "request_rejected"
    assert parseaddr(header(refusal, "Reply-To"))[1] == NEW
    assert header(refusal, "In-Reply-To") == request_id
    (invitation,) = hit_reply(svc, refusal, "new game\nrules: omnibus\nbots: 3")
    assert last_outcome(svc)["code"] == "GAME_CREATED"
    assert invitation.kind == "invitation"  # not the help mail
    assert parseaddr(header(invitation, "Reply-To"))[1].startswith("invite+")  # its signed address, as before


def test_a_player_replies_to_the_refusal_and_the_game_starts(svc: Services) -> None:
    new_game(svc)  # p0@ has taken a seat: a verified player
    (refusal,), request_id = write(svc, address(0), NEW, "new game\nplayers: 5\nbots: 2")
    assert refusal.kind == "request_rejected" and refusal.recipient == address(0)
    assert parseaddr(header(refusal, "Reply-To"))[1] == NEW
    assert header(refusal, "In-Reply-To") == request_id
    started = hit_reply(svc, refusal, "new game\nbots: 3")
    assert last_outcome(svc)["code"] == "GAME_CREATED"
    assert [m.kind for m in started] == ["your_turn"]


def test_a_new_game_sent_elsewhere_is_answered_with_where_to_send_it(svc: Services) -> None:
    new_game(svc)
    (answer,), request_id = write(svc, address(0), f"hearts@{DOMAIN}", "new game\nbots: 3")
    assert answer.kind == "request_rejected" and last_outcome(svc)["code"] == "NEW_GAME_ELSEWHERE"
    assert f"A new game is started by a mail to {NEW}, so nothing was started from yours." in prose_of(answer)
    assert parseaddr(header(answer, "Reply-To"))[1] == NEW
    assert header(answer, "In-Reply-To") == request_id
    started = hit_reply(svc, answer, "new game\nbots: 3")
    assert last_outcome(svc)["code"] == "GAME_CREATED" and [m.kind for m in started] == ["your_turn"]
    # Any other text to that address still gets the help mail, which says how to start a game.
    (help_mail,), _ = write(svc, address(0), f"hearts@{DOMAIN}", "Hi, how does this work?")
    assert help_mail.kind == "help"
    assert f"this is all you need to write to {NEW}:" in prose_of(help_mail)


def test_a_stranger_gets_where_to_send_it_only_within_the_caps(svc: Services) -> None:
    # PBEM_INVITES_PER_DAY=2: the third mail from one unverified address gets nothing.
    answers = [write(svc, "eve@players.test", f"help@{DOMAIN}", "new game\nbots: 3")[0] for _ in range(3)]
    assert [[m.kind for m in a] for a in answers] == [["request_rejected"], ["request_rejected"], []]
    assert last_outcome(svc)["answered"] is False
    assert parseaddr(header(answers[0][0], "Reply-To"))[1] == NEW
    # Anything else from an unverified address to such an address still gets nothing.
    assert write(svc, "zed@players.test", f"help@{DOMAIN}", "help")[0] == []
    assert last_outcome(svc)["code"] == "UNKNOWN_SENDER"


def test_the_help_mail_of_a_seat_says_how_to_start_a_game(svc: Services) -> None:
    _, mails = new_game(svc)
    first = next(m for m in mails if m.recipient == address(0))
    (help_mail,) = deliver(svc, reply_bytes(Received.parse(first.raw), sender=address(0), body="help"),
                           address(0), Received.parse(first.raw).reply_to)
    assert help_mail.kind == "help"
    assert f"this is all you need to write to {NEW}:" in prose_of(help_mail)


def test_the_invitation_names_the_game_s_title_and_its_computer_players(svc: Services) -> None:
    """README, "Playing by mail": computer players are called by their names, with their strength;
    the invitation says so, and the title the game was asked for under (its Subject)."""
    (invitation,), _ = write(svc, "ana@players.test", NEW, "new game\nbots: 2 strong, 1 random")
    assert invitation.kind == "invitation"
    text = prose_of(invitation)
    assert "“Friday game”" in text, text
    assert text.count("(computer, strong)") == 2 and text.count("(computer, easy)") == 1, text
    html = " ".join(parsed(invitation).get_body(("html",)).get_content().split())
    assert "Friday game" in html and html.count("(computer, strong)") == 2
