"""The Flask application factory of the web front.

``create_app(settings)`` builds one app from a ``Settings`` (no global configuration):
blueprints per area (``inbound`` webhooks, ``health``, the ``home`` and help pages, the
``game`` pages, the ``devmail`` pages), the shared ``WebRuntime`` in ``app.extensions["pbem"]``, the i18n of the
templates in ``templates/web/``, and headers every response carries.  Nothing connects
here: the database on the first request that needs it, the broker on the first queueing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask, Response, render_template, request
from werkzeug.exceptions import NotFound

from pbem import metrics
from pbem.config import Settings
from pbem.resources import templates_dir
from pbem.services.clock import Clock

from . import cards, devmail, game, health, home, inbound, replay, unsubscribe
from .i18n import WebTranslations, install_i18n, use_language
from .runtime import EXTENSION_KEY, WebRuntime

if TYPE_CHECKING:
    from celery import Celery

__all__ = ["WEBHOOK_FRONTS", "create_app", "webhook_outcome"]

#: The inbound webhooks' endpoints, by the front their mails are counted for (README, "Metrics and logs").
WEBHOOK_FRONTS = {"inbound.raw": "webhook", "inbound.mailgun": "mailgun"}


def webhook_outcome(response: Response) -> str:
    """What a webhook's answer did with the mail: ``stored``, ``duplicate`` (200, nothing new
    stored), ``failed`` (5xx: the forwarder retries) or ``refused`` (4xx)."""
    if response.status_code == 200:
        body = response.get_json(silent=True) or {}
        return "stored" if body.get("stored") else "duplicate"
    return "failed" if response.status_code >= 500 else "refused"

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
    # The web front's metrics, in the host's directory (each gunicorn worker builds its own app).
    metrics.enable(settings.metrics_dir)
    metrics.process_started("web")
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
    def _count_inbound(response: Response) -> Response:
        front = WEBHOOK_FRONTS.get(request.endpoint or "")
        if front is not None and response.status_code != 404:  # 404: the route is off
            metrics.count_received(front, webhook_outcome(response))
        return response

    @app.after_request
    def _security_headers(response: Response) -> Response:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
        return response

    return app
