"""``GET /healthz``: is this web front able to do its job (reach its database)?

For load balancers and ``docker compose`` health checks: 200 ``{"status": "ok",
"database": "ok"}``, or 503 with ``"database": "unreachable"``.  It says nothing about
the broker or the workers (a web front that stores mail is healthy while they are down:
stored rows are queued by the sweep later).
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, jsonify
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .runtime import runtime

__all__ = ["blueprint", "database_reachable"]

log = logging.getLogger("pbem.web")

blueprint = Blueprint("health", __name__)


def database_reachable() -> bool:
    try:
        with runtime().read_engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as error:
        log.warning("health check: database unreachable: %s", error)
        return False
    return True


@blueprint.get("/healthz")
def healthz() -> tuple[Response, int, dict[str, str]]:
    no_store = {"Cache-Control": "no-store"}
    if database_reachable():
        return jsonify(status="ok", database="ok"), 200, no_store
    return jsonify(status="error", database="unreachable"), 503, no_store
