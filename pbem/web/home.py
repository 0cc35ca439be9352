"""``GET /`` and ``GET /help``: what pbem is and how to play, for anyone who finds the server.

Both pages are the same for every visitor and read nothing but the settings: no game, player or
address of the database shows here (a stranger learns only the server's own ``new@`` address).
The dev mailbox is linked only where it exists (``pbem.web.devmail.dev_mailbox_enabled``).
They speak the browser's language.
"""

from __future__ import annotations

from flask import Blueprint, render_template

from .devmail import dev_mailbox_enabled
from .i18n import use_language
from .runtime import runtime

__all__ = ["blueprint", "new_game_address"]

blueprint = Blueprint("home", __name__)

#: Public and the same for everyone: caches may keep them a little while.
PAGE_HEADERS = {"Cache-Control": "public, max-age=300", "Vary": "Accept-Language"}


def new_game_address(mail_domain: str) -> str:
    """The address a new game is asked for (README, "Starting a game")."""
    return f"new@{mail_domain}"


def _render(template: str) -> tuple[str, int, dict[str, str]]:
    settings = runtime().settings
    use_language(None)
    html = render_template(
        template,
        new_address=new_game_address(settings.mail_domain),
        dev_mailbox=dev_mailbox_enabled(settings),
    )
    return html, 200, PAGE_HEADERS


@blueprint.get("/")
def index() -> tuple[str, int, dict[str, str]]:
    return _render("index.html")


@blueprint.get("/help")
def help_page() -> tuple[str, int, dict[str, str]]:
    return _render("help.html")
