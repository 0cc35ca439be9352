"""One-click unsubscribe (RFC 8058) from a game's news mails, by a signed link.

The link is ``pbem.mail.links.unsubscribe_link`` (the ``List-Unsubscribe`` URL of a news mail);
without a game it names only the player (the daily digest's link, for all their games).

``POST /unsubscribe/<token>`` is the one click: mail providers send ``List-Unsubscribe=One-Click``
in a form body, and the page's own button sends the same. It switches the notifications to the
minimum (turn mails only, ``pbem.services.digest.unsubscribe``), mails a confirmation that says the
seat is kept, and answers with a page saying so. ``GET`` only shows that page with the button:
link checkers and previews fetch URLs, and a fetch must change nothing. A token that does not
verify, or whose seat has changed hands, is a plain 404.
"""

from __future__ import annotations

import logging

from flask import Blueprint, abort, current_app, render_template
from kombu.exceptions import KombuError

from pbem.db.models import Player, Seat
from pbem.db.session import transaction
from pbem.mail.links import UnsubscribeTarget, game_token, read_unsubscribe_token
from pbem.services.app import Services
from pbem.services.digest import unsubscribe
from workers.queueing import queue_outbound

from .i18n import use_language
from .runtime import WebRuntime, runtime

__all__ = ["blueprint"]

log = logging.getLogger("pbem.web")

_SERVICES_KEY = "pbem.unsubscribe.services"

blueprint = Blueprint("unsubscribe", __name__)

#: The page's own form posts back to itself; everything else as the app's policy.
PAGE_HEADERS = {
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                               "frame-ancestors 'self'; base-uri 'none'; form-action 'self'",
}


def _services(rt: WebRuntime) -> Services:
    """The services (for composing the confirmation), built once per app on first use."""
    found = current_app.extensions.get(_SERVICES_KEY)
    if found is None:
        engine = rt.session_factory.kw["bind"]
        found = Services(settings=rt.settings, engine=engine, session_factory=rt.session_factory, clock=rt.clock)
        current_app.extensions[_SERVICES_KEY] = found
    return found


def _target_or_404(rt: WebRuntime, token: str) -> UnsubscribeTarget:
    target = read_unsubscribe_token(rt.settings.secret_key, token)
    if target is None:
        abort(404)
    return target


def _language(rt: WebRuntime, player_id: int) -> str | None:
    with rt.read_session_factory() as session:
        player = session.get(Player, player_id)
        if player is None:
            abort(404)
        return player.language


@blueprint.get("/unsubscribe/<token>")
def ask(token: str) -> tuple[str, int, dict[str, str]]:
    rt = runtime()
    target = _target_or_404(rt, token)
    use_language(_language(rt, target.player_id))
    return _page(rt, target, done=False)


@blueprint.post("/unsubscribe/<token>")
def one_click(token: str) -> tuple[str, int, dict[str, str]]:
    rt = runtime()
    target = _target_or_404(rt, token)
    svc = _services(rt)
    with transaction(rt.session_factory) as session:
        result = unsubscribe(session, svc, player_id=target.player_id, game_id=target.game_id, seat=target.seat,
                             now=rt.clock.now())
        if not result.found:
            abort(404)
        session.flush()
        ids = [row.id for row in result.mails]
    if ids:
        _queue(rt, ids)
    use_language(_language(rt, target.player_id))
    return _page(rt, target, done=True)


def _page(rt: WebRuntime, target: UnsubscribeTarget, *, done: bool) -> tuple[str, int, dict[str, str]]:
    """The page.  A game's link also links that seat's game page (the seat's mails carry both
    links), while the seat is still the player's."""
    seat_token = None
    if target.game_id is not None and target.seat is not None:
        with rt.read_session_factory() as session:
            row = session.get(Seat, (target.game_id, target.seat))
            if row is not None and row.player_id == target.player_id:
                seat_token = game_token(rt.settings.secret_key, target.game_id, target.seat)
    html = render_template("unsubscribe.html", target=target, done=done, game_token=seat_token)
    return html, 200, PAGE_HEADERS


def _queue(rt: WebRuntime, ids: list[int]) -> None:
    """Queue the committed confirmation for sending; if the broker is down the sweep sends it."""
    try:
        queue_outbound(rt.celery(), ids)
    except (KombuError, OSError):
        log.exception("unsubscribe: could not queue outbound %s; the sweep will send it", ids)
