"""Every link a mail or a page carries, signed: the game page, its replay, the one-click unsubscribe.

One pure module (the base URL and the signer in, a URL or what a token names out; no Flask, no
database) used by the mails (:mod:`pbem.services.mailing`, the digest, the summaries) and by the
pages that answer those links (:mod:`pbem.web.game`, :mod:`pbem.web.replay`,
:mod:`pbem.web.unsubscribe`), so a link is written and read by the same code.

Game page: every mail to a player carries ``game_link(settings, game_id, seat)``: an absolute URL
under ``PBEM_BASE_URL`` whose last path segment is an itsdangerous token naming the game and the
seat, signed with ``PBEM_SECRET_KEY``.  Whoever holds the link sees what that seat may see, exactly
like whoever reads that player's mail, so the token is the whole authentication: no accounts, no
cookies.  ``replay_link`` is the same token under ``/replay``: whoever holds the page's link already
sees what that seat sees, so the replay needs no credential of its own.

Links do not expire: a player may open the page from any mail of the game, however old.

Unsubscribe (RFC 8058): ``unsubscribe_link(settings, game_id=…, seat=…, player_id=…)`` is the
``List-Unsubscribe`` URL of a news mail; without a game it names only the player (the daily
digest's link, for all their games).

Each kind of token has its own salt, which keeps its signatures apart from every other use of the
same secret (reply addresses sign with their own construction), so a token made for one purpose can
never pass as another: a game-page token is no unsubscribe token, nor the other way round.  The salts
keep the names they were first signed with, so links already mailed stay valid.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from pbem.config import Settings

__all__ = [
    "GAME_LINK_SALT",
    "UNSUBSCRIBE_SALT",
    "SeatLink",
    "UnsubscribeTarget",
    "game_link",
    "game_token",
    "read_game_token",
    "read_unsubscribe_token",
    "replay_link",
    "unsubscribe_link",
    "unsubscribe_token",
]

GAME_LINK_SALT = "pbem.web.game-link.v1"
UNSUBSCRIBE_SALT = "pbem.web.unsubscribe.v1"


# --- the game page and its replay -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatLink:
    """What a verified link names: one seat of one game."""

    game_id: int
    seat: int


def _game_serializer(secret_key: str) -> URLSafeSerializer:
    # Compact JSON, no timestamp: the token is short enough for a mail line.
    return URLSafeSerializer(secret_key, salt=GAME_LINK_SALT)


#: Tokens signed, kept per process: every mail to a seat links its page (and a news mail its
#: unsubscribe link), and signing is a few HMACs each time for the same token.
_TOKENS_KEPT = 4096


@functools.lru_cache(maxsize=_TOKENS_KEPT)
def game_token(secret_key: str, game_id: int, seat: int) -> str:
    """The signed token for one seat of one game."""
    return _game_serializer(secret_key).dumps([int(game_id), int(seat)])


def game_link(settings: Settings, game_id: int, seat: int) -> str:
    """The absolute URL of ``seat``'s page of game ``game_id`` (for mails)."""
    return f"{settings.base_url}/game/{game_token(settings.secret_key, game_id, seat)}"


def replay_link(settings: Settings, game_id: int, seat: int) -> str:
    """The absolute URL of the replay of game ``game_id`` as seat ``seat`` may see it."""
    return f"{settings.base_url}/game/{game_token(settings.secret_key, game_id, seat)}/replay"


def read_game_token(secret_key: str, token: str) -> SeatLink | None:
    """The seat a token names, or None when it is not one we signed (altered, truncated,
    signed with another key or salt, or of the wrong shape)."""
    try:
        payload: Any = _game_serializer(secret_key).loads(token)
    except BadSignature:
        return None
    if (
        not isinstance(payload, list)
        or len(payload) != 2
        or not all(type(part) is int and part >= 0 for part in payload)
    ):
        return None
    return SeatLink(game_id=payload[0], seat=payload[1])


# --- one-click unsubscribe ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnsubscribeTarget:
    """One seat of one game for one player, or (``game_id`` None) all the player's games."""

    player_id: int
    game_id: int | None = None
    seat: int | None = None


def _unsubscribe_serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=UNSUBSCRIBE_SALT)


@functools.lru_cache(maxsize=_TOKENS_KEPT)
def unsubscribe_token(secret_key: str, *, player_id: int, game_id: int | None = None, seat: int | None = None) -> str:
    """The signed token naming one seat of one game of a player, or (no game) the player."""
    payload = [int(player_id)] if game_id is None else [int(player_id), int(game_id), int(seat or 0)]
    return _unsubscribe_serializer(secret_key).dumps(payload)


def unsubscribe_link(settings: Settings, *, player_id: int, game_id: int | None = None, seat: int | None = None) -> str:
    """The absolute one-click unsubscribe URL (a news mail's ``List-Unsubscribe``)."""
    token = unsubscribe_token(settings.secret_key, player_id=player_id, game_id=game_id, seat=seat)
    return f"{settings.base_url}/unsubscribe/{token}"


def read_unsubscribe_token(secret_key: str, token: str) -> UnsubscribeTarget | None:
    """What an unsubscribe token names, or None when it is not one we signed (or of the wrong shape)."""
    try:
        payload: Any = _unsubscribe_serializer(secret_key).loads(token)
    except BadSignature:
        return None
    if not isinstance(payload, list) or len(payload) not in (1, 3) or not all(
            type(part) is int and part >= 0 for part in payload):
        return None
    if len(payload) == 1:
        return UnsubscribeTarget(player_id=payload[0])
    return UnsubscribeTarget(player_id=payload[0], game_id=payload[1], seat=payload[2])
