"""Handing mail to a relay that offers PIPELINING (RFC 2920), as Postfix and most relays do.

``SmtpRelaySession`` then sends MAIL, RCPT and DATA in one write and the message in a second:
two round trips a mail.  The relay here is ``LeanSmtpSink``, a real SMTP server on 127.0.0.1
that advertises PIPELINING and can refuse a recipient or a message.  Each test also checks that
the pipelined path was the one taken (smtplib's own ``sendmail`` is made to fail loudly), and
that a failed mail leaves the connection usable for the next.
"""

from __future__ import annotations

import re
import smtplib
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.mail.relay import KeptSmtpConnection, RelayError, SmtpRelay, _quote_periods, _smtp_path

SENDER = "bounces@hearts.test"


def _mail(number: int, body: bytes = b"Play a card.\r\n") -> bytes:
    return (f"From: Hearts <hearts@hearts.test>\r\nTo: p{number}@example.com\r\n"
            f"Subject: mail {number}\r\nMessage-ID: <m{number}@hearts.test>\r\n\r\n").encode() + body


@pytest.fixture
def sink() -> Iterator[LeanSmtpSink]:
    with LeanSmtpSink(refuse_recipients={"nobody@example.com"},
                      refuse_data_from_recipients={"spamtrap@example.com"}) as server:
        yield server


@pytest.fixture(autouse=True)
def no_plain_sendmail(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("smtplib.SMTP.sendmail used: the relay offers PIPELINING")

    monkeypatch.setattr(smtplib.SMTP, "sendmail", refuse)


def relay_for(sink: LeanSmtpSink) -> SmtpRelay:
    return SmtpRelay(host=sink.host, port=sink.port, tls="none", user="", password="", sender=SENDER,
                     local_hostname="worker.hearts.test")


def test_the_mails_of_a_move_go_out_pipelined_byte_for_byte(sink: LeanSmtpSink) -> None:
    # Lines that begin with a dot are stuffed on the wire and unstuffed by the relay; a message
    # without a final line break gets one (as smtplib's own sendmail does).
    tricky = b".A line that starts with a dot\r\n..and two\r\n.\r\nlast line, no break"
    mails = [_mail(1), _mail(2, tricky), _mail(3)]
    with relay_for(sink).session() as session:
        for number, raw in enumerate(mails, start=1):
            session.deliver(raw, recipients=[f"p{number}@example.com"], key=number)
    received = sink.wait_for_messages(3)
    assert [m.rcpt_tos for m in received] == [("p1@example.com",), ("p2@example.com",), ("p3@example.com",)]
    assert {m.mail_from for m in received} == {SENDER}
    assert received[0].raw == mails[0] and received[2].raw == mails[2]
    assert received[1].raw == mails[1] + b"\r\n"


def test_a_refused_recipient_fails_that_mail_only(sink: LeanSmtpSink) -> None:
    kept = KeptSmtpConnection(relay_for(sink))
    try:
        kept.deliver(_mail(1), recipients=["p1@example.com"], key=1)
        with pytest.raises(RelayError) as refused:
            kept.deliver(_mail(2), recipients=["nobody@example.com"], key=2)
        assert refused.value.permanent and refused.value.code == 550
        kept.deliver(_mail(3), recipients=["p3@example.com"], key=3)
    finally:
        kept.close()
    received = sink.wait_for_messages(2)
    assert [m.rcpt_tos for m in received] == [("p1@example.com",), ("p3@example.com",)]


def test_some_recipients_refused_is_reported_after_the_others_got_it(sink: LeanSmtpSink) -> None:
    with relay_for(sink).session() as session:
        with pytest.raises(RelayError) as refused:
            session.deliver(_mail(1), recipients=["p1@example.com", "nobody@example.com"], key=1)
    assert refused.value.permanent and "nobody@example.com" in str(refused.value)
    assert [m.rcpt_tos for m in sink.wait_for_messages(1)] == [("p1@example.com",)]


def test_a_refused_message_is_not_delivered_and_the_next_one_is(sink: LeanSmtpSink) -> None:
    with relay_for(sink).session() as session:
        with pytest.raises(RelayError) as refused:
            session.deliver(_mail(1), recipients=["spamtrap@example.com"], key=1)
        assert refused.value.permanent and refused.value.code == 554
        session.deliver(_mail(2), recipients=["p2@example.com"], key=2)
    assert [m.rcpt_tos for m in sink.wait_for_messages(1)] == [("p2@example.com",)]
    assert len(sink.messages) == 1


_ADDRESS_CHARS = st.sampled_from(list("ab.z09+-_@ <>\"()[],;:\\é") + ["\t"])


@given(st.one_of(st.emails(), st.text(_ADDRESS_CHARS, max_size=24)))
def test_the_pipelined_paths_are_smtplib_s(address: str) -> None:
    """MAIL FROM and RCPT TO name an address exactly as ``sendmail`` does (``quoteaddr``), bare
    addresses without parsing them."""
    assert _smtp_path(address) == smtplib.quoteaddr(address)


@given(st.binary(max_size=64) | st.lists(st.sampled_from([b".", b"..", b"\r\n", b"\n", b"\r", b"a", b"\r\n."]),
                                         max_size=24).map(b"".join))
def test_periods_are_doubled_as_smtplib_doubles_them(raw: bytes) -> None:
    assert _quote_periods(raw) == re.sub(rb"(?m)^\.", b"..", raw)  # smtplib's _quote_periods
