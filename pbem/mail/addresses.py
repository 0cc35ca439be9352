"""Signed reply addresses: who may move is proven by the address a player replies to.

Every mail to a player carries a ``Reply-To`` naming the game, the seat and the seat's
*decision number* (how many decisions that seat had made when the mail was sent).  The
address is signed with an HMAC-SHA256 over those fields and the server secret, so a player
cannot forge a move for another seat or game by editing the address.  A reply is current
only while the seat's decision count is unchanged, so a reply to a mail that was only news
(a finished trick, say) does not go stale when other seats move.

Formats (all lowercase; mail systems may lower-case local parts, and some upper-case them,
so every field uses only digits and lowercase base32 and parsing ignores case)::

    hearts+<game>.<seat>.<decision>.<sig>@<domain>     a seat's reply address
    invite+<invitation>.<sig>@<domain>                   an invitation's reply address

``<sig>`` is the first 80 bits of HMAC-SHA256(secret, purpose || payload), written as 16
lowercase base32 characters.  The purpose label keeps a reply signature from ever being
valid as an invitation signature (and vice versa), and keeps these signatures apart from
any other use of the same server secret.  Numbers are canonical decimals (no leading
zeros), so one token has exactly one spelling.  Signatures are compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

__all__ = [
    "BadAddress",
    "InviteToken",
    "ReplyToken",
    "claimed_game_id",
    "make_invite_address",
    "make_reply_address",
    "new_game_address",
    "parse_invite_address",
    "parse_recipient",
    "parse_reply_address",
]

REPLY_PREFIX = "hearts"
INVITE_PREFIX = "invite"

#: Bytes of the HMAC kept: 10 bytes = 80 bits = 16 base32 characters, no padding.
SIGNATURE_BYTES = 10
SIGNATURE_CHARS = 16

_REPLY_PURPOSE = b"pbem/reply-address/v1\x00"
_INVITE_PURPOSE = b"pbem/invite-address/v1\x00"

_NUMBER = r"(?:0|[1-9][0-9]{0,17})"
_SIG = rf"[a-z2-7]{{{SIGNATURE_CHARS}}}"
_REPLY_RE = re.compile(rf"({_NUMBER})\.({_NUMBER})\.({_NUMBER})\.({_SIG})")
_INVITE_RE = re.compile(rf"({_NUMBER})\.({_SIG})")


class BadAddress(ValueError):
    """A recipient address that is not a valid signed address of ours.

    ``code`` is one of ``NOT_OURS`` (another domain or another kind of local part),
    ``MALFORMED`` (ours in shape but not parseable) or ``BAD_SIGNATURE`` (well formed, but
    the signature does not match: altered, or made with another secret).
    """

    NOT_OURS = "NOT_OURS"
    MALFORMED = "MALFORMED"
    BAD_SIGNATURE = "BAD_SIGNATURE"

    def __init__(self, code: str, address: str = "") -> None:
        super().__init__(f"{code}: {address!r}")
        self.code = code
        self.address = address


@dataclass(frozen=True, slots=True)
class ReplyToken:
    """What a verified reply address says: this game, this seat, this decision."""

    game_id: int
    seat: int
    decision: int


@dataclass(frozen=True, slots=True)
class InviteToken:
    """What a verified invitation address says: this invitation."""

    invitation_id: int


def _key(secret: str | bytes) -> bytes:
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError("the server secret must not be empty")
    return key


def _signature(secret: str | bytes, purpose: bytes, payload: str) -> str:
    digest = hmac.new(_key(secret), purpose + payload.encode("ascii"), hashlib.sha256).digest()
    return base64.b32encode(digest[:SIGNATURE_BYTES]).decode("ascii").lower()


def _check_number(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")


def _normalise_domain(domain: str) -> str:
    domain = domain.strip().lower().rstrip(".")
    if not domain or "@" in domain:
        raise ValueError(f"not a mail domain: {domain!r}")
    return domain


def make_reply_address(
    secret: str | bytes, domain: str, game_id: int, seat: int, decision: int
) -> str:
    """The signed address a seat replies to for its decision number ``decision``."""
    for name, value in (("game_id", game_id), ("seat", seat), ("decision", decision)):
        _check_number(name, value)
    payload = f"{game_id}.{seat}.{decision}"
    sig = _signature(secret, _REPLY_PURPOSE, payload)
    return f"{REPLY_PREFIX}+{payload}.{sig}@{_normalise_domain(domain)}"


def new_game_address(domain: str) -> str:
    """The address a request for a new game is written to (README, "Starting a game")."""
    return f"new@{_normalise_domain(domain)}"


def make_invite_address(secret: str | bytes, domain: str, invitation_id: int) -> str:
    """The signed address an invitee replies to in order to accept or decline."""
    _check_number("invitation_id", invitation_id)
    payload = f"{invitation_id}"
    sig = _signature(secret, _INVITE_PURPOSE, payload)
    return f"{INVITE_PREFIX}+{payload}.{sig}@{_normalise_domain(domain)}"


def _split(domain: str, address: str) -> tuple[str, str]:
    """Split ``address`` into (prefix, rest-of-local-part) after checking the domain.

    Accepts surrounding whitespace and angle brackets (``<a@b>``), nothing else.
    """
    text = address.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1].strip()
    text = text.lower()
    local, at, addr_domain = text.rpartition("@")
    if not at or not local:
        raise BadAddress(BadAddress.MALFORMED, address)
    if addr_domain.rstrip(".") != _normalise_domain(domain):
        raise BadAddress(BadAddress.NOT_OURS, address)
    prefix, plus, rest = local.partition("+")
    if not plus:
        raise BadAddress(BadAddress.NOT_OURS, address)
    return prefix, rest


def _verify(secret: str | bytes, purpose: bytes, payload: str, sig: str, address: str) -> None:
    expected = _signature(secret, purpose, payload)
    if not hmac.compare_digest(expected.encode("ascii"), sig.encode("ascii")):
        raise BadAddress(BadAddress.BAD_SIGNATURE, address)


def _parse_reply_rest(secret: str | bytes, rest: str, address: str) -> ReplyToken:
    match = _REPLY_RE.fullmatch(rest)
    if match is None:
        raise BadAddress(BadAddress.MALFORMED, address)
    game, seat, decision, sig = match.groups()
    _verify(secret, _REPLY_PURPOSE, f"{game}.{seat}.{decision}", sig, address)
    return ReplyToken(int(game), int(seat), int(decision))


def _parse_invite_rest(secret: str | bytes, rest: str, address: str) -> InviteToken:
    match = _INVITE_RE.fullmatch(rest)
    if match is None:
        raise BadAddress(BadAddress.MALFORMED, address)
    invitation, sig = match.groups()
    _verify(secret, _INVITE_PURPOSE, invitation, sig, address)
    return InviteToken(int(invitation))


def parse_reply_address(secret: str | bytes, domain: str, address: str) -> ReplyToken:
    """Verify a seat's reply address and return its token; raise `BadAddress` otherwise."""
    prefix, rest = _split(domain, address)
    if prefix != REPLY_PREFIX:
        raise BadAddress(BadAddress.NOT_OURS, address)
    return _parse_reply_rest(secret, rest, address)


def parse_invite_address(secret: str | bytes, domain: str, address: str) -> InviteToken:
    """Verify an invitation's reply address; raise `BadAddress` otherwise."""
    prefix, rest = _split(domain, address)
    if prefix != INVITE_PREFIX:
        raise BadAddress(BadAddress.NOT_OURS, address)
    return _parse_invite_rest(secret, rest, address)


_CLAIMED_GAME_RE = re.compile(rf"{REPLY_PREFIX}\+({_NUMBER})\.")


def claimed_game_id(domain: str, address: str) -> int | None:
    """The game number a reply address of ours *claims*, its signature unchecked: for threading
    the notice about an altered address into that game only, never to act on (``None`` for
    another address)."""
    try:
        prefix, rest = _split(domain, address)
    except BadAddress:
        return None
    match = _CLAIMED_GAME_RE.match(f"{prefix}+{rest}")
    return int(match.group(1)) if match else None


def parse_recipient(
    secret: str | bytes, domain: str, address: str
) -> ReplyToken | InviteToken:
    """Verify either kind of signed address (for a worker that routes by recipient).

    Plain addresses of the domain (``new@``, ``postmaster@``) raise ``NOT_OURS``: they are
    not signed addresses, and the caller routes them by name.
    """
    prefix, rest = _split(domain, address)
    if prefix == REPLY_PREFIX:
        return _parse_reply_rest(secret, rest, address)
    if prefix == INVITE_PREFIX:
        return _parse_invite_rest(secret, rest, address)
    raise BadAddress(BadAddress.NOT_OURS, address)
