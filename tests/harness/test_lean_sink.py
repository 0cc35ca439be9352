"""The lean SMTP sink (``pbem.devservers.lean_sink``): real SMTP, pipelined input, error paths.

Most tests talk to a started sink over TCP (smtplib, or a raw socket for pipelined input); the
split-input tests also drive one session object directly with a fake transport, so that every
way of cutting the input into reads is tried deterministically.
"""

from __future__ import annotations

import asyncio
import random
import smtplib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from pbem.devservers.lean_sink import CapturedMessage, LeanSmtpSink, _has_long_line, _Session
from pbem.devservers.smtp_sink import SmtpSink


@pytest.fixture
def sink() -> Iterator[LeanSmtpSink]:
    with LeanSmtpSink(refuse_recipients=["Nobody@Example.com"],
                      refuse_data_from_recipients=["spamtrap@example.com"], max_size=20000) as s:
        yield s


class Raw:
    """A raw SMTP client: bytes out exactly as given, replies read one complete reply at a time."""

    def __init__(self, sink: LeanSmtpSink) -> None:
        self.sock = socket.create_connection((sink.host, sink.port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")
        self.greeting = self.reply()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reply(self) -> tuple[int, list[bytes]]:
        lines = []
        while True:
            line = self.file.readline()
            assert line.endswith(b"\r\n"), f"connection closed or bad reply line {line!r}"
            lines.append(line[4:-2])
            if line[3:4] != b"-":
                return int(line[:3]), lines

    def codes(self, count: int) -> list[int]:
        return [self.reply()[0] for _ in range(count)]

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@pytest.fixture
def raw(sink: LeanSmtpSink) -> Iterator[Raw]:
    client = Raw(sink)
    yield client
    client.close()


# -- smtplib -----------------------------------------------------------------------------------


def test_smtplib_message_envelope_bytes_and_callback() -> None:
    seen: list[tuple[CapturedMessage, str]] = []
    sink = LeanSmtpSink("relay.test", on_message=lambda m: seen.append((m, threading.current_thread().name)))
    with sink:
        before = time.monotonic()
        with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
            code, features = client.ehlo("client.test")
            assert code == 250
            assert features.split(b"\n")[0] == b"relay.test"
            for extension in ("pipelining", "8bitmime", "smtputf8", "size"):
                assert client.has_extn(extension), extension
            assert client.esmtp_features["size"] == "33554432"
            refused = client.sendmail("Ana@Load.test", ["bob@example.org"],
                                      b"Subject: one\r\n\r\nQS\r\n")
            assert refused == {}
        after = time.monotonic()
        [message] = sink.messages
        assert sink.received == 1
    assert message.mail_from == "Ana@Load.test"
    assert message.rcpt_tos == ("bob@example.org",)
    assert message.raw == b"Subject: one\r\n\r\nQS\r\n"
    assert message.parsed()["Subject"] == "one"
    assert before <= message.received_at <= after
    assert seen == [(message, "lean-smtp-sink")]  # called in the sink's loop thread


def test_several_messages_on_one_connection_and_keep_false() -> None:
    got: list[CapturedMessage] = []
    with LeanSmtpSink(on_message=got.append, keep=False) as sink:
        with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
            for k in range(5):
                client.sendmail(f"s{k}@x.test", [f"r{k}@y.test", "both@y.test"],
                                f"Subject: {k}\r\n\r\nbody {k}\r\n".encode())
        assert sink.received == 5
        assert sink.messages == []  # keep=False: counted and handed over, not held
    assert [m.mail_from for m in got] == [f"s{k}@x.test" for k in range(5)]
    assert [m.rcpt_tos for m in got] == [(f"r{k}@y.test", "both@y.test") for k in range(5)]
    assert [m.raw for m in got] == [f"Subject: {k}\r\n\r\nbody {k}\r\n".encode() for k in range(5)]


def test_dot_stuffed_lines_arrive_unstuffed(sink: LeanSmtpSink) -> None:
    body = b"Subject: dots\r\n\r\n.\r\n..\r\n.hidden\r\nmiddle . line\r\n...\r\n.\r\nend"
    with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
        client.sendmail("a@x.test", ["b@y.test"], body)  # smtplib doubles every leading dot
        client.sendmail("a@x.test", ["b@y.test"], b".first line is a dot line\r\n")
    first, second = sink.wait_for_messages(2)
    assert first.raw == body + b"\r\n"  # as SmtpSink: the last line keeps its CRLF
    assert second.raw == b".first line is a dot line\r\n"


def test_8bit_and_utf8(sink: LeanSmtpSink) -> None:
    body = ("Subject: =?utf-8?q?dama?=\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Transfer-Encoding: 8bit\r\n\r\ndamă de pică ♠\r\n").encode()
    with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
        client.sendmail("jogador@exemplo.pt", ["ana@load.test"], body, mail_options=["BODY=8BITMIME"])
        client.sendmail("jogador@exemplo.pt", ["joão@exemplo.pt"], body, mail_options=["SMTPUTF8", "BODY=8BITMIME"])
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:  # a UTF-8 address needs SMTPUTF8
            client.sendmail("jogador@exemplo.pt", ["joão@exemplo.pt"], body)
        assert refused.value.recipients["joão@exemplo.pt"][0] == 553
    first, second = sink.wait_for_messages(2)
    assert first.raw == second.raw == body
    assert second.rcpt_tos == ("joão@exemplo.pt",)
    assert "damă de pică ♠" in first.parsed().get_content()


def test_same_bytes_as_smtp_sink() -> None:
    """Whatever a client sends, the lean sink captures what the aiosmtpd sink captures."""
    bodies = [b"", b"x", b"no final newline", b"a\r\n\r\nb\r\n", b"..\r\n.\r\n. \r\n",
              "ç\r\n".encode() * 300, b"\r\n\r\n"]
    captured = []
    for sink_class in (SmtpSink, LeanSmtpSink):
        with sink_class() as sink:
            with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
                for body in bodies:
                    client.sendmail("a@x.test", ["b@y.test"], body)
            captured.append([(m.mail_from, m.rcpt_tos, m.raw) for m in sink.wait_for_messages(len(bodies))])
    assert captured[1] == captured[0]


def test_refusals_seen_through_smtplib(sink: LeanSmtpSink) -> None:
    with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
        refused = client.sendmail("a@x.test", ["nobody@example.com", "ok@example.com"], b"hi\r\n")
        assert refused == {"nobody@example.com": (550, b"5.1.1 No such user")}
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            client.sendmail("a@x.test", ["NOBODY@example.com"], b"hi\r\n")
        with pytest.raises(smtplib.SMTPDataError) as data_error:
            client.sendmail("a@x.test", ["ok@example.com", "SpamTrap@example.com"], b"hi\r\n")
        assert data_error.value.smtp_code == 554
        assert data_error.value.smtp_error == b"5.6.0 Message refused"
        client.sendmail("a@x.test", ["after@example.com"], b"still fine\r\n")
    assert [(m.rcpt_tos, m.raw) for m in sink.messages] == [
        (("ok@example.com",), b"hi\r\n"), (("after@example.com",), b"still fine\r\n")]


# -- pipelined input on a raw socket ------------------------------------------------------------


def test_pipelined_commands_and_body_with_the_next_commands(sink: LeanSmtpSink, raw: Raw) -> None:
    assert raw.greeting[0] == 220
    raw.send(b"EHLO client.test\r\nMAIL FROM:<a@x.test> SIZE=40 BODY=8BITMIME\r\nRCPT TO:<b@y.test>\r\n"
             b"RCPT TO:<c@y.test>\r\nDATA\r\n")
    code, lines = raw.reply()
    assert code == 250 and b"PIPELINING" in lines
    assert raw.codes(4) == [250, 250, 250, 354]
    # The first message's body, its end, and the next transaction, in one write.
    raw.send(b"first\r\n..dot\r\n.\r\nMAIL FROM:<>\r\nRCPT TO:<d@y.test>\r\nDATA\r\n")
    assert raw.codes(4) == [250, 250, 250, 354]
    # An empty message, then RSET, NOOP and QUIT, in one write.
    raw.send(b".\r\nRSET\r\nNOOP\r\nQUIT\r\n")
    assert raw.codes(4) == [250, 250, 250, 221]
    assert raw.file.read() == b""  # closed after the 221
    assert [(m.mail_from, m.rcpt_tos, m.raw) for m in sink.messages] == [
        ("a@x.test", ("b@y.test", "c@y.test"), b"first\r\n.dot\r\n"),
        ("", ("d@y.test",), b""),
    ]


def test_terminator_split_across_writes_byte_by_byte(sink: LeanSmtpSink, raw: Raw) -> None:
    raw.send(b"EHLO c\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n")
    assert raw.codes(4) == [250, 250, 250, 354]
    raw.send(b"line one\r\nline two")
    for byte in b"\r\n.\r\n":
        time.sleep(0.02)  # separate segments (TCP_NODELAY), so separate reads at the sink
        raw.send(bytes([byte]))
    assert raw.reply() == (250, [b"2.0.0 OK: message accepted"])
    assert sink.wait_for_messages(1)[0].raw == b"line one\r\nline two\r\n"


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self.written += data

    def close(self) -> None:
        self.closed = True


def _feed(chunks: list[bytes]) -> tuple[bytes, bool, list[CapturedMessage]]:
    sink = LeanSmtpSink("fake.test")  # never started: the session is driven by hand
    session = _Session(sink)
    transport = FakeTransport()
    session.connection_made(transport)
    for chunk in chunks:
        session.data_received(chunk)
    return bytes(transport.written), transport.closed, sink.messages


TRANSCRIPT = (b"EHLO c\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n"
              b"..a\r\n\r\n..\r\nb\r\n.\r\nMAIL FROM:<c@x.test>\r\nRCPT TO:<d@y.test>\r\nDATA\r\n"
              b".\r\nQUIT\r\n")


def test_every_cut_of_the_input_gives_the_same_answers() -> None:
    whole = _feed([TRANSCRIPT])
    written, closed, messages = whole
    assert written.count(b"\r\n250 2.0.0 OK: message accepted\r\n") == 2
    assert written.endswith(b"221 2.0.0 Bye\r\n") and closed
    assert [m.raw for m in messages] == [b".a\r\n\r\n.\r\nb\r\n", b""]
    assert _feed([bytes([b]) for b in TRANSCRIPT]) [:2] == whole[:2]
    for cut in range(1, len(TRANSCRIPT)):
        written, closed, messages = _feed([TRANSCRIPT[:cut], TRANSCRIPT[cut:]])
        assert (written, closed) == whole[:2], cut
        assert [(m.mail_from, m.rcpt_tos, m.raw) for m in messages] == [
            (m.mail_from, m.rcpt_tos, m.raw) for m in whole[2]], cut


# -- errors --------------------------------------------------------------------------------------


def test_bad_sequences_are_503(raw: Raw) -> None:
    raw.send(b"MAIL FROM:<a@x.test>\r\n")  # before EHLO
    assert raw.codes(1) == [503]
    raw.send(b"HELO c\r\nRCPT TO:<b@y.test>\r\nDATA\r\nMAIL FROM:<a@x.test>\r\nDATA\r\n"
             b"MAIL FROM:<again@x.test>\r\n")
    assert raw.codes(6) == [250, 503, 503, 250, 503, 503]  # RCPT, DATA before MAIL; DATA before RCPT; nested MAIL
    raw.send(b"RCPT TO:<b@y.test>\r\nDATA\r\nbody\r\n.\r\n")
    assert raw.codes(3) == [250, 354, 250]


def test_refused_recipients_in_a_pipelined_transaction(sink: LeanSmtpSink, raw: Raw) -> None:
    raw.send(b"EHLO c\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<nobody@example.com>\r\nRCPT TO:<ok@y.test>\r\nDATA\r\n")
    assert raw.codes(1) == [250]
    assert raw.reply() == (250, [b"2.1.0 Sender OK"])
    assert raw.reply() == (550, [b"5.1.1 No such user"])
    assert raw.codes(2) == [250, 354]
    raw.send(b"kept\r\n.\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<NoBody@example.COM>\r\nDATA\r\n")
    assert raw.codes(4) == [250, 250, 550, 503]  # no recipient accepted: no DATA
    raw.send(b"RSET\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<spamtrap@example.com>\r\nDATA\r\n")
    assert raw.codes(4) == [250, 250, 250, 354]
    raw.send(b"refused\r\n.\r\n")
    assert raw.reply() == (554, [b"5.6.0 Message refused"])
    assert [(m.rcpt_tos, m.raw) for m in sink.messages] == [(("ok@y.test",), b"kept\r\n")]
    assert sink.received == 1


def test_rset_ends_the_transaction(sink: LeanSmtpSink, raw: Raw) -> None:
    raw.send(b"EHLO c\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<forgotten@y.test>\r\nRSET\r\nDATA\r\n")
    assert raw.codes(5) == [250, 250, 250, 250, 503]
    raw.send(b"MAIL FROM:<b@x.test>\r\nRCPT TO:<kept@y.test>\r\nDATA\r\nx\r\n.\r\n")
    assert raw.codes(4) == [250, 250, 354, 250]
    [message] = sink.wait_for_messages(1)
    assert (message.mail_from, message.rcpt_tos) == ("b@x.test", ("kept@y.test",))


def test_other_commands_and_syntax_errors(raw: Raw) -> None:
    raw.send(b"EHLO\r\nEHLO c\r\nVRFY ana@load.test\r\nNOOP\r\nHELP\r\nEXPN list\r\nFROB\r\n\r\n"
             b"MAIL TO:<a@x.test>\r\nMAIL FROM:<a@x.test\r\nMAIL FROM:<a@x.test> FROB=1\r\n"
             b"MAIL FROM:<a@x.test> SIZE=big\r\nMAIL FROM:<a@x.test> BODY=9BIT\r\n"
             b"mail from:<a@x.test>\r\nRCPT TO:<>\r\nRCPT TO:<b@y.test> NOTIFY=NEVER\r\n"
             b"RCPT TO:<postmaster>\r\ndata please\r\n")
    assert raw.codes(18) == [501, 250, 252, 250, 214, 502, 500, 500,  # EHLO needs a name; FROB; empty line
                             501, 501, 555, 501, 501,  # MAIL: TO:, no ">", unknown parameter, bad SIZE, bad BODY
                             250, 501, 555, 250,  # lower case is fine; RCPT <>, unknown parameter; postmaster
                             501]  # DATA takes no argument


def test_size_limits(sink: LeanSmtpSink, raw: Raw) -> None:
    raw.send(b"EHLO c\r\nMAIL FROM:<a@x.test> SIZE=20001\r\nMAIL FROM:<a@x.test> SIZE=20000\r\n"
             b"RCPT TO:<b@y.test>\r\nDATA\r\n")
    assert raw.codes(5) == [250, 552, 250, 250, 354]
    raw.send(b"y" * 998 + b"\r\n")
    raw.send((b"x" * 998 + b"\r\n") * 20)  # past the 20,000 octets the sink takes
    raw.send(b".\r\n")
    assert raw.reply() == (552, [b"5.3.4 Error: message size exceeds fixed maximum message size"])
    raw.send(b"MAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n" + b"z" * 999 + b"\r\n.\r\n")
    assert raw.codes(4) == [250, 250, 354, 500]  # a text line past 998 octets
    raw.send(b"NOOP " + b"n" * 5000 + b"\r\nNOOP\r\n")  # a command line past the limit
    assert raw.codes(2) == [500, 250]
    raw.send(b"MAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n" + b"w" * 998 + b"\r\n.\r\n")
    assert raw.codes(4) == [250, 250, 354, 250]
    assert [m.raw for m in sink.messages] == [b"w" * 998 + b"\r\n"]


def test_the_long_line_check_agrees_with_cutting_the_message_into_lines() -> None:
    rng = random.Random(5321)
    lengths = [0, 1, 76, 498, 499, 500, 501, 997, 998, 999, 1000, 1998, 2500]
    for _ in range(5000):
        lines = [b"x" * rng.choice(lengths) for _ in range(rng.randint(1, 6))]
        data = b"\r\n".join(lines) + rng.choice([b"\r\n", b""])
        assert _has_long_line(data) == (max(map(len, data.split(b"\r\n"))) > 998), [len(x) for x in lines]


def test_quit_closes_and_stop_ends_connections() -> None:
    sink = LeanSmtpSink().start()
    port = sink.port
    client = Raw(sink)
    client.send(b"QUIT\r\nNOOP\r\n")  # nothing after QUIT is answered
    assert client.reply() == (221, [b"2.0.0 Bye"])
    assert client.file.read() == b""
    idle = Raw(sink)
    sink.stop()
    assert idle.file.read() == b""  # stop() closed the open connection
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with pytest.raises(RuntimeError):
        sink.port  # noqa: B018
    sink.stop()  # twice is fine
