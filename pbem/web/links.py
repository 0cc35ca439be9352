"""Signed per-seat links to a game's read-only page.

Every mail to a player carries ``game_link(settings, game_id, seat)``: an absolute URL
under ``PBEM_BASE_URL`` whose last path segment is an itsdangerous token naming the game
and the seat, signed with ``PBEM_SECRET_KEY``.  Whoever holds the link sees what that seat
may see, exactly like whoever reads that player's mail, so the token is the whole
authentication: no accounts, no cookies.

Links do not expire: a player may open the page from any mail of the game, however old.
The salt keeps these signatures apart from every other use of the same secret (reply
addresses sign with their own construction), so a token made for one purpose can never
pass as another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from pbem.config import Settings

__all__ = ["GAME_LINK_SALT", "SeatLink", "game_link", "game_token", "read_game_token"]

GAME_LINK_SALT = "pbem.web.game-link.v1"


@dataclass(frozen=True, slots=True)
class SeatLink:
    """What a verified link names: one seat of one game."""

    game_id: int
    seat: int


def _serializer(secret_key: str) -> URLSafeSerializer:
    # Compact JSON, no timestamp: the token is short enough for a mail line.
    return URLSafeSerializer(secret_key, salt=GAME_LINK_SALT)


def game_token(secret_key: str, game_id: int, seat: int) -> str:
    """The signed token for one seat of one game."""
    return _serializer(secret_key).dumps([int(game_id), int(seat)])


def game_link(settings: Settings, game_id: int, seat: int) -> str:
    """The absolute URL of ``seat``'s page of game ``game_id`` (for mails)."""
    return f"{settings.base_url}/game/{game_token(settings.secret_key, game_id, seat)}"


def read_game_token(secret_key: str, token: str) -> SeatLink | None:
    """The seat a token names, or None when it is not one we signed (altered, truncated,
    signed with another key or salt, or of the wrong shape)."""
    try:
        payload: Any = _serializer(secret_key).loads(token)
    except BadSignature:
        return None
    if (
        not isinstance(payload, list)
        or len(payload) != 2
        or not all(type(part) is int and part >= 0 for part in payload)
    ):
        return None
    return SeatLink(game_id=payload[0], seat=payload[1])
