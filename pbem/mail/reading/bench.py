"""Micro-benchmark of reading a typical reply: ``python -m pbem.mail.reading.bench [-n N]``.

The message is what most replies look like: Gmail's multipart/alternative, UTF-8
quoted-printable, a one-card answer above the quoted game mail (text and HTML). Prints messages
per second and microseconds per message for each stage and for the whole path, and, for
comparison, for the standard library's default-policy parser, several times slower.

``--hostile`` instead times the whole reading path (read, classify, extract, parse with every
``expected``, table talk) on each generator of :mod:`.hostile` at 10 kB, 100 kB, 1 MB and 10 MB
(``--sizes``), in CPU seconds (``time.process_time``), per stage. The goal: linear, and no case
over 1 s at 10 MB. It prints figures only; nothing asserts them.
"""

from __future__ import annotations

import argparse
import email
import quopri
import time
from collections.abc import Callable
from email import policy

from .autoreply import classify
from .commands import parse_command, table_talk
from .hostile import GENERATORS
from .message import read_mail
from .reply_text import extract_reply

_EXPECTED = (None, "play", "pass", "moon", "invitation", "new_game")

_GAME_MAIL = """[Hearts #42] Hand 3 (pass across), trick 5. Your turn, Alice.

Trick so far: Bob 7♠, Carol K♠
Your hand: ♣ 2 5 9   ♦ 4 J   ♥ 3 8 Q   ♠ Q A
You may play: Q♠ A♠

Totals: Alice 12, Bob 30, Carol 4, Dave 18
Hand 3 of a game to 100. Passing this hand: across.

Reply with the card you play, for example "QS" or "queen of spades".
Other commands: help, status, games, rules, resign."""


def typical_reply() -> bytes:
    """A Gmail-shaped reply playing QS above the quoted game mail."""
    quoted = "\n".join(("> " + line).rstrip() for line in _GAME_MAIL.split("\n"))
    attribution = "On Mon, Jun 3, 2024 at 10:15\u202fAM Hearts <\nhearts+42.2.17.k7qm3xa2b4c6d5ef@hearts.example> wrote:"
    plain = f"QS\n\n{attribution}\n\n{quoted}\n"
    html_quote = _GAME_MAIL.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>\n")
    html = (
        '<div dir="ltr">QS</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
        f'{attribution}<br></div><blockquote class="gmail_quote">{html_quote}</blockquote></div>\n'
    )

    def qp(text: str) -> bytes:
        return quopri.encodestring(text.encode("utf-8")).replace(b"\n", b"\r\n")

    b = b"000000000000b5d1e3061a0f7c2e"
    head = (
        b"MIME-Version: 1.0\r\nReferences: <42.0.start@hearts.example> <42.2.t5@hearts.example>\r\n"
        b"In-Reply-To: <42.2.t5@hearts.example>\r\nFrom: Alice Example <alice@example.com>\r\n"
        b"Date: Mon, 3 Jun 2024 10:17:22 +0100\r\nMessage-ID: <CAG7hT0yq2vZ0@mail.gmail.com>\r\n"
        b"Subject: Re: [Hearts #42] Your turn: hand 3, trick 5\r\n"
        b"To: Hearts <hearts+42.2.17.k7qm3xa2b4c6d5ef@hearts.example>\r\n"
        b'Content-Type: multipart/alternative; boundary="' + b + b'"\r\n\r\n'
    )
    parts = (
        b"--" + b + b'\r\nContent-Type: text/plain; charset="UTF-8"\r\n'
        b"Content-Transfer-Encoding: quoted-printable\r\n\r\n" + qp(plain) + b"\r\n"
        b"--" + b + b'\r\nContent-Type: text/html; charset="UTF-8"\r\n'
        b"Content-Transfer-Encoding: quoted-printable\r\n\r\n" + qp(html) + b"\r\n"
        b"--" + b + b"--\r\n"
    )
    return head + parts


def _rate(label: str, fn: Callable[[], object], n: int) -> None:
    for _ in range(min(n, 200)):
        fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    elapsed = time.perf_counter() - start
    print(f"{label:<44} {n / elapsed:>10,.0f} msg/s  {elapsed / n * 1e6:>8.1f} µs/msg")


def _stage_times(raw: bytes) -> dict[str, float]:
    """CPU seconds of each stage of the reading path on one message."""
    times: dict[str, float] = {}
    start = time.process_time()
    mail = read_mail(raw, "mallory@example.org")
    times["read"] = time.process_time() - start
    start = time.process_time()
    classify(mail)
    times["classify"] = time.process_time() - start
    start = time.process_time()
    reply = extract_reply(mail.text)
    times["extract"] = time.process_time() - start
    start = time.process_time()
    for expected in _EXPECTED:
        parse_command(reply, expected=expected)
    table_talk(reply)
    times["parse"] = time.process_time() - start
    return times


def hostile(sizes: list[int], names: list[str]) -> None:
    """Print the CPU time of the reading path on each hostile generator at each size."""
    print(f"{'generator':<26} {'bytes':>10} {'total s':>8} {'read':>7} {'classify':>8} {'extract':>7} "
          f"{'parse':>7}  problems")
    worst = 0.0
    for name in names:
        for size in sizes:
            raw = GENERATORS[name](size)
            times = _stage_times(raw)
            total = sum(times.values())
            worst = max(worst, total)
            problems = ",".join(read_mail(raw).problems) or "-"
            print(f"{name:<26} {len(raw):>10,} {total:>8.3f} {times['read']:>7.3f} {times['classify']:>8.3f} "
                  f"{times['extract']:>7.3f} {times['parse']:>7.3f}  {problems}")
    print(f"worst case: {worst:.3f} s of CPU")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=5000, help="messages per measurement")
    parser.add_argument("--hostile", action="store_true", help="time the hostile generators instead")
    parser.add_argument("--sizes", default="10000,100000,1000000,10000000",
                        help="message sizes in bytes for --hostile, comma separated")
    parser.add_argument("--generator", action="append", choices=sorted(GENERATORS),
                        help="only this generator (repeat); all by default")
    args = parser.parse_args(argv)
    if args.hostile:
        hostile([int(s) for s in args.sizes.split(",")], args.generator or list(GENERATORS))
        return
    raw = typical_reply()
    mail = read_mail(raw, "alice@example.com")
    reply = extract_reply(mail.text)
    print(f"typical reply: {len(raw)} bytes; reads as {parse_command(reply, expected='play')}")
    _rate("email.message_from_bytes (policy=default)",
          lambda: email.message_from_bytes(raw, policy=policy.default), args.n)
    _rate("read_mail (compat32 + own decoding)", lambda: read_mail(raw, "alice@example.com"), args.n)
    _rate("classify (auto-reply / bounce)", lambda: classify(mail), args.n)
    _rate("extract_reply", lambda: extract_reply(mail.text), args.n)
    _rate("parse_command", lambda: parse_command(reply, expected="play"), args.n)

    def whole() -> object:
        m = read_mail(raw, "alice@example.com")
        if classify(m) is None:
            return parse_command(extract_reply(m.text), expected="play")
        return None

    _rate("whole path (bytes -> command)", whole, args.n)


if __name__ == "__main__":
    main()
