"""Notification choices (README, "Notifications") through the services, on SQLite and PostgreSQL: the levels,
one-click unsubscribe (RFC 8058) by the web route and by mail, and the daily digest."""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from sqlalchemy import func, select

from pbem.db.models import OutboundMessage, Player, Seat
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.clock import OffsetClock
from pbem.services.digest import send_due_digests
from pbem.services.mailing import unsubscribe_url
from pbem.web import create_app
from pbem.web.runtime import runtime
from tests.harness.players import Received, choose, reply_bytes
from tests.integration.mailplay import (
    Mailbox,
    address,
    answer,
    deliver,
    last_outcome,
    make_services,
    new_game,
    parsed,
    text_of,
)


def seat_notify(svc: Services, game_id: int, seat: int) -> str | None:
    with transaction(svc.session_factory) as session:
        return session.get(Seat, (game_id, seat)).notify


def outbox_count(svc: Services, recipient: str, kind: str) -> int:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(func.count()).select_from(OutboundMessage).where(
            OutboundMessage.recipient == recipient, OutboundMessage.kind == kind))


def play(svc: Services, box: Mailbox, pending: list, rng: random.Random, moves: int) -> None:
    """Answer the latest turn mail with a legal card, ``moves`` times."""
    for _ in range(moves):
        turn = [m for m in pending if m.kind == "your_turn"][-1]
        pending[:] = box.add(answer(svc, turn, choose(Received.parse(turn.raw), rng)))
        svc.clock.advance(minutes=30)


def unsubscribe_targets(mail: OutboundMessage) -> tuple[str, str]:
    header = str(parsed(mail)["List-Unsubscribe"])
    https, mailto = re.findall(r"<([^>]+)>", header)
    assert parsed(mail)["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    return https, mailto


def test_each_level_gets_its_mails_and_turn_mails_always_come(svc: Services) -> None:
    game_id, mails = new_game(svc, people=3, pass_cycle=["hold"], target=30)
    box = Mailbox(list(mails))
    box.add(answer(svc, box.latest(1), "notify every card"))
    assert last_outcome(svc)["code"] == "NOTIFY_SET"
    assert "You get a mail for every card played." in text_of(box.latest(1))
    box.add(answer(svc, box.latest(2), "notificări doar rândul meu"))
    assert seat_notify(svc, game_id, 1) == "every_card" and seat_notify(svc, game_id, 2) == "turn_only"
    box.add(answer(svc, box.latest(2), "notify whenever you like"))
    assert last_outcome(svc)["code"] == "NOTIFY_CHOICE"

    start = len(box.mails)
    pending = [m for m in mails if m.kind == "your_turn"]
    play(svc, box, pending, random.Random(2), 40)
    kinds = {seat: Counter(m.kind for m in box.mails[start:] if m.recipient == address(seat)) for seat in range(3)}
    assert kinds[0]["trick_done"] > 0 and kinds[0]["card_played"] == 0 and kinds[0]["hand_summary"] >= 1
    # Every card: a mail per card, the card that ends a trick told with the finished trick.
    assert kinds[1]["card_played"] > 0 and kinds[1]["trick_done"] > 0
    assert kinds[1]["card_played"] + kinds[1]["trick_done"] > kinds[0]["trick_done"]
    assert kinds[1]["hand_summary"] >= 1
    assert set(kinds[2]) <= {"your_turn"} and kinds[2]["your_turn"] > 0
    for mail in box.mails[start:]:
        news = mail.kind in ("trick_done", "card_played", "hand_summary")
        assert ("List-Unsubscribe" in parsed(mail)) == news, mail.kind


def test_one_click_unsubscribe_keeps_the_seat_and_confirms_once(svc: Services) -> None:
    game_id, mails = new_game(svc, people=2, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    pending = [m for m in mails if m.kind == "your_turn"]
    rng = random.Random(4)
    while not box.to(0, "trick_done"):
        play(svc, box, pending, rng, 1)
    url, mailto = unsubscribe_targets(box.latest(0, "trick_done"))
    assert url.startswith("https://hearts.test/unsubscribe/")
    path = urlsplit(url).path
    app = create_app(svc.settings, clock=svc.clock)
    client = app.test_client()
    try:
        page = client.get(path)
        assert page.status_code == 200 and b'method="post"' in page.data
        assert seat_notify(svc, game_id, 0) is None  # looking changes nothing
        assert client.post(path[:-2] + "xx", data={"List-Unsubscribe": "One-Click"}).status_code == 404
        done = client.post(path, data={"List-Unsubscribe": "One-Click"})
        assert done.status_code == 200 and "still be asked".encode() in done.data
        assert seat_notify(svc, game_id, 0) == "turn_only"
        assert outbox_count(svc, address(0), "notify_changed") == 1
        assert client.post(path, data={"List-Unsubscribe": "One-Click"}).status_code == 200
        assert outbox_count(svc, address(0), "notify_changed") == 1  # a repeated POST sends nothing more
    finally:
        app.extensions["pbem"].dispose()
    with transaction(svc.session_factory) as session:
        confirmation = session.scalars(select(OutboundMessage).where(
            OutboundMessage.recipient == address(0), OutboundMessage.kind == "notify_changed")).one()
        session.expunge(confirmation)
    assert "Your seat is kept" in text_of(confirmation)

    start = len(box.mails)
    play(svc, box, pending, rng, 16)
    mine = Counter(m.kind for m in box.mails[start:] if m.recipient == address(0))
    assert mine["your_turn"] > 0 and set(mine) == {"your_turn"}

    # The mailto target works too: a mail to the seat's address with the body it names.
    to, _, query = mailto.removeprefix("mailto:").partition("?")
    body = unquote(dict(part.split("=") for part in query.split("&"))["body"])
    assert body == "notify turn only"
    received = Received.parse(box.latest(1).raw)
    other_to, _, other_query = unsubscribe_targets(box.latest(1, "trick_done"))[1].removeprefix("mailto:").partition("?")
    deliver(svc, reply_bytes(received, sender=address(1), body=body), address(1), other_to)
    assert last_outcome(svc)["code"] == "NOTIFY_SET"
    assert seat_notify(svc, game_id, 1) == "turn_only"


def test_the_web_front_takes_its_clock_as_every_other_process_does(db_url: str, tmp_path: Path) -> None:
    """``pbem web``, ``gunicorn pbem.web.wsgi:app`` and ``pbem serve`` build the app from the settings
    alone: with ``PBEM_CLOCK_OFFSET_FILE`` its clock is the offset clock the SMTP front, the worker and
    the command line read, so what the web front writes is dated on the tests' time."""
    offset_file = tmp_path / "clock-offset"
    offset_file.write_text(str(timedelta(days=30).total_seconds()))
    services = make_services(db_url, tmp_path, PBEM_CLOCK_OFFSET_FILE=str(offset_file))
    app = create_app(services.settings)  # no clock given, as the entry points call it
    try:
        game_id, _ = new_game(services, people=2, pass_cycle=["hold"])
        with transaction(services.session_factory) as session:
            player_id = session.scalar(select(Player.id).where(Player.address == address(0)))
        clock = runtime(app).clock
        assert isinstance(clock, OffsetClock) and clock.path == offset_file
        path = urlsplit(unsubscribe_url(services.settings, player_id, game_id, 0)).path
        before = datetime.now(UTC)
        assert app.test_client().post(path, data={"List-Unsubscribe": "One-Click"}).status_code == 200
        with transaction(services.session_factory) as session:
            confirmation = session.scalars(select(OutboundMessage).where(
                OutboundMessage.recipient == address(0), OutboundMessage.kind == "notify_changed")).one()
            assert confirmation.created_at >= before + timedelta(days=30)  # dated by the offset clock
    finally:
        runtime(app).dispose()
        services.close()


def test_daily_digest_tells_what_happened_once_a_day(svc: Services) -> None:
    game_id, mails = new_game(svc, people=2, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    box.add(answer(svc, box.latest(0), "notify digest"))
    pending = [m for m in mails if m.kind == "your_turn"]
    start = len(box.mails)
    play(svc, box, pending, random.Random(6), 20)
    assert set(m.kind for m in box.mails[start:] if m.recipient == address(0)) == {"your_turn"}
    # Talk that no turn mail has carried yet goes in the digest.
    box.add(answer(svc, box.latest(1), "say see you tomorrow"))
    assert last_outcome(svc)["code"] == "TALK_RECORDED"

    def digests() -> list[OutboundMessage]:
        with transaction(svc.session_factory) as session:
            rows = send_due_digests(session, svc, svc.clock.now())
            session.flush()
            session.expunge_all()
            return rows

    assert digests() == []  # not a day since the choice yet
    svc.clock.advance(days=1)
    sent = digests()
    assert [(m.recipient, m.kind) for m in sent] == [(address(0), "digest")]
    text = text_of(sent[0])
    assert "cards were played" in text and "Totals:" in text and "see you tomorrow" in text
    assert "List-Unsubscribe" in parsed(sent[0])
    assert digests() == []  # once a day
    svc.clock.advance(days=1, hours=1)
    assert digests() == []  # nothing happened
    play(svc, box, pending, random.Random(8), 4)
    svc.clock.advance(hours=1)
    later = digests()
    assert len(later) == 1 and "see you tomorrow" not in text_of(later[0])

    # "everywhere" makes it the player's default and drops the per-game choice.
    box.add(answer(svc, box.latest(0), "notify every card everywhere"))
    with transaction(svc.session_factory) as session:
        player = session.scalars(select(Player).where(Player.address == address(0))).one()
        assert player.prefs["notify"] == "every_card"
    assert seat_notify(svc, game_id, 0) is None
