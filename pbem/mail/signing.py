"""DKIM signatures on outgoing mail (RFC 6376), made with dkimpy (README, "Mail that providers accept").

``load_signer(settings)`` reads ``PBEM_DKIM_KEY_FILE`` (a PEM RSA private key) once per process and
key file version; without a key file it returns None and mail goes out unsigned.
``DkimSigner.sign(raw)`` returns the message with one ``DKIM-Signature`` header on top.

The outbox stores each mail unsigned and signs the bytes it hands to the relay, at every attempt
(``pbem.services.outbox``): a retried mail carries one signature, made when it went out, never two,
and a key changed meanwhile (a rotation) signs it with the new key.

What is signed: the body, and the header fields named in ``SIGNED_HEADERS`` (From, To, Subject, Date,
Message-ID, the List-Unsubscribe pair, and the others a reader acts on), each named twice in ``h=``
("oversigned"): a verifier counts a missing instance as empty, so a field added on the way (a
second From, a List-Unsubscribe a relay slipped in) breaks the signature instead of riding on it.
Canonicalization is relaxed/relaxed, which survives relays that refold headers or change line ends
and trailing spaces.  The signature has no expiry (``x=``) and no body length (``l=``: a length
would let anyone append to the body).

Signing costs about 10 ms a mail with a 2048-bit key on the 2-core development machine: dkimpy's
RSA is Python's own big-integer arithmetic.
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from pathlib import Path

import dkim
from dkim.crypto import UnparsableKeyError, parse_pem_private_key

from pbem.config import Settings

__all__ = [
    "KEYGEN_COMMAND",
    "SIGNED_HEADERS",
    "DkimSigner",
    "SigningError",
    "SigningKeyError",
    "dkim_record",
    "load_signer",
    "public_key_der",
    "txt_strings",
]

#: Header fields the signature covers, each listed twice in ``h=`` (see the module docstring).
SIGNED_HEADERS: tuple[str, ...] = (
    "from",
    "to",
    "subject",
    "date",
    "message-id",
    "list-unsubscribe",
    "list-unsubscribe-post",
    "reply-to",
    "in-reply-to",
    "references",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "auto-submitted",
)

#: The command that makes a key pbem can sign with (``pbem dkim keygen`` runs it).
KEYGEN_COMMAND = ("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048")

_CANONICALIZE = (b"relaxed", b"relaxed")


class SigningError(ValueError):
    """dkimpy refused to sign a message (one it cannot parse as RFC 5322)."""


class SigningKeyError(ValueError):
    """``PBEM_DKIM_KEY_FILE`` cannot be read or is no RSA private key; the message names the file."""


@dataclass(frozen=True)
class DkimSigner:
    """Signs messages for ``domain`` with the key published at ``selector._domainkey.domain``."""

    selector: str
    domain: str
    private_key: bytes  # PEM, PKCS#1 or PKCS#8
    modulus: int
    public_exponent: int

    @classmethod
    def from_pem(cls, pem: bytes, *, selector: str, domain: str) -> DkimSigner:
        """A signer for the PEM RSA key ``pem``; ``SigningKeyError`` when it is none."""
        try:
            key = parse_pem_private_key(pem.replace(b"\r\n", b"\n"))
        except (UnparsableKeyError, ValueError, IndexError, TypeError) as error:
            raise SigningKeyError(f"not a PEM RSA private key ({error})") from error
        if not selector or not domain:
            raise SigningKeyError("the DKIM selector and domain must not be empty")
        return cls(selector=selector, domain=domain, private_key=pem.replace(b"\r\n", b"\n"),
                   modulus=key["modulus"], public_exponent=key["publicExponent"])

    @property
    def bits(self) -> int:
        return self.modulus.bit_length()

    @property
    def record_name(self) -> str:
        """Where the public key is published: ``<selector>._domainkey.<domain>``."""
        return f"{self.selector}._domainkey.{self.domain}"

    def signature(self, raw: bytes) -> bytes:
        """The ``DKIM-Signature`` header field for ``raw`` (CRLF-terminated)."""
        include = [name.encode("ascii") for name in SIGNED_HEADERS for _ in (1, 2)]
        return dkim.sign(raw, self.selector.encode("ascii"), self.domain.encode("ascii"), self.private_key,
                         canonicalize=_CANONICALIZE, include_headers=include, linesep=b"\r\n")

    def sign(self, raw: bytes) -> bytes:
        """``raw`` with its signature on top; ``SigningError`` when dkimpy cannot sign it."""
        try:
            return self.signature(raw) + raw
        except dkim.DKIMException as error:
            raise SigningError(str(error) or type(error).__name__) from error

    def dns_record(self) -> str:
        """The TXT record's text that publishes the public key."""
        return dkim_record(self.modulus, self.public_exponent)


def load_signer(settings: Settings) -> DkimSigner | None:
    """The signer ``PBEM_DKIM_*`` describe, or None when no key file is set.  The key is read once
    per version of the file (its modification time and size), so a replaced key is used from the
    next batch of mails on.  ``SigningKeyError`` when the file is unreadable or holds no key."""
    path = settings.dkim_key_file
    if path is None:
        return None
    try:
        stat = Path(path).stat()
    except OSError as error:
        raise SigningKeyError(f"PBEM_DKIM_KEY_FILE {path}: {error.strerror or error}") from error
    return _load(str(path), stat.st_mtime_ns, stat.st_size, settings.dkim_selector, settings.dkim_domain)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int, selector: str, domain: str) -> DkimSigner:
    try:
        pem = Path(path).read_bytes()
    except OSError as error:
        raise SigningKeyError(f"PBEM_DKIM_KEY_FILE {path}: {error.strerror or error}") from error
    try:
        return DkimSigner.from_pem(pem, selector=selector, domain=domain)
    except SigningKeyError as error:
        raise SigningKeyError(f"PBEM_DKIM_KEY_FILE {path}: {error}") from error


# -- the public key as DNS publishes it (RFC 6376 §3.6.1: p= is a SubjectPublicKeyInfo, base64) ------


def _der(tag: int, body: bytes) -> bytes:
    length = len(body)
    if length < 0x80:
        head = bytes([length])
    else:
        octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
        head = bytes([0x80 | len(octets)]) + octets
    return bytes([tag]) + head + body


def _der_integer(value: int) -> bytes:
    return _der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))  # a leading 0 keeps it positive


_RSA_ALGORITHM = _der(0x30, _der(0x06, bytes.fromhex("2a864886f70d010101")) + _der(0x05, b""))  # rsaEncryption


def public_key_der(modulus: int, public_exponent: int) -> bytes:
    """The DER SubjectPublicKeyInfo of an RSA public key."""
    rsa_key = _der(0x30, _der_integer(modulus) + _der_integer(public_exponent))
    return _der(0x30, _RSA_ALGORITHM + _der(0x03, b"\x00" + rsa_key))


def dkim_record(modulus: int, public_exponent: int) -> str:
    """``v=DKIM1; k=rsa; p=<base64 key>``: the text of the key's TXT record."""
    return "v=DKIM1; k=rsa; p=" + base64.b64encode(public_key_der(modulus, public_exponent)).decode("ascii")


_TXT_CHUNK = 255


def txt_strings(text: str) -> list[str]:
    """``text`` cut into the at most 255-byte character-strings one TXT record is made of."""
    return [text[i:i + _TXT_CHUNK] for i in range(0, len(text), _TXT_CHUNK)] or [""]

