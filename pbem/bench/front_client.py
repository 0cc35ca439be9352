"""The client process of ``python -m pbem.bench.front_profile``: replies sent to the SMTP front.

A module of its own, importing only the SMTP client (:mod:`pbem.bench.loadgen`), so the process
``front_profile`` starts for each round is up in a moment: its start-up is in the round's wall
time, and the front idles meanwhile.  Run as
``python -m pbem.bench.front_client PORT --mails N --connections C --rate R --run NAME``.
"""

from __future__ import annotations

import argparse
import threading
import time

from pbem.bench.loadgen import SmtpClient, SmtpReplyError

__all__ = ["DOMAIN", "main", "reply", "send_replies"]

DOMAIN = "hearts.test"
_QUOTED = "> line {n} of the mail answered: the trick so far: 7♣ ana, Q♣ bob; you may play 2♣ 9♣ K♣"


def reply(k: int, run: str) -> bytes:
    """Reply ``k`` of ``run`` (its Message-ID is unique): what a load player sends."""
    return "\r\n".join([
        f"From: p{k % 50}@load.test",
        f"To: g{k % 50}.s1.abcdef0123456789@{DOMAIN}",
        "Subject: Re: Hearts: your turn",
        f"Message-ID: <{run}.{k}@load.test>",
        f"In-Reply-To: <orig.{k}@{DOMAIN}>",
        f"References: <orig.{k}@{DOMAIN}>",
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="utf-8"',
        "Content-Transfer-Encoding: 8bit",
        "",
        "QS",
        "",
        "On Mon, 30 Nov 2026 at 10:00, Hearts <hearts@example> wrote:",
        *(_QUOTED.format(n=n) for n in range(40)),
        "",
    ]).encode("utf-8")


def send_replies(port: int, mails: int, connections: int, rate: float, run: str) -> None:
    """Send ``mails`` replies on ``connections`` connections; print what was refused."""
    lock = threading.Lock()
    numbers = iter(range(mails))
    start = time.monotonic()
    failures: list[str] = []

    def next_number() -> int | None:
        with lock:
            k = next(numbers, None)
        if k is not None and rate > 0:
            delay = start + k / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return k

    def send() -> None:
        # The client of ``pbem bench e2e``'s senders: MAIL, RCPT and DATA pipelined, as the front
        # offers PIPELINING.
        client = SmtpClient("127.0.0.1", port, timeout=60)
        try:
            while (k := next_number()) is not None:
                try:
                    client.send(f"p{k % 50}@load.test", f"g{k % 50}.s1.abcdef0123456789@{DOMAIN}", reply(k, run))
                except SmtpReplyError as exc:
                    with lock:
                        failures.append(repr(exc))
        finally:
            client.quit()

    threads = [threading.Thread(target=send) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        print(f"  {len(failures)} of {mails} refused, e.g. {failures[0]}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--mails", type=int, required=True)
    parser.add_argument("--connections", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True, help="mails a second (0: as fast as they go)")
    parser.add_argument("--run", required=True, help="the Message-IDs' prefix")
    args = parser.parse_args(argv)
    send_replies(args.port, args.mails, args.connections, args.rate, args.run)


if __name__ == "__main__":
    main()
