"""A whole game through the services, on SQLite and PostgreSQL: mails in, moves applied, mails out.

No worker and no SMTP here (those are the end-to-end tests): replies are stored with the fronts'
``store_inbound`` and processed with the worker's ``process_inbound``, in this process.
"""

from __future__ import annotations

import random
from collections import Counter
from email import message_from_bytes
from email.policy import default

import pytest
from sqlalchemy import func, select

from pbem.config import Settings
from pbem.db.models import Game, GameStatus, InboundMessage, InboundStatus, Move, OutboundMessage, Player
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.games import SeatSpec, create_game, start_game
from pbem.services.gamestore import load_game, snapshot_agrees
from pbem.services.inbound import process_inbound
from pbem.services.intake import store_inbound
from tests.harness.players import Received, choose, reply_bytes

PLAYERS = [f"p{i}@players.test" for i in range(4)]


@pytest.fixture
def svc(db_url: str, tmp_path) -> Services:
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": db_url,
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_MAIL_DOMAIN": "hearts.test",
        "PBEM_SECRET_KEY": "test-secret-key",
    })
    services = Services.from_settings(settings, clock=ManualClock())
    yield services
    services.close()


def new_game(svc: Services, **options) -> tuple[int, list[OutboundMessage]]:
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=Rules.make("standard", **options),
                           seats=[SeatSpec(address=a, name=f"Player {i}") for i, a in enumerate(PLAYERS)],
                           seed="fixed-seed", title="Test table")
        mails = start_game(session, svc, game)
        return game.id, mails


def deliver(svc: Services, raw: bytes, sender: str, recipient: str) -> list[OutboundMessage]:
    """Store a mail as a front would, process it as the worker would; the mails it caused."""
    with transaction(svc.session_factory) as session:
        ids = store_inbound(session, raw=raw, mail_from=sender, recipients=[recipient], source="inject",
                            received_at=svc.clock.now())
    out_ids: list[int] = []
    for inbound_id in ids:
        out_ids += process_inbound(svc, inbound_id)
    with transaction(svc.session_factory) as session:
        return list(session.scalars(select(OutboundMessage).where(OutboundMessage.id.in_(out_ids))
                                    .order_by(OutboundMessage.id)))


def inbound_outcome(svc: Services) -> dict:
    with transaction(svc.session_factory) as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        return {"status": row.status, **(row.outcome or {})}


def play_until_over(svc: Services, mails: list[OutboundMessage], rng: random.Random, limit: int = 5000) -> Counter:
    kinds: Counter = Counter()
    queue = list(mails)
    steps = 0
    while queue:
        mail = queue.pop(0)
        kinds[mail.kind] += 1
        if mail.kind != "your_turn":
            continue
        received = Received.parse(mail.raw)
        body = choose(received, rng)
        queue += deliver(svc, reply_bytes(received, sender=mail.recipient, body=body), mail.recipient,
                         received.reply_to)
        steps += 1
        assert steps < limit, "the game did not end"
    return kinds


def test_a_whole_game_by_mail_through_the_services(svc: Services) -> None:
    game_id, mails = new_game(svc, target=40)
    assert Counter(m.kind for m in mails) == {"your_turn": 4}  # the first decision mail says the game began
    kinds = play_until_over(svc, mails, random.Random(5))
    with transaction(svc.session_factory) as session:
        game = load_game(session, game_id, lock=False)
        assert game.status == GameStatus.FINISHED
        assert game.snapshot["phase"] == "over"
        assert max(game.snapshot["totals"]) >= 40
        assert snapshot_agrees(session, game)
        statuses = Counter(session.scalars(select(InboundMessage.status)))
        assert statuses == {InboundStatus.DONE: sum(statuses.values())}, statuses
        hands = game.snapshot["hand_no"]
        assert session.scalar(select(func.count()).select_from(Move).where(Move.kind == "deal")) == hands
    assert kinds["game_summary"] == 4
    assert kinds["hand_summary"] == 4 * hands
    assert kinds["move_rejected"] == kinds["request_rejected"] == 0


def first_turn(svc: Services, mails: list[OutboundMessage], seat: int) -> tuple[OutboundMessage, Received]:
    mail = next(m for m in mails if m.kind == "your_turn" and m.recipient == PLAYERS[seat])
    return mail, Received.parse(mail.raw)


def game_moves(svc: Services, game_id: int) -> int:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game_id))


def test_forged_sender_changes_nothing_and_tells_only_the_seat(svc: Services) -> None:
    game_id, mails = new_game(svc)
    _, received = first_turn(svc, mails, 0)
    before = game_moves(svc, game_id)
    answers = deliver(svc, reply_bytes(received, sender="mallory@evil.test", body=" ".join(received.hand[:3])),
                      "mallory@evil.test", received.reply_to)
    assert game_moves(svc, game_id) == before
    assert [(m.kind, m.recipient) for m in answers] == [("request_rejected", PLAYERS[0])]
    assert inbound_outcome(svc)["code"] == "FORGED_SENDER"


def test_altered_token_and_another_seats_token_are_refused(svc: Services) -> None:
    game_id, mails = new_game(svc)
    _, r0 = first_turn(svc, mails, 0)
    _, r1 = first_turn(svc, mails, 1)
    before = game_moves(svc, game_id)
    local, domain = r0.reply_to.split("@")
    altered = local[:-1] + ("a" if local[-1] != "a" else "b") + "@" + domain
    answers = deliver(svc, reply_bytes(r0, sender=PLAYERS[0], body=" ".join(r0.hand[:3])), PLAYERS[0], altered)
    assert inbound_outcome(svc)["code"] == "BAD_ADDRESS"
    # The sender is a seated (verified) player: told, once, at their own address ("all" alone
    # would pass with no answer at all).
    assert [(m.kind, m.recipient) for m in answers] == [("request_rejected", PLAYERS[0])]
    # Player 0 writes to seat 1's (valid) address: the sender is not seat 1's player.
    answers = deliver(svc, reply_bytes(r1, sender=PLAYERS[0], body=" ".join(r0.hand[:3])), PLAYERS[0], r1.reply_to)
    assert inbound_outcome(svc)["code"] == "FORGED_SENDER"
    assert [(m.kind, m.recipient) for m in answers] == [("request_rejected", PLAYERS[1])]
    assert game_moves(svc, game_id) == before


def test_replayed_message_is_processed_once_and_stale_reply_refused(svc: Services) -> None:
    game_id, mails = new_game(svc)
    _, received = first_turn(svc, mails, 0)
    raw = reply_bytes(received, sender=PLAYERS[0], body=" ".join(received.hand[:3]), message_id="<once@players.test>")
    deliver(svc, raw, PLAYERS[0], received.reply_to)
    moves = game_moves(svc, game_id)
    assert deliver(svc, raw, PLAYERS[0], received.reply_to) == []  # same Message-ID: stored once
    assert game_moves(svc, game_id) == moves
    # A second, different mail answering the same (now made) decision is stale.
    again = reply_bytes(received, sender=PLAYERS[0], body=" ".join(received.hand[3:6]))
    answers = deliver(svc, again, PLAYERS[0], received.reply_to)
    assert inbound_outcome(svc)["code"] == "STALE_TURN"
    assert [m.kind for m in answers] == ["request_rejected"]
    assert game_moves(svc, game_id) == moves


def test_illegal_card_is_explained_and_auto_replies_are_not_answered(svc: Services) -> None:
    game_id, mails = new_game(svc, pass_cycle=["hold"])
    # 2C was played for its holder (a single legal card); the next seat must follow clubs.
    leader = next(m for m in mails if m.kind == "your_turn")
    received = Received.parse(leader.raw)
    assert received.decision == "play" and len(received.legal) >= 2
    assert all(c.endswith("C") for c in received.legal)
    wrong = next(c for c in received.hand if c not in received.legal)
    answers = deliver(svc, reply_bytes(received, sender=leader.recipient, body=wrong), leader.recipient,
                      received.reply_to)
    assert [m.kind for m in answers] == ["move_rejected"]
    assert inbound_outcome(svc)["code"] == "MUST_FOLLOW_SUIT"
    text = message_from_bytes(answers[0].raw, policy=default).get_body(("plain",)).get_content()
    assert received.legal[0][0] + "♣" in text.replace("10", "T") or received.legal[0] in text
    auto = reply_bytes(received, sender=leader.recipient, body="I am on holiday").replace(
        b"MIME-Version", b"Auto-Submitted: auto-replied\r\nMIME-Version")
    assert deliver(svc, auto, leader.recipient, received.reply_to) == []
    assert inbound_outcome(svc)["status"] == InboundStatus.IGNORED
    two = deliver(svc, reply_bytes(received, sender=leader.recipient,
                                   body=f"{received.legal[0]} or maybe {received.legal[1]}"),
                  leader.recipient, received.reply_to)
    assert [m.kind for m in two] == ["request_rejected"]
    assert inbound_outcome(svc)["code"] in ("TWO_CARDS",)


def test_our_own_mail_looped_back_is_never_answered(svc: Services) -> None:
    """A forwarder or a misconfigured alias sends one of our mails back to its reply address: it
    is auto-generated (Auto-Submitted), recorded, and no mail goes out — no mail loop."""
    game_id, mails = new_game(svc)
    mail, received = first_turn(svc, mails, 0)
    before = game_moves(svc, game_id)
    assert deliver(svc, mail.raw, mail.recipient, received.reply_to) == []
    outcome = inbound_outcome(svc)
    assert outcome["status"] == InboundStatus.IGNORED and outcome["code"] == "AUTO_REPLY"
    assert game_moves(svc, game_id) == before


def test_autoplay_off_asks_even_for_a_single_legal_card(svc: Services) -> None:
    """A single legal card is played for the player by default; "autoplay off" turns that off."""
    game_id, mails = new_game(svc, pass_cycle=["hold"])
    with transaction(svc.session_factory) as session:
        game = load_game(session, game_id, lock=False)
        assert game.snapshot["trick"] == ["2C"]  # played for its holder
        leader = game.snapshot["leader"]
    # The leader turns autoplay off by replying to any mail of the game (here: its first mail).
    started = next(m for m in mails if m.recipient == PLAYERS[leader])
    received = Received.parse(started.raw)
    answers = deliver(svc, reply_bytes(received, sender=PLAYERS[leader], body="autoplay off"), PLAYERS[leader],
                      received.reply_to)
    assert [m.kind for m in answers] == ["forced_cards"]
    with transaction(svc.session_factory) as session:
        player = session.scalars(select(Player).where(Player.address == PLAYERS[leader])).one()
        assert player.effective_prefs()["autoplay_single"] is False
    # A new game with the same seed (the same deal): now the holder of 2C is asked to lead it.
    _, mails2 = new_game(svc, pass_cycle=["hold"])
    asked = [m for m in mails2 if m.kind == "your_turn" and m.recipient == PLAYERS[leader]]
    assert asked and Received.parse(asked[0].raw).legal == ("2C",)


def test_resign_hands_the_seat_to_a_bot_and_tells_everyone(svc: Services) -> None:
    game_id, mails = new_game(svc)
    started = next(m for m in mails if m.recipient == PLAYERS[2])
    received = Received.parse(started.raw)
    assert received.hand and len(received.hand) == 13  # the first mail shows the dealt hand
    answers = deliver(svc, reply_bytes(received, sender=PLAYERS[2], body="resign confirm"), PLAYERS[2], received.reply_to)
    notices = [(m.kind, m.recipient) for m in answers if m.kind == "seat_replaced"]
    assert sorted(r for _, r in notices) == sorted(PLAYERS)
    with transaction(svc.session_factory) as session:
        game = load_game(session, game_id, lock=False)
        seat = next(s for s in game.seats if s.seat == 2)
        assert seat.bot and str(seat.status) == "bot"
        assert game.snapshot["passes"][2] is not None  # the bot passed for the seat at once


def test_language_command_switches_a_players_mails(svc: Services) -> None:
    game_id, mails = new_game(svc)
    started = next(m for m in mails if m.recipient == PLAYERS[1])
    received = Received.parse(started.raw)
    answers = deliver(svc, reply_bytes(received, sender=PLAYERS[1], body="idioma português"), PLAYERS[1],
                      received.reply_to)
    assert [m.kind for m in answers] == ["language_changed"]
    msg = message_from_bytes(answers[0].raw, policy=default)
    assert msg["Content-Language"] == "pt"
    assert "português" in msg.get_body(("plain",)).get_content()
    # Later mails to that player are in Portuguese too.
    status = deliver(svc, reply_bytes(received, sender=PLAYERS[1], body="status"), PLAYERS[1], received.reply_to)
    assert message_from_bytes(status[0].raw, policy=default)["Content-Language"] == "pt"


def test_new_players_get_the_servers_default_language(db_url: str, tmp_path) -> None:
    settings = Settings.from_env({"PBEM_DATABASE_URL": db_url, "PBEM_DATA_DIR": str(tmp_path),
                                  "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "k",
                                  "PBEM_DEFAULT_LANGUAGE": "ro"})
    with Services.from_settings(settings, clock=ManualClock()) as services:
        _, mails = new_game(services)
        assert {message_from_bytes(m.raw, policy=default)["Content-Language"] for m in mails} == {"ro"}


def test_a_card_played_for_a_player_is_listed_in_their_next_turn_mail(svc: Services) -> None:
    """2C is played for its holder when the game starts (a single legal card); that player's next
    turn comes moves later, and its mail says what was played for them."""
    game_id, mails = new_game(svc, pass_cycle=["hold"])
    with transaction(svc.session_factory) as session:
        leader = load_game(session, game_id, lock=False).snapshot["leader"]
    queue, rng = list(mails), random.Random(3)
    for _ in range(40):
        mail = queue.pop(0)
        if mail.kind != "your_turn":
            continue
        received = Received.parse(mail.raw)
        if mail.recipient == PLAYERS[leader]:
            text = message_from_bytes(mail.raw, policy=default).get_body(("plain",)).get_content()
            assert "played for you" in text and "2♣" in text
            break
        queue += deliver(svc, reply_bytes(received, sender=mail.recipient, body=choose(received, rng)),
                         mail.recipient, received.reply_to)
    else:
        raise AssertionError("the 2C holder was never asked to play")
