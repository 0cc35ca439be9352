"""pbem's web front: inbound-mail webhooks, ``/healthz``, the per-seat game pages and,
in development, the dev mailbox.  ``create_app(settings)`` builds it; ``pbem web`` and
``pbem.web.wsgi:app`` (gunicorn) run it."""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
