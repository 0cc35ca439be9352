"""Every received mail ends in a recorded outcome after a bounded number of attempts, automatic
moves go on in bounded committed steps, and an unverified address gets at most what
``pbem.services.strangers`` allows.  On SQLite and PostgreSQL, through the real services."""

from __future__ import annotations

import email
import email.policy
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from pbem.db.models import Game, GameStatus, InboundMessage, InboundStatus, Move, OutboundMessage, StrangerAnswer
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services import inbound
from pbem.services.app import Services
from pbem.services.continuation import continue_game, continue_to_rest, due_continuations
from pbem.services.games import SeatSpec, create_game, start_game
from pbem.services.inbound import MAX_ATTEMPTS, apply_inbound, begin_attempt
from pbem.services.intake import store_inbound
from pbem.services.outbox import ATTEMPT_STALE_AFTER, INBOUND_STALE_AFTER, stale_inbound
from pbem.services.turns import AUTOMATIC_MOVES_PER_STEP
from tests.harness.players import Received
from tests.harness.services import DOMAIN, ServicesFactory
from tests.integration.test_services_game import deliver


def mail(sender: str, to: str, body: str, message_id: str) -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: Hearts?\r\nMessage-ID: {message_id}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n").encode()


def stored(svc: Services, raw: bytes, sender: str, recipient: str) -> int:
    with transaction(svc.session_factory) as session:
        (inbound_id,) = store_inbound(session, raw=raw, mail_from=sender, recipients=[recipient], source="inject",
                                      received_at=svc.clock.now())
    return inbound_id


def row(svc: Services, inbound_id: int) -> InboundMessage:
    with transaction(svc.session_factory) as session:
        found = session.get(InboundMessage, inbound_id)
        session.expunge(found)
        return found


def a_new_game_mail(svc: Services, n: int = 0) -> int:
    return stored(svc, mail("alice@a.test", f"new@{DOMAIN}", "new game\nbots: 3\n", f"<new.{n}@a.test>"),
                  "alice@a.test", f"new@{DOMAIN}")


# -- attempts ------------------------------------------------------------------------------------


def test_an_attempt_is_counted_and_committed_before_the_mail_is_processed(services: ServicesFactory) -> None:
    svc = services()
    inbound_id = a_new_game_mail(svc)
    attempt = begin_attempt(svc, inbound_id, svc.clock.now())  # then the process "dies"
    assert attempt is not None and attempt.attempts == 1
    seen = row(svc, inbound_id)
    assert (seen.status, seen.attempts, seen.attempted_at) == (InboundStatus.PENDING, 1, svc.clock.now())
    # Delivered again, it is processed, and that attempt counts too.
    assert apply_inbound(svc, inbound_id).mails
    done = row(svc, inbound_id)
    assert (done.status, done.attempts, done.outcome["code"]) == (InboundStatus.DONE, 2, "GAME_CREATED")


def test_a_mail_whose_every_attempt_died_is_set_aside_as_failed(services: ServicesFactory) -> None:
    svc = services()
    inbound_id = a_new_game_mail(svc)
    for _ in range(MAX_ATTEMPTS):  # killed each time, mid-mail (no exception ever reached pbem)
        assert begin_attempt(svc, inbound_id, svc.clock.now()) is not None
    assert apply_inbound(svc, inbound_id).mails == []
    failed = row(svc, inbound_id)
    assert failed.status == InboundStatus.FAILED
    assert failed.outcome == {"code": "PROCESSING_FAILED", "attempts": MAX_ATTEMPTS, "last_error": "WORKER_LOST"}
    assert stale_inbound(svc, svc.clock.now() + timedelta(days=1)) == []  # never re-queued again
    with transaction(svc.session_factory) as session:
        assert session.scalar(select(func.count()).select_from(Game)) == 0


def verified_alice(svc: Services) -> None:
    """alice asks for a game against three bots and confirms her seat: she is a verified player."""
    (invitation,) = deliver(svc, mail("alice@a.test", f"new@{DOMAIN}", "new game\nbots: 3\n", "<start@a.test>"),
                            "alice@a.test", f"new@{DOMAIN}")
    received = Received.parse(invitation.raw)
    assert deliver(svc, mail("alice@a.test", received.reply_to, "yes", "<yes@a.test>"), "alice@a.test",
                   received.reply_to)


def test_a_mail_that_keeps_raising_is_set_aside_after_its_attempts_and_its_player_told(
        services: ServicesFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = services()
    verified_alice(svc)
    inbound_id = stored(svc, mail("alice@a.test", f"games@{DOMAIN}", "games", "<games@a.test>"),
                        "alice@a.test", f"games@{DOMAIN}")

    def broken(*_args: object) -> None:
        raise LookupError("a defect in a handler")

    monkeypatch.setattr(inbound, "handle", broken)  # fault injection: a handler with a bug
    for attempt in range(1, MAX_ATTEMPTS + 1):
        with pytest.raises(LookupError):
            apply_inbound(svc, inbound_id)
        seen = row(svc, inbound_id)
        if attempt < MAX_ATTEMPTS:
            assert seen.status == InboundStatus.PENDING
            assert seen.outcome == {"code": "ATTEMPT_FAILED", "error": "LookupError", "attempts": attempt}
    assert seen.status == InboundStatus.FAILED
    assert seen.outcome == {"code": "PROCESSING_FAILED", "attempts": MAX_ATTEMPTS, "last_error": "LookupError"}
    assert apply_inbound(svc, inbound_id).mails == []  # a late duplicate task changes nothing
    with transaction(svc.session_factory) as session:
        told = session.scalars(select(OutboundMessage).where(OutboundMessage.inbound_id == inbound_id)).all()
        assert [(m.kind, m.recipient) for m in told] == [("request_rejected", "alice@a.test")]
        assert "could not be processed" in Received.parse(told[0].raw).text


def test_a_new_game_request_set_aside_is_answered_as_new_answers(services: ServicesFactory,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """README, "Starting a game": an answer to a new@ request replies to it, and its reply goes to new@."""
    svc = services()
    verified_alice(svc)
    inbound_id = a_new_game_mail(svc, 7)

    def broken(*_args: object) -> None:
        raise LookupError("a defect in a handler")

    monkeypatch.setattr(inbound, "handle", broken)
    for _ in range(MAX_ATTEMPTS):
        with pytest.raises(LookupError):
            apply_inbound(svc, inbound_id)
    with transaction(svc.session_factory) as session:
        (told,) = session.scalars(select(OutboundMessage).where(OutboundMessage.inbound_id == inbound_id)).all()
        received = Received.parse(told.raw)
        message = email.message_from_bytes(told.raw, policy=email.policy.default)
    assert told.kind == "request_rejected" and received.reply_to == f"new@{DOMAIN}"
    assert message["In-Reply-To"] == "<new.7@a.test>"


def test_the_sweep_requeues_mail_never_attempted_and_attempts_that_were_lost(services: ServicesFactory) -> None:
    svc = services()
    fresh = a_new_game_mail(svc, 1)
    now = svc.clock.now()
    assert stale_inbound(svc, now) == []
    assert stale_inbound(svc, now + INBOUND_STALE_AFTER) == [fresh]
    begin_attempt(svc, fresh, now + INBOUND_STALE_AFTER)  # its task began, then was lost
    assert stale_inbound(svc, now + INBOUND_STALE_AFTER + ATTEMPT_STALE_AFTER / 2) == []
    assert stale_inbound(svc, now + INBOUND_STALE_AFTER + ATTEMPT_STALE_AFTER) == [fresh]


# -- automatic moves in bounded steps ----------------------------------------------------------------


def computers_only(svc: Services) -> int:
    """A game of four computer players, started: its turn stops at the bound of one step."""
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=Rules.make("standard", target=30),
                           seats=[SeatSpec(bot="heuristic")] * 4, seed="steps")
        start_game(session, svc, game)
        return game.id


def moves_of(svc: Services, game_id: int) -> int:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game_id))


def test_a_game_of_computers_goes_on_in_bounded_committed_steps_to_its_end(services: ServicesFactory) -> None:
    svc = services()
    game_id = computers_only(svc)
    assert moves_of(svc, game_id) == 1 + AUTOMATIC_MOVES_PER_STEP  # the deal, then one step
    marked = due_continuations(svc, svc.clock.now(), older_than=timedelta(0))
    assert [g for g, _mark in marked] == [game_id]
    counts = [moves_of(svc, game_id)]
    applied = continue_game(svc, game_id, marked[0][1])
    counts.append(moves_of(svc, game_id))
    assert counts[1] - counts[0] == AUTOMATIC_MOVES_PER_STEP
    # A step queued for a mark the game no longer carries (a duplicate) does nothing.
    assert continue_game(svc, game_id, marked[0][1]).continue_games == []
    assert moves_of(svc, game_id) == counts[1]
    continue_to_rest(svc, applied.continue_games)
    with transaction(svc.session_factory) as session:
        game = session.get(Game, game_id)
        assert game.status == GameStatus.FINISHED and game.continue_at is None
    assert due_continuations(svc, svc.clock.now() + timedelta(days=1), older_than=timedelta(0)) == []


def test_a_lost_step_is_found_by_the_sweep_only_once_it_is_stale(services: ServicesFactory) -> None:
    svc = services()
    game_id = computers_only(svc)
    now = svc.clock.now()
    assert due_continuations(svc, now) == []  # its follow-up task is presumably on its way
    svc.clock.advance(seconds=60)
    assert [g for g, _ in due_continuations(svc, svc.clock.now())] == [game_id]


# -- what a stranger may receive ----------------------------------------------------------------------


def test_an_unverified_sender_gets_one_answer_per_new_game_mail_within_the_daily_cap(
        services: ServicesFactory) -> None:
    svc = services(PBEM_INVITES_PER_DAY="2")
    to = f"new@{DOMAIN}"
    answers = [deliver(svc, mail("eve@e.test", to, "new game\nbots: three\n", f"<bad.{n}@e.test>"), "eve@e.test", to)
               for n in range(3)]
    assert [[(m.kind, m.recipient) for m in sent] for sent in answers] == [
        [("request_rejected", "eve@e.test")], [("request_rejected", "eve@e.test")], []]
    assert "“three” as the value of “bots”" in Received.parse(answers[0][0].raw).text  # what was wrong
    with transaction(svc.session_factory) as session:
        outcomes = [r.outcome for r in session.scalars(select(InboundMessage).order_by(InboundMessage.id))]
        assert [o["code"] for o in outcomes] == ["BAD_OPTION"] * 3
        assert [o["answered"] for o in outcomes] == [True, True, False]
        assert session.scalar(select(func.count()).select_from(StrangerAnswer)) == 2
    # The invitation to a stranger's own seat is such an answer too: past the cap, nothing at all.
    refused = deliver(svc, mail("eve@e.test", to, "new game\nbots: 3\n", "<ok@e.test>"), "eve@e.test", to)
    assert refused == []
    with transaction(svc.session_factory) as session:
        assert session.scalar(select(func.count()).select_from(Game)) == 0


def test_answers_to_all_strangers_together_stop_at_the_hourly_cap(services: ServicesFactory) -> None:
    svc = services(PBEM_STRANGER_ANSWERS_PER_HOUR="3")
    to = f"new@{DOMAIN}"
    sent = [deliver(svc, mail(f"s{n}@s.test", to, "new game\nbots: 3\n", f"<g.{n}@s.test>"), f"s{n}@s.test", to)
            for n in range(5)]
    assert [len(mails) for mails in sent] == [1, 1, 1, 0, 0]
    assert all(m.kind == "invitation" for mails in sent for m in mails)
    svc.clock.advance(seconds=3601)  # an hour later the cap has room again
    assert len(deliver(svc, mail("s9@s.test", to, "new game\nbots: 3\n", "<g.9@s.test>"), "s9@s.test", to)) == 1


def test_a_stranger_writing_to_other_addresses_or_auto_replying_gets_nothing(services: ServicesFactory) -> None:
    svc = services()
    auto = (b"From: eve@e.test\r\nTo: new@hearts.test\r\nSubject: Out of office\r\nAuto-Submitted: auto-replied\r\n"
            b"Message-ID: <auto@e.test>\r\n\r\nI am away.\r\n")
    assert deliver(svc, auto, "eve@e.test", f"new@{DOMAIN}") == []
    for local in ("help", "games", "hearts+1.0.0.abc"):
        assert deliver(svc, mail("eve@e.test", f"{local}@{DOMAIN}", "help", f"<{local}@e.test>"), "eve@e.test",
                       f"{local}@{DOMAIN}") == []
    with transaction(svc.session_factory) as session:
        assert session.scalar(select(func.count()).select_from(OutboundMessage)) == 0


def test_what_the_reader_had_to_degrade_is_in_the_outcome(services: ServicesFactory) -> None:
    svc = services()
    raw = (b"From: =?utf-8?q?Bob=0D=0ABcc=3A_victim=40elsewhere=2Etest?= <bob@b.test>\r\n"
           b"To: new@hearts.test\r\nSubject: Hearts?\r\nMessage-ID: <bcc@b.test>\r\n\r\nnew game\r\nbots: 3\r\n")
    (invitation,) = deliver(svc, raw, "bob@b.test", f"new@{DOMAIN}")
    header_lines = invitation.raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    assert not [line for line in header_lines if line.lower().startswith(b"bcc:")]  # no header injected
    with transaction(svc.session_factory) as session:
        outcome = session.scalars(select(InboundMessage.outcome)).one()
    assert outcome["code"] == "GAME_CREATED" and "FROM_NAME_CLEANED" in outcome["reading"]


def test_a_new_game_naming_an_address_no_mail_can_reach_is_refused_with_it(services: ServicesFactory) -> None:
    svc = services()
    verified_alice(svc)
    to = f"new@{DOMAIN}"
    body = "new game\nplayers: bób@exämple.test\nbots: 2\n"
    (answer,) = deliver(svc, mail("alice@a.test", to, body, "<idn@a.test>"), "alice@a.test", to)
    assert answer.kind == "request_rejected" and "bób@exämple.test" in Received.parse(answer.raw).text
    # A domain that IDNA can encode is fine: the envelope carries its ASCII form.
    sent = deliver(svc, mail("alice@a.test", to, "new game\nplayers: bob@exämple.test\nbots: 2\n", "<idn2@a.test>"),
                   "alice@a.test", to)
    assert "bob@xn--exmple-cua.test" in [m.recipient for m in sent]
