"""DKIM on outgoing mail (README, "Mail that providers accept"): what the relay receives over real SMTP
on 127.0.0.1 is signed, and three verifiers agree that the signature is valid with the public key
``pbem dns`` publishes, looked up through a DNS stub (dkimpy's ``dnsfunc``): dkimpy, ``authheaders``
(DKIM and DMARC, as a receiving provider's filter would say them), and one written here from RFC 6376
(§3.4.2 and §3.4.4 relaxed canonicalization, §3.5 tags, §3.7 hashes) on ``cryptography``'s RSA, which
shares no code with dkimpy.

Every kind of mail is sent (one context of each from ``pbem.mail.samples``, in the three languages,
and every one with a List-Unsubscribe pair), a retried one, a mail whose key changed between attempts,
and the mails a game by mail writes through the services.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import authheaders
import dkim
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pbem.db.models import OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.mail.compose import MailComposer
from pbem.mail.samples import sample_contexts
from pbem.mail.signing import SIGNED_HEADERS, DkimSigner, load_signer
from pbem.resources import templates_dir
from pbem.services.app import Services
from pbem.services.outbox import SendResult, send_outbound, send_outbound_batch
from tests.harness.services import DOMAIN
from tests.harness.smtp_sink import CapturedMessage, SmtpSink
from tests.integration.test_outbox_send import ScriptedRelay, start_relay  # noqa: F401  (the fixture)

SELECTOR = "hearts2026"
FIXED = datetime(2026, 5, 17, 18, 30, 5, tzinfo=timezone.utc)


def make_key(path: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return path


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_key(tmp_path_factory.mktemp("dkim") / "dkim.pem")


@pytest.fixture(scope="module")
def sink() -> Iterator[SmtpSink]:
    with SmtpSink("relay.test") as started:
        yield started


class Zone:
    """The DNS stub: TXT records by name, as dkimpy's and authheaders' ``dnsfunc`` read them."""

    def __init__(self) -> None:
        self.txt: dict[str, str] = {}
        self.asked: list[str] = []

    def publish(self, name: str, text: str) -> None:
        self.txt[name.rstrip(".").lower()] = text

    def dnsfunc(self, name: bytes | str, timeout: float = 5) -> bytes | str | None:
        text_name = name.decode("ascii") if isinstance(name, bytes) else name
        self.asked.append(text_name)
        found = self.txt.get(text_name.rstrip(".").lower())
        if found is None:
            return None
        return found.encode("ascii") if isinstance(name, bytes) else found


def zone_for(signer: DkimSigner) -> Zone:
    zone = Zone()
    zone.publish(signer.record_name, signer.dns_record())
    zone.publish(f"_dmarc.{DOMAIN}", "v=DMARC1; p=reject; adkim=s")
    return zone


def dkim_env(key_file: Path, port: int) -> dict[str, str]:
    return {"PBEM_DKIM_KEY_FILE": str(key_file), "PBEM_DKIM_SELECTOR": SELECTOR,
            "PBEM_RELAY_HOST": "127.0.0.1", "PBEM_RELAY_PORT": str(port)}


def add_outbound(svc: Services, raw: bytes, recipient: str, kind: str, message_id: str) -> int:
    with transaction(svc.session_factory) as session:
        row = OutboundMessage(recipient=recipient, kind=kind, message_id=message_id, raw=raw,
                              next_attempt_at=svc.clock.now())
        session.add(row)
        session.flush()
        return row.id


# -- the second and third verifiers ------------------------------------------------------------------


def authheaders_result(raw: bytes, zone: Zone) -> str:
    """What a receiving filter built on ``authheaders`` writes: its Authentication-Results."""
    return authheaders.authenticate_message(raw, "verifier.test", dkim=True, dmarc=True, spf=False,
                                            dnsfunc=zone.dnsfunc)


def _split(raw: bytes) -> tuple[list[bytes], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    fields: list[bytes] = []
    for line in head.split(b"\r\n"):
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1] += b"\r\n" + line
        else:
            fields.append(line)
    return fields, body


def _relaxed_header(field: bytes) -> bytes:
    """RFC 6376 §3.4.2."""
    name, _, value = field.partition(b":")
    value = re.sub(rb"[ \t]+", b" ", value.replace(b"\r\n", b""))
    return name.strip().lower() + b":" + value.strip(b" \t") + b"\r\n"


def _relaxed_body(body: bytes) -> bytes:
    """RFC 6376 §3.4.4."""
    lines = [re.sub(rb"[ \t]+", b" ", line).rstrip(b" \t") for line in body.split(b"\r\n")]
    while lines and lines[-1] == b"":
        lines.pop()
    return b"".join(line + b"\r\n" for line in lines)


def independent_verify(raw: bytes, zone: Zone) -> dict[str, str]:
    """Verify the topmost DKIM-Signature from RFC 6376 alone; its tags when valid (else AssertionError)."""
    fields, body = _split(raw)
    signature = next(f for f in fields if f.lower().startswith(b"dkim-signature:"))
    value = signature.partition(b":")[2].decode("ascii")
    tags = {k.strip(): re.sub(r"\s+", "", v) for k, _, v in
            (part.partition("=") for part in value.split(";") if part.strip())}
    assert tags["v"] == "1" and tags["a"] == "rsa-sha256" and tags["c"] == "relaxed/relaxed"
    assert "l" not in tags  # a body length would let anyone append to the body
    body_hash = base64.b64encode(hashlib.sha256(_relaxed_body(body)).digest()).decode("ascii")
    assert body_hash == tags["bh"], "body hash"
    # Header fields named in h=, each time the last one not used yet, bottom up (§5.4.2).
    remaining = [f for f in fields if f is not signature]
    hashed = b""
    for name in tags["h"].split(":"):
        for index in range(len(remaining) - 1, -1, -1):
            if remaining[index].partition(b":")[0].strip().lower() == name.lower().encode("ascii"):
                hashed += _relaxed_header(remaining.pop(index))
                break
    unsigned = re.sub(rb"(\bb=)[^;]*", rb"\1", signature)  # b= emptied; everything else as sent
    hashed += _relaxed_header(unsigned).removesuffix(b"\r\n")
    record = zone.txt[f"{tags['s']}._domainkey.{tags['d']}"]
    key_tags = dict(part.strip().partition("=")[::2] for part in record.split(";"))
    public = serialization.load_der_public_key(base64.b64decode(key_tags["p"]))
    assert isinstance(public, rsa.RSAPublicKey) and public.key_size >= 2048
    public.verify(base64.b64decode(tags["b"]), hashed, padding.PKCS1v15(), hashes.SHA256())  # raises if bad
    return tags


def assert_signed(message: CapturedMessage, zone: Zone) -> dict[str, str]:
    raw = message.raw
    assert raw.count(b"DKIM-Signature:") == 1 and raw.startswith(b"DKIM-Signature:"), "one signature, on top"
    assert dkim.verify(raw, dnsfunc=zone.dnsfunc), "dkimpy"
    results = authheaders_result(raw, zone)
    assert f"dkim=pass header.d={DOMAIN}" in results and "dmarc=pass" in results, results
    tags = independent_verify(raw, zone)
    assert tags["d"] == DOMAIN and tags["s"] == SELECTOR
    named = tags["h"].lower().split(":")
    for header in ("from", "to", "subject", "date", "message-id", "list-unsubscribe", "list-unsubscribe-post"):
        assert named.count(header) == 2, header  # signed, and no second one can be added
    return tags


def tampered(raw: bytes, old: bytes, new: bytes) -> bytes:
    assert old in raw
    return raw.replace(old, new, 1)


# -- tests ---------------------------------------------------------------------------------------------


def test_every_kind_of_mail_goes_out_signed(services, key_file: Path, sink: SmtpSink) -> None:
    svc = services(**dkim_env(key_file, sink.port))
    signer = load_signer(svc.settings)
    assert signer is not None and signer.record_name == f"{SELECTOR}._domainkey.{DOMAIN}"
    zone = zone_for(signer)
    composer = MailComposer(templates_dir(), domain=DOMAIN, clock=lambda: FIXED)
    sent: dict[str, str] = {}  # message id -> kind
    ids = []
    for language in ("en", "pt", "ro"):
        for kind, contexts in sample_contexts(language).items():
            for number, context in enumerate(contexts):
                if number > 0 and (language != "en" or context.unsubscribe is None):
                    continue  # the first of each kind in each language, and every unsubscribe pair
                mail = composer.compose(kind, context, thread="<game-42-root@hearts.test>")
                assert b"DKIM-Signature" not in mail.raw  # stored unsigned
                ids.append(add_outbound(svc, mail.raw, mail.recipient, kind, mail.message_id))
                sent[mail.message_id] = kind
    sink.clear()
    results = send_outbound_batch(svc, ids)
    assert set(results.values()) == {SendResult.SENT}
    received = sink.wait_for_messages(len(ids), timeout=60)
    assert len(received) == len(ids)
    kinds = set()
    unsubscribe = 0
    for message in received:
        tags = assert_signed(message, zone)
        parsed = message.parsed()
        kinds.add(sent[parsed["Message-ID"]])
        if parsed["List-Unsubscribe"] is not None:
            unsubscribe += 1
            assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
            assert not dkim.verify(tampered(message.raw, b"List-Unsubscribe: <", b"List-Unsubscribe:  <x"),
                                   dnsfunc=zone.dnsfunc)
        assert tags["h"].lower().split(":") == [name for name in SIGNED_HEADERS for _ in (1, 2)]
    assert kinds == set(sample_contexts("en")), "every kind"
    assert unsubscribe >= 1
    with svc.session_factory() as session:  # what is stored stays unsigned: a retry signs afresh
        assert all(b"DKIM-Signature" not in bytes(session.get(OutboundMessage, i).raw) for i in ids)


def test_what_the_signature_covers_cannot_be_changed(services, key_file: Path, sink: SmtpSink) -> None:
    svc = services(**dkim_env(key_file, sink.port))
    zone = zone_for(load_signer(svc.settings))
    composer = MailComposer(templates_dir(), domain=DOMAIN, clock=lambda: FIXED)
    mail = composer.compose("your_turn", sample_contexts("en")["your_turn"][0])
    sink.clear()
    assert send_outbound(svc, add_outbound(svc, mail.raw, mail.recipient, "your_turn", mail.message_id)) \
        == SendResult.SENT
    [message] = sink.wait_for_messages(1)
    raw = message.raw
    assert_signed(message, zone)
    for old, new in [
        (b"\r\nFrom: ", b"\r\nFrom: Mallory <m@evil.test>\r\nX-Old-From: "),  # From replaced
        (b"\r\nTo: ", b"\r\nTo: mallory@evil.test, "),
        (b"\r\nSubject: ", b"\r\nSubject: Urgent! "),
        (b"\r\nDate: ", b"\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\nX-Date: "),
        (b"\r\nMessage-ID: <", b"\r\nMessage-ID: <x"),
        (b"\r\nReply-To: ", b"\r\nReply-To: mallory@evil.test, "),
        (b"\r\nMessage-ID: ", b"\r\nFrom: second@evil.test\r\nMessage-ID: "),  # a second From added
        (b"\r\nMIME-Version: ", b"\r\nList-Unsubscribe: <https://evil.test/u>\r\nMIME-Version: "),
        (b"Content-Transfer-Encoding: quoted-printable\r\n\r\n", b"Content-Transfer-Encoding: quoted-printable"
                                                                   b"\r\n\r\nPlay QS now!\r\n"),  # the body
    ]:
        assert not dkim.verify(tampered(raw, old, new), dnsfunc=zone.dnsfunc), new
    # Relaxed canonicalization: what relays do to whitespace and header case does not break it.
    relayed = tampered(raw, b"\r\nSubject: ", b"\r\nsubject:   ")
    assert dkim.verify(b"Received: from relay.test\r\n" + relayed, dnsfunc=zone.dnsfunc)
    # With the key unpublished, or another key at the selector, nothing verifies.
    assert not dkim.verify(raw, dnsfunc=Zone().dnsfunc)
    other = DkimSigner.from_pem(make_key(svc.settings.data_dir / "other.pem").read_bytes(),
                                selector=SELECTOR, domain=DOMAIN)
    assert not dkim.verify(raw, dnsfunc=zone_for(other).dnsfunc)


def test_a_retried_mail_is_signed_once_and_validly(services, key_file: Path, start_relay, tmp_path: Path) -> None:  # noqa: F811
    relay, port = start_relay(ScriptedRelay(rcpt_answers=["451 4.3.0 try later"]))
    rotated = tmp_path / "rotating.pem"
    rotated.write_bytes(key_file.read_bytes())
    svc = services(**dkim_env(rotated, port))
    first = load_signer(svc.settings)
    composer = MailComposer(templates_dir(), domain=DOMAIN, clock=lambda: FIXED)
    mail = composer.compose("trick_done", sample_contexts("en")["trick_done"][0])
    outbound_id = add_outbound(svc, mail.raw, mail.recipient, "trick_done", mail.message_id)

    assert send_outbound(svc, outbound_id) == SendResult.RETRY
    assert relay.accepted == []
    # Meanwhile the operator rotates the key (a new file at the same path, a new selector's record).
    make_key(rotated)
    second = load_signer(svc.settings)
    assert second is not None and second.modulus != first.modulus
    svc.clock.advance(minutes=1)  # type: ignore[attr-defined]
    assert send_outbound(svc, outbound_id) == SendResult.SENT
    [(sender, recipients, raw)] = relay.accepted
    with svc.session_factory() as session:
        row = session.get(OutboundMessage, outbound_id)
        assert (row.status, row.attempts) == (OutboundStatus.SENT, 2)
    message = CapturedMessage(mail_from=sender, rcpt_tos=tuple(recipients), raw=bytes(raw))
    assert_signed(message, zone_for(second))  # signed when it went out, with the key of then
    assert not dkim.verify(message.raw, dnsfunc=zone_for(first).dnsfunc)
    assert message.raw.partition(b"\r\n\r\n")[2] == mail.raw.partition(b"\r\n\r\n")[2]


def test_a_key_that_cannot_be_read_holds_the_mail_back(services, sink: SmtpSink, tmp_path: Path) -> None:
    missing = tmp_path / "no-such.pem"
    svc = services(**dkim_env(missing, sink.port))
    composer = MailComposer(templates_dir(), domain=DOMAIN, clock=lambda: FIXED)
    mail = composer.compose("help", sample_contexts("en")["help"][0])
    outbound_id = add_outbound(svc, mail.raw, mail.recipient, "help", mail.message_id)
    sink.clear()
    assert send_outbound(svc, outbound_id) == SendResult.RETRY
    with svc.session_factory() as session:
        row = session.get(OutboundMessage, outbound_id)
        assert row.status is OutboundStatus.PENDING and "PBEM_DKIM_KEY_FILE" in (row.last_error or "")
    # The operator puts the key in place: the next attempt goes, signed.
    make_key(missing)
    svc.clock.advance(minutes=1)  # type: ignore[attr-defined]
    assert send_outbound(svc, outbound_id) == SendResult.SENT
    [message] = sink.wait_for_messages(1)
    assert_signed(message, zone_for(load_signer(svc.settings)))


def test_without_a_key_mail_goes_unsigned(services, sink: SmtpSink) -> None:
    svc = services(PBEM_RELAY_HOST="127.0.0.1", PBEM_RELAY_PORT=str(sink.port))
    assert load_signer(svc.settings) is None
    composer = MailComposer(templates_dir(), domain=DOMAIN, clock=lambda: FIXED)
    mail = composer.compose("help", sample_contexts("en")["help"][0])
    sink.clear()
    assert send_outbound(svc, add_outbound(svc, mail.raw, mail.recipient, "help", mail.message_id)) \
        == SendResult.SENT
    [message] = sink.wait_for_messages(1)
    assert message.raw == mail.raw


def test_the_signature_dates_from_sending(services, key_file: Path, sink: SmtpSink) -> None:
    """t= is when the mail went out; the Date header (the composer's clock) is unchanged."""
    svc = services(**dkim_env(key_file, sink.port))
    composer = MailComposer(templates_dir(), domain=DOMAIN, clock=lambda: FIXED)
    mail = composer.compose("help", sample_contexts("en")["help"][0])
    sink.clear()
    before = datetime.now(timezone.utc).timestamp()
    send_outbound(svc, add_outbound(svc, mail.raw, mail.recipient, "help", mail.message_id))
    [message] = sink.wait_for_messages(1)
    tags = assert_signed(message, zone_for(load_signer(svc.settings)))
    assert int(tags["t"]) >= int(before)
    assert email.utils.parsedate_to_datetime(message.parsed()["Date"]) == FIXED


