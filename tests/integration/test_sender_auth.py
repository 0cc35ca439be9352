"""Sender authentication of received replies (README, "Mail that providers accept";
``pbem.services.sender_auth``): DMARC by a trusted relay's topmost Authentication-Results, or by pbem's
own DKIM checks and DMARC lookups, against a DNS server run here on 127.0.0.1 (dnspython's resolver
pointed at it, ``PBEM_DNS_SERVERS``): never the real network.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pbem.config import Settings
from pbem.mail.signing import DkimSigner
from pbem.services.sender_auth import NOT_CHECKED, SenderChecks, check_sender, parse_authentication_results

PLAYERS = "pbem-players.net"  # served by the stub only
TIMEOUT = "timeout"
SERVFAIL = "servfail"


class StubDns:
    """A DNS server on 127.0.0.1 (UDP) answering TXT queries from ``zone``: a list of strings, or
    ``TIMEOUT`` (no answer at all), or ``SERVFAIL``; a name not there is NXDOMAIN."""

    def __init__(self) -> None:
        self.zone: dict[str, object] = {}
        self.queries: list[str] = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._stop = False

    def __enter__(self) -> StubDns:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self.sock.sendto(b"", ("127.0.0.1", self.port))
        self._thread.join(10)
        self.sock.close()

    def _serve(self) -> None:
        while True:
            data, peer = self.sock.recvfrom(4096)
            if self._stop:
                return
            try:
                query = dns.message.from_wire(data)
            except Exception:
                continue
            name = query.question[0].name.to_text().rstrip(".").lower()
            self.queries.append(name)
            found = self.zone.get(name)
            if found == TIMEOUT:
                continue
            response = dns.message.make_response(query)
            if found == SERVFAIL:
                response.set_rcode(dns.rcode.SERVFAIL)
            elif found is None:
                response.set_rcode(dns.rcode.NXDOMAIN)
            else:
                texts = [found] if isinstance(found, str) else list(found)
                rrset = dns.rrset.from_text_list(query.question[0].name, 300, dns.rdataclass.IN,
                                                 dns.rdatatype.TXT,
                                                 [" ".join(f'"{t[i:i + 255]}"' for i in range(0, len(t), 255))
                                                  for t in texts])
                response.answer.append(rrset)
            self.sock.sendto(response.to_wire(), peer)


@pytest.fixture
def stub() -> Iterator[StubDns]:
    with StubDns() as server:
        yield server


def settings(tmp_path: Path, stub: StubDns, **extra: str) -> Settings:
    return Settings.from_env({"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x",
                              "PBEM_DNS_SERVERS": f"127.0.0.1:{stub.port}", "PBEM_DNS_TIMEOUT": "0.5"} | extra)


def checks(tmp_path: Path, stub: StubDns, **extra: str) -> SenderChecks:
    return SenderChecks.from_settings(settings(tmp_path, stub, **extra))


@pytest.fixture(scope="module")
def players_key() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def signer(pem: bytes, domain: str = PLAYERS, selector: str = "mail") -> DkimSigner:
    return DkimSigner.from_pem(pem, selector=selector, domain=domain)


def reply(sender: str = f"ana@{PLAYERS}", *, above: bytes = b"") -> bytes:
    return above + (
        f"From: Ana <{sender}>\r\nTo: hearts+1.0.3.abc@hearts.test\r\nSubject: Re: [Hearts #1]\r\n"
        "Date: Mon, 1 Jun 2026 10:00:00 +0000\r\nMessage-ID: <r1@pbem-players.net>\r\n\r\nQS\r\n"
    ).encode()


def publish(stub: StubDns, key: DkimSigner, policy: str = "v=DMARC1; p=reject", at: str = PLAYERS) -> None:
    stub.zone[key.record_name] = key.dns_record()
    stub.zone[f"_dmarc.{at}"] = policy


# -- pbem's own checks ------------------------------------------------------------------------------------


def test_a_signed_reply_passes_and_an_unsigned_one_fails_under_reject(tmp_path, stub, players_key) -> None:
    key = signer(players_key)
    publish(stub, key)
    check = checks(tmp_path, stub)
    signed = check.check(key.sign(reply()))
    assert (signed.result, signed.policy, signed.dkim, signed.by, signed.refused) == \
        ("pass", "reject", "pass", "pbem", False)
    unsigned = check.check(reply())
    assert (unsigned.result, unsigned.dkim, unsigned.refused) == ("fail", "none", True)
    assert unsigned.as_json() == {"dmarc": "fail", "by": "pbem", "domain": PLAYERS, "policy": "reject",
                                  "dkim": "none"}
    tampered = key.sign(reply()).replace(b"\r\n\r\nQS", b"\r\n\r\nAH")
    assert check.check(tampered).refused
    # Signed, validly, by a domain that is not the From's: not aligned.
    other = signer(players_key, domain="mallory-mail.net")
    stub.zone[other.record_name] = other.dns_record()
    assert check.check(other.sign(reply())).refused


def test_quarantine_is_enforced_and_none_is_not(tmp_path, stub, players_key) -> None:
    publish(stub, signer(players_key), "v=DMARC1; p=quarantine")
    assert checks(tmp_path, stub).check(reply()).refused
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=none; rua=mailto:d@pbem-players.net"
    found = checks(tmp_path, stub).check(reply())
    assert (found.result, found.policy, found.refused) == ("none", "none", False)
    del stub.zone[f"_dmarc.{PLAYERS}"]
    assert checks(tmp_path, stub).check(reply()) .result == "none"  # no record at all


def test_the_tree_walk_finds_a_parents_subdomain_policy(tmp_path, stub, players_key) -> None:
    key = signer(players_key)
    publish(stub, key, "v=DMARC1; p=none; sp=reject; adkim=r")
    check = checks(tmp_path, stub)
    sub = f"ana@eu.mx.{PLAYERS}"
    found = check.check(reply(sub))
    assert (found.domain, found.policy, found.refused) == (f"eu.mx.{PLAYERS}", "reject", True)
    assert f"_dmarc.eu.mx.{PLAYERS}" in stub.queries and f"_dmarc.mx.{PLAYERS}" in stub.queries
    assert check.check(key.sign(reply(sub))).result == "pass"  # d= the parent: relaxed alignment
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=none; sp=reject; adkim=s"
    assert checks(tmp_path, stub).check(key.sign(reply(sub))).refused  # strict: not aligned


def test_a_dns_time_out_or_servfail_is_no_failure(tmp_path, stub, players_key) -> None:
    stub.zone[f"_dmarc.{PLAYERS}"] = TIMEOUT
    found = checks(tmp_path, stub).check(reply())
    assert (found.result, found.refused) == ("temperror", False)
    stub.zone[f"_dmarc.{PLAYERS}"] = SERVFAIL
    assert checks(tmp_path, stub).check(reply()).result == "temperror"
    # The policy is known, but the key's lookup times out: not a failure either.
    key = signer(players_key)
    publish(stub, key)
    stub.zone[key.record_name] = TIMEOUT
    found = checks(tmp_path, stub).check(key.sign(reply()))
    assert (found.result, found.dkim, found.refused) == ("temperror", "temperror", False)


def test_lookups_are_cached(tmp_path, stub, players_key) -> None:
    key = signer(players_key)
    publish(stub, key)
    check = checks(tmp_path, stub)
    for _ in range(3):
        assert check.check(key.sign(reply())).result == "pass"
        assert check.check(reply()).refused
    assert stub.queries.count(f"_dmarc.{PLAYERS}") == 1 and stub.queries.count(key.record_name) == 1
    assert check.dns.lookups == 2
    stub.zone[f"_dmarc.{PLAYERS}"] = TIMEOUT  # a temporary error is kept 30 s, a record for its TTL
    assert check.check(reply()).refused


def test_special_use_domains_are_never_looked_up(tmp_path, stub) -> None:
    check = checks(tmp_path, stub)
    for sender in ("ana@example.com", "bob@players.example.org", "carla@hearts.test", "d@x.invalid"):
        assert check.check(reply(sender)).result == "none"
    assert stub.queries == []


def test_only_a_seats_or_an_invitations_mail_is_checked(tmp_path, stub) -> None:
    class Svc:
        def __init__(self) -> None:
            self.settings = settings(tmp_path, stub)
            self.sender_checks = SenderChecks.from_settings(self.settings)

    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=reject"
    svc = Svc()
    assert check_sender(svc, reply(), "new@hearts.test") is NOT_CHECKED
    assert check_sender(svc, reply(), "help@hearts.test") is NOT_CHECKED
    assert stub.queries == []
    assert check_sender(svc, reply(), "hearts+1.0.3.abc@hearts.test").refused
    assert check_sender(svc, reply(), "invite+7.abc@hearts.test").refused


# -- a trusted relay's Authentication-Results ----------------------------------------------------------------


def ar(authserv_id: str, results: str) -> bytes:
    return f"Authentication-Results: {authserv_id};\r\n {results}\r\n".encode()


TRUSTED = "mx.hearts.example.net"


def test_the_topmost_results_of_the_trusted_relay_count_and_a_forged_one_below_does_not(tmp_path, stub) -> None:
    check = checks(tmp_path, stub, PBEM_TRUSTED_AUTHSERV_ID=TRUSTED)
    forged_pass = ar(TRUSTED, f"dkim=pass header.d={PLAYERS}; spf=pass; dmarc=pass header.from={PLAYERS}")
    relay_fail = ar(TRUSTED, f"spf=fail smtp.mailfrom={PLAYERS}; dkim=none;\r\n"
                             f" dmarc=fail (p=REJECT sp=REJECT dis=NONE) header.from={PLAYERS}")
    found = check.check(reply(above=b"Received: from mx\r\n" + relay_fail + b"Received: from evil\r\n" + forged_pass))
    assert (found.result, found.policy, found.by, found.refused) == ("fail", "reject", "relay", True)
    # The other way round: the relay says pass; what the sender wrote beneath says fail.
    found = check.check(reply(above=ar(TRUSTED, f"dmarc=pass header.from={PLAYERS}") + relay_fail))
    assert (found.result, found.by, found.refused) == ("pass", "relay", False)
    assert stub.queries == []  # the relay's word needs no lookup


def test_results_with_the_trusted_id_that_are_not_on_top_do_not_count(tmp_path, stub) -> None:
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=reject"
    check = checks(tmp_path, stub, PBEM_TRUSTED_AUTHSERV_ID=TRUSTED)
    raw = reply(above=ar("elsewhere.example.net", "dmarc=none") +
                ar(TRUSTED, f"dkim=pass header.d={PLAYERS}; dmarc=pass header.from={PLAYERS}"))
    found = check.check(raw)  # not the relay's on top: pbem checks itself, and the mail is unsigned
    assert (found.result, found.by, found.refused) == ("fail", "pbem", True)


def test_a_relays_fail_without_its_policy_looks_the_policy_up(tmp_path, stub) -> None:
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=quarantine"
    check = checks(tmp_path, stub, PBEM_TRUSTED_AUTHSERV_ID=TRUSTED)
    found = check.check(reply(above=ar(TRUSTED, f"dmarc=fail header.from={PLAYERS}")))
    assert (found.result, found.policy, found.refused) == ("fail", "quarantine", True)
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=none"
    found = checks(tmp_path, stub, PBEM_TRUSTED_AUTHSERV_ID=TRUSTED).check(
        reply(above=ar(TRUSTED, f"dmarc=fail policy.dmarc=none header.from={PLAYERS}")))
    assert (found.result, found.refused) == ("fail", False)
    temporary = checks(tmp_path, stub, PBEM_TRUSTED_AUTHSERV_ID=TRUSTED).check(
        reply(above=ar(TRUSTED, f"dmarc=temperror header.from={PLAYERS}")))
    assert (temporary.result, temporary.refused) == ("temperror", False)


def test_authentication_results_are_read_per_rfc_8601() -> None:
    parsed = parse_authentication_results(
        " mx.google.com (version 1);\r\n dkim=pass (2048-bit key) header.i=@x.net header.s=s1;\r\n"
        " spf=pass (google.com: domain of a@x.net designates 1.2.3.4) smtp.mailfrom=a@x.net;\r\n"
        " dmarc=fail (p=QUARANTINE sp=NONE dis=QUARANTINE) header.from=X.net")
    assert parsed is not None and parsed.authserv_id == "mx.google.com"
    result, properties, comment = parsed.result("dmarc")
    assert (result, properties["header.from"]) == ("fail", "x.net") and "QUARANTINE" in comment
    assert parse_authentication_results(" ; dmarc=pass") is None
