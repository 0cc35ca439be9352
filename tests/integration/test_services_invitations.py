"""Starting a game by mail, invitations, bounces and the abuse limits, through the services."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import Game, GameStatus, InboundMessage, OutboundMessage, Player, SeatStatus
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.games import SeatSpec, create_game, start_game
from tests.harness.players import Received
from tests.integration.test_services_game import deliver, inbound_outcome

DOMAIN = "hearts.test"


@pytest.fixture
def svc(sqlite_migrated_url: str, tmp_path) -> Services:
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": sqlite_migrated_url,
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret-key",
        "PBEM_INVITES_PER_DAY": "4",
        "PBEM_ERROR_REPLIES_PER_DAY": "2",
    })
    services = Services.from_settings(settings, clock=ManualClock())
    yield services
    services.close()


def mail(sender: str, to: str, body: str, subject: str = "Hearts?", extra: str = "") -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n{extra}"
            "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n").encode()


def reply_to(out: OutboundMessage, sender: str, body: str) -> tuple[bytes, str]:
    received = Received.parse(out.raw)
    return mail(sender, received.reply_to, body, "Re: " + received.subject), received.reply_to


def bob_invited(svc: Services) -> OutboundMessage:
    """Alice (new here) asks for a game with bob and two bots and confirms it: bob's invitation."""
    first = deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", "new game\nplayers: bob@b.test\nbots: 2\n"),
                    "alice@a.test", f"new@{DOMAIN}")
    raw, to = reply_to(first[0], "alice@a.test", "yes")
    return next(m for m in deliver(svc, raw, "alice@a.test", to) if m.recipient == "bob@b.test")


def test_new_game_by_mail_confirms_the_sender_first_then_invites_and_starts(svc: Services) -> None:
    body = "new game\nplayers: bob@b.test, carol@c.test\nbots: 1\nrules: omnibus\ntarget: 50\n"
    first = deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", body), "alice@a.test", f"new@{DOMAIN}")
    # An unknown sender gets only an invitation to confirm their own seat; nobody else is mailed yet.
    assert [(m.kind, m.recipient) for m in first] == [("invitation", "alice@a.test")]
    raw, to = reply_to(first[0], "alice@a.test", "yes")
    invites = deliver(svc, raw, "alice@a.test", to)
    assert sorted(m.recipient for m in invites if m.kind == "invitation") == ["bob@b.test", "carol@c.test"]
    bob = next(m for m in invites if m.recipient == "bob@b.test")
    carol = next(m for m in invites if m.recipient == "carol@c.test")
    raw, to = reply_to(bob, "bob@b.test", "sim, aceito")
    after_bob = deliver(svc, raw, "bob@b.test", to)
    assert [(m.kind, m.recipient) for m in after_bob] == [("invitation_accepted", "alice@a.test")]
    raw, to = reply_to(carol, "carol@c.test", "ok")
    started = deliver(svc, raw, "carol@c.test", to)
    kinds = Counter((m.kind, m.recipient) for m in started)
    for who in ("alice@a.test", "bob@b.test", "carol@c.test"):
        assert kinds[("game_started", who)] == 0  # the first decision mail says the game began
        assert kinds[("your_turn", who)] == 1
    with transaction(svc.session_factory) as session:
        game = session.scalars(select(Game)).one()
        assert game.status == GameStatus.ACTIVE
        assert game.rules["preset"] == "omnibus" and game.rules["target"] == 50
        assert [s.status for s in sorted(game.seats, key=lambda s: s.seat)] == [
            SeatStatus.JOINED, SeatStatus.JOINED, SeatStatus.JOINED, SeatStatus.BOT]


def test_invitation_reply_from_another_address_is_refused(svc: Services) -> None:
    first = deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", "new game\nplayers: bob@b.test\nbots: 2\n"),
                    "alice@a.test", f"new@{DOMAIN}")
    raw, to = reply_to(first[0], "mallory@m.test", "yes")
    assert deliver(svc, raw, "mallory@m.test", to) == []
    assert inbound_outcome(svc)["code"] == "FORGED_SENDER"


def test_invitations_are_rate_limited_per_sender(svc: Services) -> None:
    # Alice becomes a verified player with a first game (one invitee), then asks for too many.
    bob_invited(svc)
    many = "new game\nplayers: c1@x.test, c2@x.test, c3@x.test\n"
    answers = deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", many, extra="Message-ID: <m2@a.test>\r\n"),
                      "alice@a.test", f"new@{DOMAIN}")
    assert inbound_outcome(svc)["code"] == "RATE_LIMITED"
    assert [(m.kind, m.recipient) for m in answers] == [("request_rejected", "alice@a.test")]
    with transaction(svc.session_factory) as session:
        assert not session.scalars(select(Player).where(Player.address == "c1@x.test")).first()


def test_unknown_sender_to_other_addresses_is_never_answered(svc: Services) -> None:
    for local in ("help", "hearts", "postmaster"):
        assert deliver(svc, mail("stranger@s.test", f"{local}@{DOMAIN}", "help"), "stranger@s.test",
                       f"{local}@{DOMAIN}") == []
    with transaction(svc.session_factory) as session:
        assert session.scalars(select(OutboundMessage)).first() is None


def test_error_replies_are_capped_per_day(svc: Services) -> None:
    bob_invited(svc)  # alice is verified; bob is invited
    sent = []
    for k in range(4):
        sent.append(deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", "gibberish words here",
                                      extra=f"Message-ID: <junk{k}@a.test>\r\n"), "alice@a.test", f"new@{DOMAIN}"))
    assert [len(s) for s in sent] == [1, 1, 0, 0]  # PBEM_ERROR_REPLIES_PER_DAY=2
    svc.clock.advance(days=1, minutes=1)
    assert len(deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", "gibberish again",
                                 extra="Message-ID: <junk9@a.test>\r\n"), "alice@a.test", f"new@{DOMAIN}")) == 1


def test_a_bounce_is_recorded_and_the_creator_told_never_answered(svc: Services) -> None:
    bob_invited(svc)
    dsn = (
        "From: MAILER-DAEMON@mx.b.test\r\nTo: bounces@hearts.test\r\nSubject: Undelivered Mail Returned to Sender\r\n"
        "MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=XX\r\n\r\n"
        "--XX\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n"
        "--XX\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.b.test\r\n\r\n"
        "Final-Recipient: rfc822; bob@b.test\r\nAction: failed\r\nStatus: 5.1.1\r\n"
        "Diagnostic-Code: smtp; 550 5.1.1 no such user\r\n--XX--\r\n"
    ).encode()
    answers = deliver(svc, dsn, "", f"bounces@{DOMAIN}")
    assert [(m.kind, m.recipient) for m in answers] == [("bounce_notice", "alice@a.test")]
    assert inbound_outcome(svc)["code"] == "BOUNCE"
    with transaction(svc.session_factory) as session:
        bob = session.scalars(select(Player).where(Player.address == "bob@b.test")).one()
        assert bob.bounce_count == 1
        assert session.scalars(select(InboundMessage)).all()[-1].status == "ignored"


def dsn_for(address: str, tag: str) -> bytes:
    return (
        "From: MAILER-DAEMON@mx.b.test\r\nTo: bounces@hearts.test\r\nSubject: Undelivered Mail Returned to Sender\r\n"
        f"Message-ID: <dsn-{tag}@mx.b.test>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=XX\r\n\r\n"
        "--XX\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n"
        "--XX\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.b.test\r\n\r\n"
        f"Final-Recipient: rfc822; {address}\r\nAction: failed\r\nStatus: 5.2.2\r\n"
        "Diagnostic-Code: smtp; 552 5.2.2 mailbox full\r\n--XX--\r\n"
    ).encode()


def test_a_bounce_in_a_game_under_way_tells_its_creator(svc: Services) -> None:
    bob = bob_invited(svc)
    raw, to = reply_to(bob, "bob@b.test", "yes")
    assert any(m.kind in ("game_started", "your_turn") for m in deliver(svc, raw, "bob@b.test", to))
    answers = deliver(svc, dsn_for("bob@b.test", "1"), "", f"bounces@{DOMAIN}")
    assert [(m.kind, m.recipient) for m in answers] == [("bounce_notice", "alice@a.test")]
    assert "mailbox full" in Received.parse(answers[0].raw).text
    # The same address bouncing again that day is counted, not told twice.
    assert deliver(svc, dsn_for("bob@b.test", "2"), "", f"bounces@{DOMAIN}") == []
    with transaction(svc.session_factory) as session:
        assert session.scalars(select(Player).where(Player.address == "bob@b.test")).one().bounce_count == 2


def test_a_bounce_in_a_game_made_on_the_command_line_is_logged(svc: Services, caplog: pytest.LogCaptureFixture) -> None:
    rules = Rules.make("standard")
    seats = [SeatSpec(address="dan@d.test"), SeatSpec(bot="random"), SeatSpec(bot="random"), SeatSpec(bot="random")]
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=rules, seats=seats, seed="bounce")
        start_game(session, svc, game)
        game_id = game.id
    with caplog.at_level("WARNING", logger="pbem.worker"):
        assert deliver(svc, dsn_for("dan@d.test", "3"), "", f"bounces@{DOMAIN}") == []  # nobody to mail
    assert f"game {game_id}: mail to dan@d.test bounced (smtp; 552 5.2.2 mailbox full)" in caplog.text


@pytest.mark.parametrize("answer", ["no, thanks - busy week", "Sorry, I can't", "nope", "Não posso, desculpa",
                                    "Nu pot, îmi pare rău"])
def test_a_no_in_a_sentence_declines_the_invitation(svc: Services, answer: str) -> None:
    bob = bob_invited(svc)
    raw, to = reply_to(bob, "bob@b.test", answer)
    deliver(svc, raw, "bob@b.test", to)
    assert inbound_outcome(svc)["code"] == "INVITATION_DECLINED"


def test_an_unclear_answer_to_an_invitation_is_asked_again_not_guessed(svc: Services) -> None:
    bob = bob_invited(svc)
    raw, to = reply_to(bob, "bob@b.test", "hmm, let me think about it")
    answers = deliver(svc, raw, "bob@b.test", to)
    assert inbound_outcome(svc)["code"] == "INVITATION_UNCLEAR"
    assert [(m.kind, m.recipient) for m in answers] == [("request_rejected", "bob@b.test")]
    assert Received.parse(answers[0].raw).reply_to == to  # the answer goes back to the invitation
    with transaction(svc.session_factory) as session:
        assert session.scalars(select(Game)).one().status == GameStatus.INVITING
