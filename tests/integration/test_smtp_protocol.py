"""The front's SMTP protocol (``pbem.smtp.server._Smtp``) answers exactly as aiosmtpd's.

``_Smtp`` reads DATA in pieces and simple addresses with a regex; everything else is aiosmtpd's.
These tests run both servers side by side on 127.0.0.1 and send them the same bytes, cut into
the same segments: the transcripts and what the handler is given must be identical.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Sink
from aiosmtpd.smtp import SMTP
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from pbem.smtp.server import _Controller, _line_too_long, _Smtp
from tests.harness.ports import free_port

LIMIT = 4000  # data_size_limit of both servers


class Recorder:
    def __init__(self) -> None:
        self.mails: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.mails.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 2.0.0 Message accepted"


class Pair:
    """aiosmtpd's server and the front's, with one recorder each."""

    def __init__(self) -> None:
        self.recorders = (Recorder(), Recorder())
        kwargs = dict(hostname="127.0.0.1", server_hostname="mx.test", ident="pbem",
                      data_size_limit=LIMIT, enable_SMTPUTF8=True, decode_data=False, ready_timeout=10)
        self.controllers = (Controller(self.recorders[0], port=free_port(), **kwargs),
                            _Controller(self.recorders[1], port=free_port(), **kwargs))

    def start(self) -> Pair:
        for controller in self.controllers:
            controller.start()
        return self

    def stop(self) -> None:
        for controller in self.controllers:
            controller.stop(no_assert=True)

    def talk(self, segments: list[bytes]) -> tuple[tuple[bytes, list[Any]], tuple[bytes, list[Any]]]:
        """Send ``segments`` (one write each, a moment apart; the last ending with QUIT) to both:
        their transcripts and the mails their handlers got."""
        results = []
        for controller, recorder in zip(self.controllers, self.recorders, strict=True):
            recorder.mails.clear()
            with socket.create_connection(("127.0.0.1", controller.port), timeout=10) as sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for segment in segments:
                    sock.sendall(segment)
                    time.sleep(0.0005)
                transcript = b""
                while chunk := sock.recv(65536):
                    transcript += chunk
            results.append((transcript, list(recorder.mails)))
        return results[0], results[1]


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    servers = Pair().start()
    yield servers
    servers.stop()


ENVELOPE = b"EHLO client.test\r\nMAIL FROM:<ana@example.com>\r\nRCPT TO:<new@hearts.test>\r\nDATA\r\n"


def _same(pair: Pair, segments: list[bytes]) -> tuple[bytes, list[Any]]:
    stock, ours = pair.talk(segments)
    assert ours == stock
    return ours


@pytest.mark.parametrize("data", [
    b"Subject: hi\r\n\r\nQS\r\n.\r\n",
    b".\r\n",  # an empty message
    b"\r\n.\r\n",  # one empty line
    b"..\r\n.\r\n",  # a line holding one dot, stuffed
    b".x\r\n..y\r\n...\r\n\r\n.\r\n",
    b"a\nb\rc\r\r\n\n.\r\n.\r\n",  # bare LF and CR are not line ends
    b"x" * 999 + b"\r\n.\r\n",  # the longest line allowed
    b"." + b"x" * 999 + b"\r\n.\r\n",  # ... with a stuffed dot
    b"x" * 1000 + b"\r\n.\r\n",  # one octet too long
    b"y\r\n" + b"x" * 2500 + b"\r\nz\r\n.\r\n",
    b"x" * 1003 + b"\r\n.\r\n",
    (b"y" * 97 + b"\r\n") * 40 + b".\r\n",  # exactly the size limit
    (b"y" * 97 + b"\r\n") * 40 + b"z\r\n.\r\n",  # past it
    (b"y" * 998 + b"\r\n") * 12 + b".\r\n",  # far past it
])
def test_data_in_one_write(pair: Pair, data: bytes) -> None:
    transcript, _ = _same(pair, [ENVELOPE + data + b"QUIT\r\n"])
    assert transcript.endswith(b"221 Bye\r\n")


def test_data_one_octet_at_a_time(pair: Pair) -> None:
    data = b"Subject: x\r\n\r\n.a\r\n\r\n.\r\n"
    transcript, mails = _same(pair, [ENVELOPE] + [data[k:k + 1] for k in range(len(data))] + [b"QUIT\r\n"])
    assert mails[0][2] == b"Subject: x\r\n\r\na\r\n\r\n"


def test_commands_sent_right_after_the_end_of_data(pair: Pair) -> None:
    second = b"MAIL FROM:<bob@example.com>\r\nRCPT TO:<x@hearts.test>\r\nDATA\r\nsecond\r\n.\r\n"
    _, mails = _same(pair, [ENVELOPE + b"first\r\n.\r\n" + second + b"QUIT\r\n"])
    assert [m[2] for m in mails] == [b"first\r\n", b"second\r\n"]


def test_a_message_both_too_big_and_with_too_long_a_line_is_refused() -> None:
    servers = Pair().start()
    try:
        stock, ours = servers.talk([ENVELOPE + b"x" * 1500 + b"\r\n" + b"y" * 5000 + b"\r\n.\r\nQUIT\r\n"])
    finally:
        servers.stop()
    for transcript, mails in (stock, ours):
        assert mails == []
        assert transcript.split(b"\r\n")[-3][:3] in {b"500", b"552"}


_LINES = st.lists(
    st.one_of(
        st.sampled_from([b"", b"..", b".x", b"...", b"\r", b"\n", b"\r\n.", b"x" * 999, b"x" * 1000]),
        st.binary(max_size=120),
    ),
    max_size=30,
).map(lambda lines: b"".join(_line(line) + b"\r\n" for line in lines))


def _line(text: bytes) -> bytes:
    """A line as a client sends it: no CRLF inside, and never a lone dot (stuffed to two)."""
    text = text.replace(b"\r\n", b"\n")
    return b".." if text == b"." else text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_LINES, st.lists(st.integers(min_value=1, max_value=1500), min_size=1, max_size=6))
@example(b"abc\r\n", [4, 1])
@example(b"abc\r\n\r\n", [5, 1, 1])
def test_any_message_cut_anywhere(pair: Pair, body: bytes, cuts: list[int]) -> None:
    data = body + b".\r\n"
    assume(len(data) <= LIMIT)  # a message may be refused for one fault only (sizes: above)
    segments = [ENVELOPE]
    start = 0
    for cut in cuts:
        if start >= len(data):
            break
        segments.append(data[start:start + cut])
        start += cut
    if start < len(data):
        segments.append(data[start:])
    segments.append(b"QUIT\r\n")
    _same(pair, segments)


@pytest.mark.parametrize("length", [998, 999, 1000, 1001, 1499, 1500, 1501])
def test_the_long_line_check_finds_a_long_line_wherever_it_starts(length: int) -> None:
    for start in range(0, 1600, 7):
        head = (b"x" * 5 + b"\r\n") * (start // 7) + b"y" * (start % 7) + b"\r\n"
        data = head + b"z" * length + b"\r\n" + b"tail\r\n"
        expected = max(map(len, data.split(b"\r\n"))) > 999
        assert (_line_too_long(data) is not None) == expected, (start, length)


_PATH_PIECES = ["<", ">", "@", "a", "Z", "9", ".", "..", "-", "+", "=", "=?", "?=", '"', " ", "\t", "(", ")",
                "ü", "[", "]", ":", ",", "\\", "SIZE=10", "BODY=8BITMIME", "\x0b", "example.com"]


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(_PATH_PIECES), max_size=14), st.sampled_from([0, 3, 64]))
@example(["<", "a", "@", "example.com", ">"], 0)
@example(["<", "a", ".", "a", "@", "example.com", ">", " ", "(", "c", ")", " ", "SIZE=10"], 0)
@example(["<", "=?", "utf-8?q?a", "?=", "@", "example.com", ">"], 0)
@example(["<", "a", "a", "a", "a", "@", "example.com", ">"], 3)
def test_addresses_are_read_as_aiosmtpd_reads_them(pieces: list[str], local_part_limit: int) -> None:
    arg = "".join(pieces).strip()
    stock, ours = SMTP(Sink()), _Smtp(Sink())
    stock.local_part_limit = ours.local_part_limit = local_part_limit
    assert _outcome(ours, arg) == _outcome(stock, arg)


def _outcome(server: SMTP, arg: str) -> Any:
    try:
        return server._getaddr(arg)
    except Exception as error:  # aiosmtpd's parser fails on some garbage ("<"): so must ours
        return type(error)
