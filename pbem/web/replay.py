"""``GET /game/<token>/replay``: every trick of every hand of a game, from a signed seat link.

The link is the seat's game-page token (``pbem.mail.links.replay_link``): whoever holds it
already sees what that seat sees, so the replay needs no credential of its own. What it shows,
while the game is on and once it is over, is built by ``pbem.services.game_views.build_replay``.
"""

from __future__ import annotations

from flask import Blueprint

from pbem.services.game_views import build_replay

from .game import render_seat_page

__all__ = ["blueprint"]

blueprint = Blueprint("replay", __name__)


@blueprint.get("/game/<token>/replay")
def replay_page(token: str) -> tuple[str, int, dict[str, str]]:
    return render_seat_page(token, build_replay, "replay.html")
