"""The Flask application factory of the web front.

``create_app(settings)`` builds one app from a ``Settings`` (no global configuration):
blueprints per area (``inbound`` webhooks, ``health``, the ``home`` and help pages, the
``game`` pages, the ``devmail`` pages), the shared ``WebRuntime`` in ``app.extensions["pbem"]``, the i18n of the
templates in ``templates/web/``, and headers every response carries.  Nothing connects
here: the database on the first request that needs it, the broker on the first queueing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask, Response, render_template
from werkzeug.exceptions import NotFound

from pbem.config import Settings
from pbem.resources import templates_dir
from pbem.services.clock import Clock

from . import cards, devmail, game, health, home, inbound, replay, unsubscribe
from .i18n import WebTranslations, install_i18n, use_language
from .runtime import EXTENSION_KEY, WebRuntime

if TYPE_CHECKING:
    from celery import Celery

__all__ = ["create_app"]

#: Pages are self-contained (inline CSS, no scripts, no remote resources); the dev
#: mailbox shows mail HTML in a sandboxed ``srcdoc`` frame, which inherits this policy.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "frame-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
)


def create_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    celery_app: Celery | None = None,
) -> Flask:
    """The web front for ``settings``.  ``clock`` (the services' clock protocol; by default the
    one every process takes from the settings, :func:`pbem.services.app.clock_for`) and
    ``celery_app`` are for tests and for ``pbem serve``, which shares its own."""
    app = Flask(
        "pbem.web",
        template_folder=str(templates_dir() / "web"),
        static_folder=None,
    )
    # The same whitespace control as the mail templates (and babel.cfg's extraction).
    app.jinja_options = {**app.jinja_options, "trim_blocks": True, "lstrip_blocks": True}
    app.config.update(
        SECRET_KEY=settings.secret_key,
        # Outer bound for every request; the inbound routes set their own per request.
        MAX_CONTENT_LENGTH=settings.max_message_size * 4 + 1024 * 1024,
    )
    rt = WebRuntime.build(settings, clock=clock, celery_app=celery_app)
    app.extensions[EXTENSION_KEY] = rt
    install_i18n(app, WebTranslations(settings.default_language))
    cards.install_filters(app)

    app.register_blueprint(inbound.blueprint)
    app.register_blueprint(health.blueprint)
    app.register_blueprint(home.blueprint)
    app.register_blueprint(game.blueprint)
    app.register_blueprint(replay.blueprint)
    app.register_blueprint(unsubscribe.blueprint)
    app.register_blueprint(devmail.blueprint)

    @app.errorhandler(NotFound)
    def _not_found(_error: NotFound) -> tuple[str, int]:
        use_language(None)
        return render_template("not_found.html"), 404

    @app.after_request
    def _security_headers(response: Response) -> Response:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
        return response

    return app
