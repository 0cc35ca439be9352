"""``GET /game/<token>``: one seat's read-only page of a game, reached from its mails.

The token (``pbem.mail.links``) is the only credential, so the page is careful with it:
a token that does not verify, or names a game or seat that does not exist, is a plain
404 (no hint of which); the response tells browsers not to send the URL on as a Referer,
not to cache the page and robots not to index it.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, abort, render_template
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from pbem.db.models import Game, Move, Seat
from pbem.mail.links import read_game_token
from pbem.services.mailing import seat_names

from .game_page import LoggedMove, build_page
from .i18n import use_language
from .runtime import runtime

__all__ = ["PRIVATE_HEADERS", "blueprint", "render_seat_page"]

blueprint = Blueprint("game", __name__)

PRIVATE_HEADERS = {
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
}


@blueprint.get("/game/<token>")
def game_page(token: str) -> tuple[str, int, dict[str, str]]:
    return render_seat_page(token, build_page, "game.html")


def render_seat_page(
    token: str, build: Callable[..., object], template: str
) -> tuple[str, int, dict[str, str]]:
    """A page of the seat a signed link names (this page, and ``pbem.web.replay``'s).

    The link is verified, then the game, its seats and its move log are read, and ``build``
    (pure: plain values in, the page's values out) is called with ``game_id``, ``seat``,
    ``status``, ``names``, ``snapshot``, ``rules`` and ``moves``.  ``template`` renders the
    result as ``page``, in the seat's player's language, with ``PRIVATE_HEADERS``.  A token that
    does not verify, or names a game or seat that does not exist, is a plain 404.
    """
    rt = runtime()
    link = read_game_token(rt.settings.secret_key, token)
    if link is None:
        abort(404)
    with rt.read_session_factory() as session:
        game = session.scalars(
            select(Game)
            .where(Game.id == link.game_id)
            .options(selectinload(Game.seats).selectinload(Seat.player))
        ).one_or_none()
        if game is None:
            abort(404)
        seats = sorted(game.seats, key=lambda s: s.seat)
        own = next((s for s in seats if s.seat == link.seat), None)
        if own is None:
            abort(404)
        moves = [
            LoggedMove(kind=kind, seat=seat, payload=payload)
            for kind, seat, payload in session.execute(
                select(Move.kind, Move.seat, Move.payload)
                .where(Move.game_id == game.id)
                .order_by(Move.seq)
            )
        ]
        page = build(
            game_id=game.id,
            seat=link.seat,
            status=str(game.status),
            names=seat_names(seats),
            snapshot=game.snapshot,
            rules=game.rules,
            moves=moves,
        )
        language = own.player.language if own.player is not None else None
    use_language(language)
    return render_template(template, page=page), 200, PRIVATE_HEADERS
