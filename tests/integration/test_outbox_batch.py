"""The mails of one move sent together (``send_outbound_batch``), on SQLite and PostgreSQL, to a
real SMTP relay on 127.0.0.1: one claim, one connection and one record for the lot, but each mail
succeeds, fails or is retried on its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pbem.db.models import OutboundStatus
from pbem.services.outbox import SendResult, send_outbound_batch
from tests.integration.test_outbox_send import (  # noqa: F401  (fixtures)
    add_outbound,
    load,
    relay_env,
    start_relay,
)


@dataclass
class CountingRelay:
    """Accepts every recipient except those given an answer; counts connections (EHLO)."""

    answers: dict[str, str] = field(default_factory=dict)
    ehlo: int = 0
    accepted: list[str] = field(default_factory=list)

    async def handle_EHLO(self, server: Any, session: Any, envelope: Any, hostname: str,
                          responses: list[str]) -> list[str]:
        self.ehlo += 1
        session.host_name = hostname
        return responses

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          options: list[str]) -> str:
        answer = self.answers.get(address)
        if answer is not None:
            return answer
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.accepted.extend(envelope.rcpt_tos)
        return "250 OK"


def test_the_mails_of_a_move_go_out_on_one_connection(services, start_relay) -> None:
    relay, port = start_relay(CountingRelay())
    svc = services(**relay_env(port))
    ids = [add_outbound(svc, f"p{k}@example.com") for k in range(4)]

    assert send_outbound_batch(svc, ids) == dict.fromkeys(ids, SendResult.SENT)
    assert relay.ehlo == 1
    assert relay.accepted == [f"p{k}@example.com" for k in range(4)]
    assert all(load(svc, i).status is OutboundStatus.SENT and load(svc, i).attempts == 1 for i in ids)
    # Sent once: a duplicate task finds nothing to do.
    assert send_outbound_batch(svc, ids) == dict.fromkeys(ids, SendResult.ALREADY_SENT)
    assert relay.ehlo == 1


def test_each_mail_of_a_batch_has_its_own_fate(services, start_relay) -> None:
    relay, port = start_relay(CountingRelay(answers={
        "gone@example.com": "550 5.1.1 no such user",
        "busy@example.com": "451 4.3.0 try later",
    }))
    svc = services(**relay_env(port))
    ok1, gone, busy, ok2 = (add_outbound(svc, a) for a in
                            ("a@example.com", "gone@example.com", "busy@example.com", "b@example.com"))

    results = send_outbound_batch(svc, [ok1, gone, busy, ok2, 987654])

    assert results == {ok1: SendResult.SENT, gone: SendResult.FAILED, busy: SendResult.RETRY,
                       ok2: SendResult.SENT, 987654: SendResult.MISSING}
    assert relay.accepted == ["a@example.com", "b@example.com"]
    assert load(svc, gone).status is OutboundStatus.FAILED and "550" in (load(svc, gone).last_error or "")
    retry = load(svc, busy)
    assert retry.status is OutboundStatus.PENDING and retry.next_attempt_at > svc.clock.now()
    # Again at once: the sent ones are done, the refused one given up, the other waits its backoff.
    assert send_outbound_batch(svc, [ok1, gone, busy]) == {
        ok1: SendResult.ALREADY_SENT, gone: SendResult.GAVE_UP, busy: SendResult.NOT_DUE}
