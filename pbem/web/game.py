"""``GET /game/<token>``: one seat's read-only page of a game, reached from its mails.

The token (``pbem.mail.links``) is the only credential, so the page is careful with it:
a token that does not verify, or names a game or seat that does not exist, is a plain
404 (no hint of which); the response tells browsers not to send the URL on as a Referer,
not to cache the page and robots not to index it.  What the page shows is built by
``pbem.services.game_views``.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, abort, render_template

from pbem.mail.links import read_game_token
from pbem.services.bot_names import localized
from pbem.services.game_views import build_page, seat_page

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

    The link is verified, then ``pbem.services.game_views.seat_page`` reads the game and calls
    ``build`` (pure: plain values in, the page's values out).  ``template`` renders the result as
    ``page``, in the seat's player's language, with ``PRIVATE_HEADERS``.  A token that does not
    verify, or names a game or seat that does not exist, is a plain 404.
    """
    rt = runtime()
    link = read_game_token(rt.settings.secret_key, token)
    if link is None:
        abort(404)
    with rt.read_session_factory() as session:
        found = seat_page(session, game_id=link.game_id, seat=link.seat, build=build)
    if found is None:
        abort(404)
    language = use_language(found.language)
    page = localized(found.page, language)  # computer players' labels in the page's language
    # ``token``: the pages of one seat link each other (game page <-> replay) with the same link.
    return render_template(template, page=page, token=token), 200, PRIVATE_HEADERS
