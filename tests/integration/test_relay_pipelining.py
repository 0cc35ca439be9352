"""Handing mail to a relay that offers PIPELINING (RFC 2920), as Postfix and most relays do.

``SmtpRelaySession`` then sends MAIL, RCPT and DATA in one write and the message in a second,
and in a run of mails (``deliver_many``) the next mail's MAIL, RCPT and DATA go in the write of
the message before it: n mails in n + 1 round trips.  The relay here is ``LeanSmtpSink``, a
real SMTP server on 127.0.0.1 that advertises PIPELINING and can refuse a recipient or a message.  Each test also checks that
the pipelined path was the one taken (smtplib's own ``sendmail`` is made to fail loudly), and
that a failed mail leaves the connection usable for the next.
"""

from __future__ import annotations

import re
import smtplib
import socket
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.mail.relay import (
    KeptSmtpConnection,
    OutgoingMail,
    RelayError,
    SmtpRelay,
    SmtpRelaySession,
    _quote_periods,
    _smtp_path,
    deliver_each,
)

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


def _run(numbers: list[int], recipient: str = "p{}@example.com") -> list[OutgoingMail]:
    return [(_mail(n), [recipient.format(n)], n) for n in numbers]


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one for each write the relay's clients make."""
    writes: list[int] = []
    send = smtplib.SMTP.send

    def counted(self: smtplib.SMTP, data: bytes | str) -> None:
        writes.append(len(data))
        send(self, data)

    monkeypatch.setattr(smtplib.SMTP, "send", counted)
    return writes


def _count_connections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    opened: list[int] = []
    open_ = SmtpRelay._open

    def counted(self: SmtpRelay) -> smtplib.SMTP:
        opened.append(1)
        return open_(self)

    monkeypatch.setattr(SmtpRelay, "_open", counted)
    return opened


def test_a_run_of_mails_goes_out_in_one_write_more_than_mails(sink: LeanSmtpSink,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Four mails, as a move with every player on "every card" writes: 5 round trips, not 8.
    with relay_for(sink).session() as session:
        session.deliver(_mail(0), recipients=["p0@example.com"], key=0)  # connected, EHLO done
        writes = _count_writes(monkeypatch)
        assert session.deliver_many(_run([1, 2, 3, 4])) == {}
        assert len(writes) == 5
    received = sink.wait_for_messages(5)
    assert [m.raw for m in received] == [_mail(n) for n in range(5)]
    assert [m.rcpt_tos for m in received] == [(f"p{n}@example.com",) for n in range(5)]


def test_in_a_run_a_refused_recipient_or_message_fails_that_mail_only(sink: LeanSmtpSink,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _count_connections(monkeypatch)
    mails = _run([1]) + _run([2], "spamtrap@example.com") + _run([3]) + _run([4], "nobody@example.com") + _run([5])
    with relay_for(sink).session() as session:
        failures = session.deliver_many(mails)
    assert set(failures) == {2, 4}
    assert failures[2].permanent and failures[2].code == 554  # the message refused after its DATA
    assert failures[4].permanent and failures[4].code == 550  # the recipient refused
    received = sink.wait_for_messages(3)
    assert [m.raw for m in received] == [_mail(1), _mail(3), _mail(5)]
    # A refused message leaves the connection in step: only the refused recipient cost a new one.
    assert len(opened) == 2


def test_a_connection_lost_before_a_run_is_written_fails_the_mails_on_their_way_and_not_the_next(
        sink: LeanSmtpSink) -> None:
    session = SmtpRelaySession(relay_for(sink))

    def mails() -> Iterator[OutgoingMail]:
        yield from _run([1, 2])
        # Mail 2's DATA was accepted, its content not sent yet: the connection breaks now, so
        # neither its content nor mail 3's envelope gets out.
        assert session._client is not None and session._client.sock is not None
        session._client.sock.shutdown(socket.SHUT_RDWR)
        yield from _run([3, 4])

    try:
        failures = session.deliver_many(mails())
    finally:
        session.close()
    assert set(failures) == {2, 3}
    assert not failures[2].permanent and not failures[3].permanent
    received = sink.wait_for_messages(2)
    assert sorted(m.raw for m in received) == sorted([_mail(1), _mail(4)])


def test_a_connection_lost_before_a_message_is_answered_fails_it_and_the_next_envelope() -> None:
    # The relay keeps mail 2, then hangs up before its 250 (and before reading mail 3's envelope,
    # which went out in the same write): mail 2 fails and goes again later (at least once), mail 3
    # fails, mail 4 goes on a new connection.
    with LeanSmtpSink(hang_up_after_data_from_recipients={"crash@example.com"}) as sink:
        mails = _run([1]) + _run([2], "crash@example.com") + _run([3, 4])
        with relay_for(sink).session() as session:
            failures = session.deliver_many(mails)
        assert set(failures) == {2, 3}
        assert not failures[2].permanent and not failures[3].permanent
        received = sink.wait_for_messages(3)
        assert sorted(m.raw for m in received) == sorted([_mail(1), _mail(2), _mail(4)])


def test_a_run_that_raises_leaves_no_message_half_sent(sink: LeanSmtpSink) -> None:
    kept = KeptSmtpConnection(relay_for(sink))

    def mails() -> Iterator[OutgoingMail]:
        yield from _run([1, 2])
        raise RuntimeError("the database went away while renewing the lease")

    try:
        with pytest.raises(RuntimeError), kept.session() as session:
            session.deliver_many(mails())
        # Mail 2 was waiting for its content: that connection is gone, the next mail is whole.
        kept.deliver(_mail(3), recipients=["p3@example.com"], key=3)
    finally:
        kept.close()
    received = sink.wait_for_messages(2)
    assert [m.raw for m in received] == [_mail(1), _mail(3)]


def test_deliver_each_on_a_relay_without_sessions_tries_every_mail() -> None:
    class Refusing:
        def __init__(self) -> None:
            self.delivered: list[int] = []

        def deliver(self, raw: bytes, *, recipients: list[str], key: int) -> None:
            if key == 2:
                raise RelayError("no", permanent=True, code=550)
            self.delivered.append(key)

    relay = Refusing()
    failures = deliver_each(relay, _run([1, 2, 3]))
    assert list(failures) == [2] and relay.delivered == [1, 3]


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
