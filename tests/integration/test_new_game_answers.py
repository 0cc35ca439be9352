"""A new-game mail that cannot be used is answered with what was wrong and what to write, also to an
address no player has verified, within what README's "What a stranger may receive" allows: one
answer per mail to ``new@``, ``PBEM_INVITES_PER_DAY`` to one address, ``PBEM_STRANGER_ANSWERS_PER_HOUR``
to all of them, and never anything for an auto-reply or a bounce.

Over the real pipeline: the mails go over SMTP to ``pbem smtp``, a Celery worker on Redis handles them
on PostgreSQL, and the answers are read where the relay delivers them (the SMTP sink).
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from tests.e2e.pipeline import DOMAIN, Pipeline, redis_db
from tests.harness.players import Received
from tests.harness.waiting import wait_for

pytestmark = pytest.mark.postgres

NEW = f"new@{DOMAIN}"
REFUSAL_CODES = ("BAD_RULES", "UNKNOWN_PRESET", "NO_PLAYERS", "UNKNOWN_OPTION", "reason:")


def mail(sender: str, body: str, tag: str, subject: str = "Hearts", extra: str = "") -> bytes:
    return (f"From: {sender.split('@')[0].title()} <{sender}>\r\nTo: {NEW}\r\nSubject: {subject}\r\n"
            f"Message-ID: <{tag}@players.test>\r\nDate: Tue, 01 Dec 2026 22:00:00 +0000\r\n{extra}"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n").encode()


AUTO_REPLY = (f"From: Eve <eve@players.test>\r\nTo: {NEW}\r\nSubject: Out of office: Hearts\r\n"
              "Auto-Submitted: auto-replied\r\nMessage-ID: <ooo@players.test>\r\n"
              "Content-Type: text/plain; charset=utf-8\r\n\r\nI am away until Monday.\r\n").encode()
BOUNCE = (
    f"From: MAILER-DAEMON@mx.players.test\r\nTo: {NEW}\r\nSubject: Undelivered Mail Returned to Sender\r\n"
    "Message-ID: <dsn-1@mx.players.test>\r\n"
    "MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=XX\r\n\r\n"
    "--XX\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n"
    "--XX\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.players.test\r\n\r\n"
    "Final-Recipient: rfc822; nobody@players.test\r\nAction: failed\r\nStatus: 5.1.1\r\n"
    "Diagnostic-Code: smtp; 550 5.1.1 no such user\r\n--XX--\r\n"
).encode()


class Run:
    """A pipeline, and waiting until everything sent to it is handled and every answer delivered."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.sent = 0

    def send(self, sender: str, raw: bytes) -> None:
        self.pipeline.send(sender, NEW, raw)
        self.sent += 1

    def settled(self) -> bool:
        with self.pipeline.session_factory() as session:
            statuses = list(session.scalars(select(InboundMessage.status)))
            if len(statuses) < self.sent or any(s in (InboundStatus.PENDING, InboundStatus.PROCESSING)
                                                for s in statuses):
                return False
            unsent = session.scalar(select(func.count()).select_from(OutboundMessage)
                                    .where(OutboundMessage.status != OutboundStatus.SENT))
            written = session.scalar(select(func.count()).select_from(OutboundMessage))
        return unsent == 0 and len(self.pipeline.sink.messages) >= written

    def wait(self) -> None:
        wait_for(self.settled, timeout=90, interval=0.05, message="every mail handled and its answers delivered")

    def to(self, address: str) -> list[Received]:
        return [Received.parse(m.raw) for m in self.pipeline.sink.messages if address in m.rcpt_tos]

    def outcomes(self) -> dict[str, dict]:
        with self.pipeline.session_factory() as session:
            rows = session.execute(select(InboundMessage.message_key, InboundMessage.outcome)).all()
        return {key.strip("<>"): outcome for key, outcome in rows}


@pytest.fixture
def run(pg_migrated_url, redis_url, smtp_sink, tmp_path):
    smtp_sink.clear()
    env = {"PBEM_INVITES_PER_DAY": "2", "PBEM_STRANGER_ANSWERS_PER_HOUR": "5"}
    with Pipeline(pg_migrated_url, redis_db(redis_url, 6), smtp_sink, tmp_path, extra_env=env) as pipeline:
        yield Run(pipeline)


def text_of(received: Received) -> str:
    """The text part with its lines joined (the text is wrapped to 72 columns)."""
    return " ".join(received.text.split())


def shows_example(received: Received, *lines: str) -> bool:
    """Whether the text part shows ``lines`` as an indented block, one after the other."""
    text = [line.rstrip() for line in received.text.splitlines()]
    wanted = [f"    {line}" for line in lines]
    return any(text[k:k + len(wanted)] == wanted for k in range(len(text)))


def test_a_stranger_s_unusable_new_game_mail_is_answered_with_what_to_write(run: Run) -> None:
    run.send("ana@players.test", mail("ana@players.test", "new game\nrules: omnibsu\nbots: 3", "ana1"))
    run.send("bob@players.test", mail("bob@players.test", "Hi!\n\nI would like to play against the computer "
                                      "please.\n\nThanks,\nBob", "bob1", subject="Hearts?"))
    run.send("cid@players.test", mail("cid@players.test", "new game\nbots: 3\ntaget: 50", "cid1"))
    run.wait()

    (ana,) = run.to("ana@players.test")
    text = text_of(ana)
    assert ana.kind == "request_rejected"
    assert "There is no rule set called “omnibsu”. Did you mean “omnibus”?" in text
    assert "black-maria" in text and "standard" in text  # the rule sets there are
    assert f"this is all you need to write to {NEW}:" in text and shows_example(ana, "new game", "bots: 3")
    (bob,) = run.to("bob@players.test")
    text = text_of(bob)
    assert "no other players and no computer players" in text
    assert f"To play against three computer players, this is all you need to write to {NEW}:" in text
    assert shows_example(bob, "new game", "bots: 3")  # the minimal mail of a game against the computer
    (cid,) = run.to("cid@players.test")
    assert "There is no option called “taget”. Did you mean “target”?" in text_of(cid)
    for received in (ana, bob, cid):
        assert not any(code in received.text for code in REFUSAL_CODES), received.text  # no raw code
    # The same sender gets its invitation when the mail is right, as before.
    run.send("ana@players.test", mail("ana@players.test", "new game\nrules: omnibus\nbots: 3", "ana2"))
    run.wait()
    assert [r.kind for r in run.to("ana@players.test")] == ["request_rejected", "invitation"]


def test_auto_replies_and_bounces_to_new_get_nothing_and_the_caps_hold(run: Run) -> None:
    run.send("eve@players.test", AUTO_REPLY)
    run.send("", BOUNCE)
    for n in range(3):  # PBEM_INVITES_PER_DAY=2: the third bad mail from one address is not answered
        run.send("eve@players.test", mail("eve@players.test", "new game\nrules: omnibsu\nbots: 3", f"eve{n}"))
    run.wait()
    answers = run.to("eve@players.test")
    assert [r.kind for r in answers] == ["request_rejected"] * 2
    assert all("Did you mean “omnibus”?" in text_of(r) for r in answers)
    assert not [m for m in run.pipeline.sink.messages if "nobody@players.test" in m.rcpt_tos
                or "mailer-daemon@mx.players.test" in [r.lower() for r in m.rcpt_tos]]
    outcomes = run.outcomes()
    assert outcomes["ooo@players.test"]["code"] == "AUTO_REPLY"
    assert outcomes["dsn-1@mx.players.test"]["code"] == "BOUNCE"
    # Two workers handle them at once: which two are answered is theirs to decide, never all three.
    assert sorted(outcomes[f"eve{n}@players.test"]["answered"] for n in range(3)) == [False, True, True]
    # PBEM_STRANGER_ANSWERS_PER_HOUR=5 for all unverified addresses together: two were eve's.
    for n in range(4):
        run.send(f"s{n}@players.test", mail(f"s{n}@players.test", "I would like to play please", f"s{n}"))
    run.wait()
    assert sorted(len(run.to(f"s{n}@players.test")) for n in range(4)) == [0, 1, 1, 1]
    assert len(run.pipeline.sink.messages) == 5
