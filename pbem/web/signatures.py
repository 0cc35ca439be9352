"""Checking the signatures of inbound-mail webhooks (pure functions, no Flask).

Two schemes:

* pbem's own raw-MIME webhook: ``X-Pbem-Signature`` is the hex HMAC-SHA256, keyed with
  ``PBEM_WEBHOOK_SECRET``, of ``<X-Pbem-Timestamp> + "." + <body bytes>``.  Binding the
  timestamp into the MAC stops an old request from being replayed with a fresh timestamp.
* Mailgun's: ``signature`` is the hex HMAC-SHA256, keyed with the account's webhook
  signing key, of ``timestamp + token``.  It does not cover the message, which is why the
  route also demands HTTP basic auth.

Both timestamps are unix seconds and must lie within ``MAX_SKEW`` of our clock, either way
(a forwarder whose clock runs ahead is as suspicious as a request that waited too long).
Within that window, replays are caught by remembering what was accepted (``webhook_nonces``).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta

__all__ = [
    "MAX_SKEW",
    "NONCE_RETENTION",
    "fresh",
    "mailgun_signature",
    "parse_timestamp",
    "raw_signature",
    "signatures_match",
]

#: How far a request's timestamp may be from our clock.
MAX_SKEW = timedelta(minutes=5)
#: How long an accepted nonce must be remembered: a request seen at S carries a timestamp
#: T >= S - MAX_SKEW and stays acceptable until T + MAX_SKEW, so at most S + 2 * MAX_SKEW.
#: A minute's margin on top.
NONCE_RETENTION = 2 * MAX_SKEW + timedelta(minutes=1)


def raw_signature(secret: str, timestamp: str, body: bytes) -> str:
    """The signature pbem's raw webhook expects (senders use this too)."""
    message = timestamp.encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def mailgun_signature(signing_key: str, timestamp: str, token: str) -> str:
    """Mailgun's webhook signature of ``timestamp`` and ``token``."""
    message = (timestamp + token).encode("utf-8")
    return hmac.new(signing_key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signatures_match(expected: str, given: str) -> bool:
    """Constant-time comparison of two hex signatures (case-insensitive)."""
    return hmac.compare_digest(expected.lower().encode("ascii"), given.strip().lower().encode("ascii", "replace"))


def parse_timestamp(text: str) -> int | None:
    """Unix seconds from a header or form field; None unless it is plain digits."""
    text = text.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        return None
    return int(text)


def fresh(timestamp: int, now: datetime) -> bool:
    """Whether ``timestamp`` (unix seconds) is within ``MAX_SKEW`` of ``now`` (aware)."""
    return abs(now.timestamp() - timestamp) <= MAX_SKEW.total_seconds()
