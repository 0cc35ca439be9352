"""The load generator of ``pbem bench e2e`` (``pbem.bench.loadgen``): what the players read
from pbem's mails, the replies they write, and the SMTP client the senders use."""

from __future__ import annotations

import random
from email import message_from_bytes, policy

import pytest

from pbem.bench.loadgen import Decision, Players, Senders, SmtpClient, SmtpReplyError, _headers
from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.devservers.waiting import wait_for
from pbem.devservers.smtp_sink import CapturedMessage, SmtpSink

YOUR_TURN = (
    b"From: Hearts <hearts@hearts.test>\r\n"
    b"To: heavy-5 <heavy-5@load.test>\r\n"
    b"Reply-To: Hearts\r\n <hearts+2.1.0.agzwwgqk25mtu2rf@hearts.test>\r\n"
    b"Subject: [Hearts #2] Bench\r\n heavy 1\r\n"
    b"Message-Id: <16f3.13.9ad4@hearts.test>\r\n"
    b"X-Hearts-Kind: your_turn\r\n"
    b"X-Hearts-Game: 2\r\n"
    b"x-hearts-hand: JC 2D 9D JD 3H 4H 9H QH 5S 6S 7S JS QS\r\n"
    b"X-Hearts-Legal: 2D 9D JD\r\n"
    b"X-Hearts-Decision: play\r\n"
    b"MIME-Version: 1.0\r\n"
    b"Content-Type: multipart/alternative;\r\n boundary=\"=_hearts_5544\"\r\n"
    b"\r\n"
    b"--=_hearts_5544\r\n"
    b"Content-Type: text/plain; charset=\"utf-8\"\r\n"
    b"Content-Transfer-Encoding: quoted-printable\r\n"
    b"\r\n"
    b"Hello heavy-5,\r\n\r\nYour hand:\r\n  =E2=99=A0  5  6\r\n"
    b".a line with a leading dot, and a long one: " + b"x" * 70 + b"=\r\n" + b"y" * 30 + b"\r\n"
    b"\r\n--=_hearts_5544\r\n"
    b"Content-Type: text/html; charset=\"utf-8\"\r\n\r\n<p>Hello</p>\r\n"
    b"--=_hearts_5544--\r\n"
)


def test_headers_are_read_case_insensitively_and_unfolded() -> None:
    headers = _headers(YOUR_TURN)
    assert headers == {
        b"reply-to": "Hearts <hearts+2.1.0.agzwwgqk25mtu2rf@hearts.test>",
        b"subject": "[Hearts #2] Bench heavy 1",
        b"message-id": "<16f3.13.9ad4@hearts.test>",
        b"x-hearts-kind": "your_turn",
        b"x-hearts-game": "2",
        b"x-hearts-hand": "JC 2D 9D JD 3H 4H 9H QH 5S 6S 7S JS QS",
        b"x-hearts-legal": "2D 9D JD",
        b"x-hearts-decision": "play",
    }
    # Only the header block: a body line that looks like a header is not one.
    assert _headers(b"Subject: a\r\n\r\nX-Hearts-Kind: your_turn\r\n") == {b"subject": "a"}
    assert _headers(b"X-Hearts-Kind: trick_done") == {b"x-hearts-kind": "trick_done"}  # no body


def test_a_your_turn_mail_becomes_a_decision_and_others_are_counted() -> None:
    players = Players(domain="load.test")
    players.on_message(CapturedMessage("bounces@hearts.test", ("Heavy-5@load.test",), YOUR_TURN, 12.5))
    other = b"Message-ID: <other@hearts.test>\r\nX-Hearts-Kind: card_played\r\n\r\nbody\r\n"
    players.on_message(CapturedMessage("bounces@hearts.test", ("heavy-6@load.test",), other, 13.0))
    assert dict(players.kinds) == {"your_turn": 1, "card_played": 1}
    assert players.arrival("<16f3.13.9ad4@hearts.test>") == 12.5
    assert players.arrival("<other@hearts.test>") == 13.0
    assert players.quiet_since() == 13.0
    assert players.waiting("heavy") == 1
    decision = players.take("heavy")
    assert decision is not None and players.take("heavy") is None
    assert decision.player == "heavy-5@load.test"
    assert decision.reply_to == "hearts+2.1.0.agzwwgqk25mtu2rf@hearts.test"
    assert (decision.decision, decision.legal) == ("play", ("2D", "9D", "JD"))
    assert len(decision.hand) == 13 and decision.subject == "[Hearts #2] Bench heavy 1"
    assert decision.quote.startswith("Hello heavy-5,\r\n\r\nYour hand:\r\n  ♠  5  6\r\n")
    assert "x" * 70 + "y" * 30 in decision.quote  # the soft line break is decoded
    assert decision.arrived == 12.5


def test_the_reply_is_a_person_s_reply() -> None:
    players = Players(domain="load.test")
    players.on_message(CapturedMessage("b@hearts.test", ("heavy-5@load.test",), YOUR_TURN, 1.0))
    decision = players.take("heavy")
    assert isinstance(decision, Decision)
    choice = decision.choose(random.Random(3))
    assert choice in decision.legal
    raw = decision.reply(choice, "<reply.1@load.test>")
    assert b"\n" not in raw.replace(b"\r\n", b"")  # CRLF lines only
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    mail = message_from_bytes(raw, policy=policy.default)
    assert mail["From"] == "heavy-5@load.test"
    assert mail["To"] == "hearts+2.1.0.agzwwgqk25mtu2rf@hearts.test"
    assert mail["Subject"] == "Re: [Hearts #2] Bench heavy 1"
    assert mail["In-Reply-To"] == mail["References"] == "<16f3.13.9ad4@hearts.test>"
    body = mail.get_content()
    assert body.splitlines()[0] == choice  # the choice on top
    assert "> Hello heavy-5," in body and ">   ♠  5  6" in body  # the original quoted below
    assert "> .a line with a leading dot" in body


@pytest.fixture(params=["lean", "aiosmtpd"])
def front(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A stand-in for the SMTP front: the lean sink, or aiosmtpd as the real front is."""
    sink_class = LeanSmtpSink if request.param == "lean" else SmtpSink
    with sink_class() as sink:
        yield sink


def test_smtp_client_sends_on_one_connection(front: LeanSmtpSink) -> None:
    client = SmtpClient(front.host, front.port, timeout=10)
    assert b"SIZE" in client.extensions and b"8BITMIME" in client.extensions
    bodies = [b"Subject: one\r\n\r\nQS\r\n", b".\r\n..two\r\n.three\r\n", b"no final CRLF", b"",
              "Subject: çé\r\n\r\ndamă de pică\r\n".encode()]
    for k, body in enumerate(bodies):
        client.send(f"heavy-{k}@load.test", "hearts+1.0.0.x@hearts.test", body)
    client.send("joão@load.test", "hearts+1.0.0.x@hearts.test", b"utf-8 address\r\n")  # with SMTPUTF8
    client.quit()
    messages = front.wait_for_messages(len(bodies) + 1)
    assert messages.pop().mail_from == "joão@load.test"
    assert [m.mail_from for m in messages] == [f"heavy-{k}@load.test" for k in range(len(bodies))]
    assert {m.rcpt_tos for m in messages} == {("hearts+1.0.0.x@hearts.test",)}
    assert [m.raw for m in messages] == [
        b"Subject: one\r\n\r\nQS\r\n", b".\r\n..two\r\n.three\r\n", b"no final CRLF\r\n", b"\r\n",
        "Subject: çé\r\n\r\ndamă de pică\r\n".encode()]


def test_smtp_client_refusals_leave_the_connection_usable() -> None:
    with LeanSmtpSink(refuse_recipients=["gone@hearts.test"], refuse_data_from_recipients=["trap@hearts.test"],
                      max_size=1000) as sink:
        client = SmtpClient(sink.host, sink.port, timeout=10)
        with pytest.raises(SmtpReplyError, match="RCPT TO: 550 5.1.1 No such user") as refused:
            client.send("a@load.test", "gone@hearts.test", b"x\r\n")
        assert refused.value.code == 550
        with pytest.raises(SmtpReplyError, match="MAIL FROM: 552"):  # SIZE is given
            client.send("a@load.test", "ok@hearts.test", b"x" * 900 + b"\r\n" + b"y" * 200 + b"\r\n")
        with pytest.raises(SmtpReplyError, match="end of data: 554"):
            client.send("a@load.test", "trap@hearts.test", b"x\r\n")
        client.send("a@load.test", "ok@hearts.test", b"fine\r\n")
        client.quit()
        assert [(m.rcpt_tos, m.raw) for m in sink.messages] == [(("ok@hearts.test",), b"fine\r\n")]


def test_senders_record_acceptance_refusal_and_reconnect() -> None:
    with LeanSmtpSink(refuse_recipients=["gone@hearts.test"]) as sink:
        senders = Senders(sink.host, sink.port, threads=1, timeout=10).start()
        try:
            assert senders.offer("a@load.test", "ok@hearts.test", "<m1@load.test>", b"one\r\n", "heavy")
            assert senders.offer("a@load.test", "gone@hearts.test", "<m2@load.test>", b"two\r\n", "heavy")
            wait_for(lambda: len(senders.taken()) == 2, timeout=10, interval=0.01)
            # The front drops the connection: the next reply goes on a fresh one.
            assert sink._loop is not None
            sink._loop.call_soon_threadsafe(lambda: [s.transport.abort() for s in list(sink._sessions)
                                                     if s.transport is not None])
            wait_for(lambda: not sink._sessions, timeout=10, interval=0.01)
            assert senders.offer("a@load.test", "ok@hearts.test", "<m3@load.test>", b"three\r\n", "light")
        finally:
            senders.stop()
        results = {r.message_id: r for r in senders.taken()}
    assert results["<m1@load.test>"].accepted is not None and results["<m1@load.test>"].error == ""
    assert results["<m2@load.test>"].accepted is None and "550" in results["<m2@load.test>"].error
    assert results["<m3@load.test>"].accepted is not None and results["<m3@load.test>"].group == "light"
    assert [m.raw for m in sink.messages] == [b"one\r\n", b"three\r\n"]
