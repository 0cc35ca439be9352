r"""Inbound-mail webhooks: a mail provider hands us a received message over HTTP.

Like the SMTP front, these routes are thin: authenticate the request, check the envelope
recipients against the mail domain, store the raw bytes with the envelope in one
transaction (``pbem.services.intake.store_inbound``), and queue the stored rows for the
workers only after that transaction committed.  No game logic runs here.

``POST /inbound/raw``: pbem's own forwarder protocol, for a mail provider or relay that
forwards each received message over HTTP (this docstring is its documentation)::

    POST /inbound/raw
    Content-Type: message/rfc822            (any: the body is taken as raw bytes)
    X-Pbem-Timestamp: 1767268800            (unix seconds, within 5 minutes of ours)
    X-Pbem-Signature: <hex HMAC-SHA256(PBEM_WEBHOOK_SECRET, timestamp + "." + body)>
    X-Pbem-Mail-From: <alice@example.com>   (envelope MAIL FROM; empty or <> for bounces)
    X-Pbem-Rcpt-To: g1-x@hearts.example, new@hearts.example   (envelope RCPT TO, required)

    <the message, exactly as received>

The envelope travels in headers, not in the message: the message's own To/Cc are the
sender's to write, and delivery must follow the envelope (Bcc, aliases, forwarding).
Answers: 200 ``{"stored": [ids], "refused": [recipients]}`` (a message already stored is
not stored again: ``stored`` is then empty); 400 for a missing envelope; 401 for a bad,
missing or stale signature; 409 for a replay (the same signature seen before); 413 over
``PBEM_MAX_MESSAGE_SIZE``; 422 when no recipient is in ``PBEM_MAIL_DOMAIN``; 503 when the
database cannot store it (the forwarder should retry).  The route is off (404) while
``PBEM_WEBHOOK_SECRET`` is empty.

A forwarder in two shell lines (``openssl`` and ``curl``)::

    ts=$(date +%s); sig=$(printf '%s.' "$ts" | cat - mail.eml |
        openssl dgst -sha256 -hmac "$PBEM_WEBHOOK_SECRET" -hex | sed 's/^.* //')
    curl --data-binary @mail.eml -H "X-Pbem-Timestamp: $ts" -H "X-Pbem-Signature: $sig" \
        -H "X-Pbem-Mail-From: <$SENDER>" -H "X-Pbem-Rcpt-To: $RECIPIENTS" https://HOST/inbound/raw

Note: the signature covers the timestamp and the body but not the envelope headers.
Use HTTPS: over plain HTTP an eavesdropper could resend a fresh request with other
envelope headers before the original arrived.

``POST /inbound/mailgun``: Mailgun's "forward" action to a URL ending in ``mime`` (or a
Route's notify carrying the MIME): fields ``body-mime`` (or ``message``), ``recipient``,
``sender``, ``timestamp``, ``token``, ``signature``.  Mailgun's signature covers only
timestamp and token, not the message, so the route also requires HTTP basic auth
(``PBEM_MAILGUN_USER``/``PBEM_MAILGUN_PASSWORD``, put in the URL given to Mailgun:
``https://user:password@host/inbound/mailgun``).  A replayed token is refused (409).
Off (404) while ``PBEM_MAILGUN_SIGNING_KEY`` is empty.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterable
from email.utils import getaddresses
from typing import Any

from flask import Blueprint, Response, abort, jsonify, request
from kombu.exceptions import KombuError
from sqlalchemy import delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from werkzeug.exceptions import HTTPException
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData

from pbem.db.models import InboundSource, WebhookNonce
from pbem.db.session import transaction
from pbem.services.intake import envelope_address_problem, store_inbound
from workers.queueing import queue_inbound

from .runtime import WebRuntime, runtime
from .signatures import (
    NONCE_RETENTION,
    fresh,
    mailgun_signature,
    parse_timestamp,
    raw_signature,
    signatures_match,
)

__all__ = ["blueprint", "in_mail_domain", "parse_envelope_recipients", "raw_form_field"]

log = logging.getLogger("pbem.web")

blueprint = Blueprint("inbound", __name__, url_prefix="/inbound")

#: Room for Mailgun's other fields (parsed text and HTML bodies, attachments) beside the MIME.
MAILGUN_OVERHEAD_FACTOR = 4
MAILGUN_EXTRA_BYTES = 1024 * 1024
MAX_NONCE_LENGTH = 256  # webhook_nonces.nonce


class Refusal(Exception):
    """A request we answer with an error status and a short reason code."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers or {}


@blueprint.errorhandler(Refusal)
def _refused(error: Refusal) -> tuple[Response, int, dict[str, str]]:
    return jsonify(error=error.reason), error.status, error.headers


@blueprint.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[Response, int]:
    # Mail forwarders read JSON, not HTML error pages (413 from the size limit, 405, ...).
    return jsonify(error=(error.name or "error").lower().replace(" ", "_")), error.code or 500


# --- envelope ----------------------------------------------------------------------------


def parse_envelope_recipients(text: str) -> list[str]:
    """``a@x, <b@y>`` -> ``["a@x", "b@y"]``, lowercased, empty entries dropped."""
    return [address.strip().lower() for _, address in getaddresses([text]) if address.strip()]


def parse_envelope_sender(text: str) -> str:
    """The envelope sender; ``""`` for the null sender ``<>`` of bounces."""
    found = getaddresses([text])
    return found[0][1].strip() if found else ""


def in_mail_domain(address: str, domain: str) -> bool:
    """Whether ``address`` is ours: exactly ``local@domain``, as the SMTP front accepts
    at RCPT time (never an open relay, over HTTP either)."""
    local, at, address_domain = address.rpartition("@")
    return bool(at and local) and address_domain.lower() == domain.lower()


# --- storing and queueing ----------------------------------------------------------------


def _insert_for(session: Session) -> postgresql.Insert | sqlite.Insert:
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        return postgresql.insert(WebhookNonce)
    if dialect == "sqlite":
        return sqlite.insert(WebhookNonce)
    raise NotImplementedError(f"webhook nonces support PostgreSQL and SQLite, not {dialect}")


def remember_nonce(session: Session, source: str, nonce: str, rt: WebRuntime) -> bool:
    """Record ``nonce`` as used; False when it was already (a replay).

    ``INSERT .. ON CONFLICT DO NOTHING`` on the UNIQUE(source, nonce): of two identical
    requests racing, exactly one inserts.  Nonces older than any request we would still
    accept are deleted on the way, so the table stays small.
    """
    now = rt.clock.now()
    session.execute(delete(WebhookNonce).where(WebhookNonce.seen_at < now - NONCE_RETENTION))
    statement = (
        _insert_for(session)
        .values(source=source, nonce=nonce, seen_at=now)
        .on_conflict_do_nothing(index_elements=["source", "nonce"])
        .returning(WebhookNonce.id)
    )
    return session.scalars(statement).one_or_none() is not None


def accept_mail(
    rt: WebRuntime,
    *,
    source: InboundSource,
    nonce: str,
    raw: bytes,
    mail_from: str,
    recipients: Iterable[str],
) -> tuple[Response, int]:
    """Store the mail for the recipients in our domain, then queue it; the response.  An envelope
    address no row can hold is refused for good (400; ``intake.envelope_address_problem``)."""
    recipients = list(recipients)
    for address in (mail_from, *recipients):
        problem = envelope_address_problem(address)
        if problem is not None:
            log.info("%s webhook refused envelope address %r (%s)", source.value, address[:200], problem)
            raise Refusal(400, "bad_envelope_address")
    accepted: list[str] = []
    refused: list[str] = []
    for recipient in recipients:
        target = accepted if in_mail_domain(recipient, rt.settings.mail_domain) else refused
        if recipient not in target:
            target.append(recipient)
    if refused:
        log.info("%s webhook refused recipients outside %s: %s",
                 source.value, rt.settings.mail_domain, ", ".join(refused))
    if not accepted:
        return jsonify(error="no_recipient_in_domain", stored=[], refused=refused), 422
    try:
        with transaction(rt.session_factory) as session:
            if not remember_nonce(session, source.value, nonce, rt):
                raise Refusal(409, "replayed")
            ids = store_inbound(
                session,
                raw=raw,
                mail_from=mail_from,
                recipients=accepted,
                source=source.value,
                received_at=rt.clock.now(),
            )
    except SQLAlchemyError:
        log.exception("%s webhook could not store a mail for %s", source.value, accepted)
        raise Refusal(503, "cannot_store", {"Retry-After": "60"}) from None
    if ids:
        _queue(rt, ids)
    return jsonify(stored=ids, refused=refused), 200


def _queue(rt: WebRuntime, ids: list[int]) -> None:
    """Queue stored rows for the workers.  The rows are committed, so the sender is
    told "stored" whatever happens here; a row that could not be queued stays
    ``pending`` and the periodic sweep queues it."""
    try:
        queue_inbound(rt.celery(), ids)
    except (KombuError, OSError):  # the broker is down or refused: the sweep re-queues
        log.exception("stored inbound rows %s but could not queue them; the sweep will", ids)


# --- POST /inbound/raw -----------------------------------------------------------------


@blueprint.post("/raw")
def raw() -> tuple[Response, int]:
    rt = runtime()
    secret = rt.settings.webhook_secret
    if not secret:
        abort(404)
    request.max_content_length = rt.settings.max_message_size
    if (request.content_length or 0) > rt.settings.max_message_size:
        raise Refusal(413, "message_too_large")
    timestamp_text = request.headers.get("X-Pbem-Timestamp", "")
    signature = request.headers.get("X-Pbem-Signature", "")
    timestamp = parse_timestamp(timestamp_text)
    if timestamp is None or not signature:
        raise Refusal(401, "signature_missing")
    body = request.get_data(cache=False)  # a chunked body past the limit: 413 as well
    if not signatures_match(raw_signature(secret, timestamp_text.strip(), body), signature):
        raise Refusal(401, "bad_signature")
    if not fresh(timestamp, rt.clock.now()):
        raise Refusal(401, "stale_timestamp")
    if "X-Pbem-Rcpt-To" not in request.headers or "X-Pbem-Mail-From" not in request.headers:
        raise Refusal(400, "envelope_missing")
    recipients = parse_envelope_recipients(request.headers["X-Pbem-Rcpt-To"])
    if not recipients:
        raise Refusal(400, "envelope_missing")
    return accept_mail(
        rt,
        source=InboundSource.WEBHOOK,
        nonce="sig:" + signature.strip().lower(),
        raw=body,
        mail_from=parse_envelope_sender(request.headers["X-Pbem-Mail-From"]),
        recipients=recipients,
    )


# --- POST /inbound/mailgun ---------------------------------------------------------------


def _basic_auth_ok(user: str, password: str) -> bool:
    auth = request.authorization
    if auth is None or auth.type != "basic":
        return False
    given_user = (auth.username or "").encode("utf-8")
    given_password = (auth.password or "").encode("utf-8")
    user_ok = hmac.compare_digest(given_user, user.encode("utf-8"))
    password_ok = hmac.compare_digest(given_password, password.encode("utf-8"))
    return user_ok and password_ok


@blueprint.post("/mailgun")
def mailgun() -> tuple[Response, int]:
    rt = runtime()
    settings = rt.settings
    if not settings.mailgun_signing_key:
        abort(404)
    if not _basic_auth_ok(settings.mailgun_user, settings.mailgun_password):
        raise Refusal(401, "unauthorized", {"WWW-Authenticate": 'Basic realm="pbem inbound"'})
    request.max_content_length = (
        MAILGUN_OVERHEAD_FACTOR * settings.max_message_size + MAILGUN_EXTRA_BYTES
    )
    request.max_form_memory_size = settings.max_message_size + MAILGUN_EXTRA_BYTES
    # Keep the body: the message is taken from its bytes, not from the decoded form.
    body = request.get_data(cache=True)
    form = request.form
    timestamp_text = form.get("timestamp", "")
    token = form.get("token", "")
    signature = form.get("signature", "")
    timestamp = parse_timestamp(timestamp_text)
    if timestamp is None or not token or not signature or len(token) > MAX_NONCE_LENGTH - 6:
        raise Refusal(401, "signature_missing")
    expected = mailgun_signature(settings.mailgun_signing_key, timestamp_text.strip(), token)
    if not signatures_match(expected, signature):
        raise Refusal(401, "bad_signature")
    if not fresh(timestamp, rt.clock.now()):
        raise Refusal(401, "stale_timestamp")
    message = _mailgun_message(body)
    if message is None:
        raise Refusal(400, "message_missing")
    if len(message) > settings.max_message_size:
        raise Refusal(413, "message_too_large")
    recipients = parse_envelope_recipients(form.get("recipient", ""))
    if not recipients:
        raise Refusal(400, "envelope_missing")
    return accept_mail(
        rt,
        source=InboundSource.MAILGUN,
        nonce="token:" + token,
        raw=message,
        mail_from=parse_envelope_sender(form.get("sender", "")),
        recipients=recipients,
    )


def _mailgun_message(body: bytes) -> bytes | None:
    """The raw MIME of a Mailgun post, byte for byte (a message in an 8-bit charset
    must not go through the form decoder's UTF-8 text)."""
    for name in ("body-mime", "message"):
        found = raw_form_field(body, request.mimetype, request.mimetype_params, name)
        if found is not None:
            return found
    uploaded = request.files.get("message")
    if uploaded is not None:
        return uploaded.read()
    return None


def raw_form_field(
    body: bytes, mimetype: str, params: dict[str, Any], name: str
) -> bytes | None:
    """The undecoded bytes of form field ``name`` (first occurrence), or None."""
    if mimetype == "multipart/form-data":
        boundary = params.get("boundary")
        if not boundary:
            return None
        return _multipart_field(body, boundary.encode("latin-1"), name)
    if mimetype == "application/x-www-form-urlencoded":
        from urllib.parse import unquote_to_bytes

        wanted = name.encode("ascii")
        for pair in body.split(b"&"):
            key, _, value = pair.partition(b"=")
            if unquote_to_bytes(key.replace(b"+", b" ")) == wanted:
                return unquote_to_bytes(value.replace(b"+", b" "))
    return None


def _multipart_field(body: bytes, boundary: bytes, name: str) -> bytes | None:
    decoder = MultipartDecoder(boundary)
    decoder.receive_data(body)
    decoder.receive_data(None)
    collecting = False
    chunks: list[bytes] = []
    while True:
        event = decoder.next_event()
        if isinstance(event, (NeedData, Epilogue)):
            return None
        if isinstance(event, (Field, File)):
            collecting = isinstance(event, Field) and event.name == name
            chunks = []
        elif isinstance(event, Data) and collecting:
            chunks.append(event.data)
            if not event.more_data:
                return b"".join(chunks)
