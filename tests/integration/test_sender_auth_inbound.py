"""A reply whose From domain fails DMARC under p=reject or p=quarantine changes nothing, is recorded,
and is answered like a forged sender, at the registered address (README, "Mail that providers
accept"); one that passes, or whose DNS lookup failed for now, is played.  Through the services on the
test's database, with a DNS server on 127.0.0.1 (``tests/integration/test_sender_auth.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pbem.db.models import InboundStatus
from pbem.db.session import transaction
from pbem.engine import PASS, Rules
from pbem.mail.signing import DkimSigner
from pbem.services.app import Services
from pbem.services.games import SeatSpec, create_game, start_game
from tests.harness.players import Received, reply_bytes
from tests.integration.mailplay import deliver, last_outcome, make_services, outbox, parsed, state_of
from tests.integration.test_sender_auth import PLAYERS, TIMEOUT, StubDns

ANA = f"ana@{PLAYERS}"
TRUSTED = "mx.hearts.example.net"


@pytest.fixture
def stub() -> Iterator[StubDns]:
    with StubDns() as server:
        yield server


@pytest.fixture(scope="module")
def players_signer() -> DkimSigner:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return DkimSigner.from_pem(pem, selector="mail", domain=PLAYERS)


def services_for(db_url: str, tmp_path: Path, stub: StubDns, **env: str) -> Services:
    return make_services(db_url, tmp_path, PBEM_DNS_SERVERS=f"127.0.0.1:{stub.port}", PBEM_DNS_TIMEOUT="0.5",
                         **env)


def ana_game(svc: Services):
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=Rules.make("standard"),
                           seats=[SeatSpec(address=ANA, name="Ana")] + [SeatSpec(bot="random")] * 3,
                           seed="dmarc", title="DMARC table")
        mails = start_game(session, svc, game)
        game_id = game.id
    [turn] = [m for m in outbox(svc, [m.id for m in mails]) if m.recipient == ANA and m.kind == "your_turn"]
    return game_id, turn


def pass_reply(turn, *, sign: DkimSigner | None = None, above: bytes = b"") -> tuple[bytes, str]:
    received = Received.parse(turn.raw)
    cards = parsed(turn)["X-Hearts-Legal"].split()[:3]
    raw = reply_bytes(received, sender=ANA, body="pass: " + " ".join(cards))
    if sign is not None:
        raw = sign.sign(raw)
    return above + raw, received.reply_to


def still_to_pass(svc: Services, game_id: int) -> bool:
    state = state_of(svc, game_id)
    return state.phase == PASS and 0 in state.seats_to_pass()


def test_a_reply_failing_dmarc_reject_changes_nothing_and_is_told_to_the_player(
        db_url, tmp_path, stub, players_signer) -> None:
    stub.zone[players_signer.record_name] = players_signer.dns_record()
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=reject"
    svc = services_for(db_url, tmp_path, stub)
    try:
        game_id, turn = ana_game(svc)
        raw, to = pass_reply(turn)  # unsigned: anyone could have written it
        mails = deliver(svc, raw, ANA, to)
        outcome = last_outcome(svc)
        assert outcome["status"] == InboundStatus.REJECTED and outcome["code"] == "FORGED_SENDER"
        assert outcome["authentication"] == {"dmarc": "fail", "by": "pbem", "domain": PLAYERS,
                                                        "policy": "reject", "dkim": "none"}
        assert still_to_pass(svc, game_id)
        assert [(m.recipient, parsed(m)["X-Hearts-Kind"]) for m in mails] == [(ANA, "request_rejected")]
        assert parsed(mails[0])["In-Reply-To"] is not None  # in the game's thread

        raw, to = pass_reply(turn, sign=players_signer)  # Ana's own provider signs it
        deliver(svc, raw, ANA, to)
        assert last_outcome(svc)["status"] == InboundStatus.DONE
        assert not still_to_pass(svc, game_id)
    finally:
        svc.close()


def test_a_dns_time_out_lets_the_reply_through(db_url, tmp_path, stub) -> None:
    stub.zone[f"_dmarc.{PLAYERS}"] = TIMEOUT
    svc = services_for(db_url, tmp_path, stub)
    try:
        game_id, turn = ana_game(svc)
        raw, to = pass_reply(turn)
        deliver(svc, raw, ANA, to)
        assert last_outcome(svc)["status"] == InboundStatus.DONE
        assert not still_to_pass(svc, game_id)
    finally:
        svc.close()


def test_the_trusted_relays_verdict_on_top_decides(db_url, tmp_path, stub) -> None:
    stub.zone[f"_dmarc.{PLAYERS}"] = "v=DMARC1; p=quarantine"
    svc = services_for(db_url, tmp_path, stub, PBEM_TRUSTED_AUTHSERV_ID=TRUSTED)
    try:
        game_id, turn = ana_game(svc)
        forged_pass = f"Authentication-Results: {TRUSTED}; dmarc=pass header.from={PLAYERS}\r\n".encode()
        relay_fail = f"Authentication-Results: {TRUSTED}; dmarc=fail header.from={PLAYERS}\r\n".encode()
        raw, to = pass_reply(turn, above=relay_fail + b"Received: from somewhere\r\n" + forged_pass)
        deliver(svc, raw, ANA, to)
        outcome = last_outcome(svc)
        assert outcome["code"] == "FORGED_SENDER" and outcome["authentication"]["by"] == "relay"
        assert still_to_pass(svc, game_id)
        raw, to = pass_reply(turn, above=forged_pass.replace(b"dmarc=pass", b"dkim=pass; dmarc=pass"))
        raw = raw.replace(b"Message-ID: <", b"Message-ID: <again.", 1)
        deliver(svc, raw, ANA, to)
        assert last_outcome(svc)["status"] == InboundStatus.DONE
    finally:
        svc.close()
