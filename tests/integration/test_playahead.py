"""Playing ahead (README, "Playing ahead") through the services, on SQLite and PostgreSQL: queued cards and
the autopilot, driven by mail and checked against the move log."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from pbem.db.models import InboundMessage, Move, Seat
from pbem.db.session import transaction
from pbem.engine import PLAY, PlayCard, Rules, apply, move_from_dict
from pbem.engine import GameState
from pbem.services.app import Services
from tests.harness.players import Received, choose
from tests.integration.mailplay import (
    Mailbox,
    address,
    answer,
    last_outcome,
    new_game,
    prose_of,
    state_of,
    text_of,
)


def log_of(svc: Services, game_id: int, *, with_senders: bool = False) -> list:
    """The move log's payloads (with the sender of the mail that caused each move)."""
    with transaction(svc.session_factory) as session:
        rows = session.execute(
            select(Move.payload, InboundMessage.mail_from).outerjoin(InboundMessage, InboundMessage.id == Move.inbound_id)
            .where(Move.game_id == game_id).order_by(Move.seq)).all()
    return [tuple(row) for row in rows] if with_senders else [row[0] for row in rows]


def seat_row(svc: Services, game_id: int, seat: int) -> dict:
    with transaction(svc.session_factory) as session:
        row = session.get(Seat, (game_id, seat))
        return {"queued": row.queued, "autopilot_hand": row.autopilot_hand, "decisions": row.decisions}


def test_queued_cards_play_in_order_when_legal_and_wait_otherwise(svc: Services) -> None:
    game_id, mails = new_game(svc, people=4, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    rng = random.Random(7)
    hand = sorted(state_of(svc, game_id).hand(0))
    rng.shuffle(hand)
    queue = [c for c in hand if c != "2C"]
    box.add(answer(svc, box.latest(0), "queue " + " ".join(queue)))
    assert last_outcome(svc)["code"] == "QUEUED"
    assert seat_row(svc, game_id, 0)["queued"]["cards"] or state_of(svc, game_id).hand_no > 1

    # Everyone answers their turn mails with a legal card until the first hand is scored.
    pending = [m for m in mails if m.kind == "your_turn"]
    for _ in range(200):
        if box.to(0, "hand_summary"):
            break
        assert len(pending) == 1, [m.kind for m in pending]
        received = Received.parse(pending[0].raw)
        new = box.add(answer(svc, pending[0], choose(received, rng)))
        assert last_outcome(svc)["code"] == "MOVE_APPLIED"
        pending = [m for m in new if m.kind == "your_turn"]
    assert box.to(0, "hand_summary"), "the hand did not end"

    # The model: at each of seat 0's plays, the first queued card still held is played at once
    # if legal (no mail from the player); otherwise it waits and the player chose the card.
    state = GameState.new(Rules.make("standard", pass_cycle=["hold"]))
    model = list(queue)
    from_queue = waited = 0
    for payload, sender in log_of(svc, game_id, with_senders=True):
        move = move_from_dict(payload)
        if isinstance(move, PlayCard) and move.seat == 0 and state.hand_no == 1:
            model = [c for c in model if c in state.hand(0)]
            if state.unplayed_can_change_score() and model:
                if model[0] in state.legal_cards():
                    assert move.card == model[0], "the queue's first card was legal but not played"
                    assert sender != address(0)
                    model = model[1:]
                    from_queue += 1
                else:
                    waited += 1
                    if len(state.legal_cards()) > 1:
                        assert sender == address(0), "a queued card was played out of order"
        state, _ = apply(state, move)
    assert from_queue >= 2 and waited >= 1, (from_queue, waited)
    asked = [prose_of(m) for m in box.to(0, "your_turn") if Received.parse(m.raw).decision == "play"]
    assert any("waits in the queue" in text and "Queued:" in text for text in asked)
    assert any("Played for you, as you asked" in text for text in asked)


def test_autopilot_plays_the_rest_of_the_hand_then_hands_back(svc: Services) -> None:
    game_id, mails = new_game(svc, people=1, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    first = box.latest(0, "your_turn")
    assert Received.parse(first.raw).decision == "play"
    decisions = seat_row(svc, game_id, 0)["decisions"]
    answers = box.add(answer(svc, first, "autopilot"))
    assert last_outcome(svc)["code"] == "AUTOPILOT_ON"
    kinds = [m.kind for m in answers]
    assert "hand_summary" in kinds and kinds.count("your_turn") == 1 and kinds[-1] == "play_ahead"
    state = state_of(svc, game_id)
    assert state.hand_no == 2 and state.phase == PLAY
    plays = [p for p in log_of(svc, game_id) if p["type"] == "play" and p["seat"] == 0]
    assert len(plays) >= 13  # all of hand 1 (and maybe hand 2's first card, if it was forced)
    row = seat_row(svc, game_id, 0)
    assert row["autopilot_hand"] == 1 and row["decisions"] >= decisions + 12
    turn = next(m for m in answers if m.kind == "your_turn")
    # Hand 1's cards belong with its summary, not with hand 2's first turn mail.
    assert "Played for you, as you asked" not in prose_of(turn)
    assert kinds.index("hand_summary") < kinds.index("your_turn")
    assert "Autopilot is on" not in prose_of(turn)  # hand 2 is the player's again
    assert "played your cards to the end of the hand" in prose_of(answers[-1])
    # The next card is the player's own choice again.
    received = Received.parse(turn.raw)
    box.add(answer(svc, turn, received.legal[0]))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    box.add(answer(svc, box.latest(0), "autopilot off"))
    assert last_outcome(svc)["code"] == "AUTOPILOT_OFF"
    assert seat_row(svc, game_id, 0)["autopilot_hand"] is None


def test_queue_keeps_only_held_cards_plays_at_once_and_clears(svc: Services) -> None:
    game_id, mails = new_game(svc, people=1, pass_cycle=["hold"], seed="queue-edges")
    box = Mailbox(list(mails))
    turn = box.latest(0, "your_turn")
    received = Received.parse(turn.raw)
    held = set(received.hand)
    missing = sorted({f"{r}{s}" for r in "23456789TJQKA" for s in "CDHS"} - held)

    box.add(answer(svc, turn, "queue"))
    assert last_outcome(svc)["code"] == "QUEUE_EMPTY"
    assert box.latest(0).kind == "request_rejected"
    box.add(answer(svc, turn, "queue " + " ".join(missing[:2])))
    assert last_outcome(svc)["code"] == "QUEUE_NOT_HELD"

    # Queue an illegal-now card first: nothing is played, the card waits, the mail says so.
    illegal = sorted(held - set(received.legal))
    assert illegal, "this deal should give seat 0 a choice it cannot make"
    moves = len(log_of(svc, game_id))
    answers = box.add(answer(svc, turn, f"queue {illegal[0]} {missing[0]} {received.legal[0]}"))
    outcome = last_outcome(svc)
    assert outcome["code"] == "QUEUED" and outcome["cards"] == [illegal[0], received.legal[0]]
    assert len(log_of(svc, game_id)) == moves
    confirmation = answers[-1]
    assert confirmation.kind == "play_ahead"
    text = prose_of(confirmation)
    assert "Left out, because you do not hold them" in text and "waits in the queue" in text

    # Queued legal card first: it is played at once, and the bots go on.
    answers = box.add(answer(svc, turn, f"queue {received.legal[0]} {illegal[0]}"))
    assert last_outcome(svc)["code"] == "QUEUED"
    first_play = next(p for p in log_of(svc, game_id)[moves:] if p["type"] == "play")
    assert first_play == {"type": "play", "seat": 0, "card": received.legal[0]}
    assert seat_row(svc, game_id, 0)["queued"] in (None, {"hand": 1, "cards": [illegal[0]]})

    box.add(answer(svc, box.latest(0), "queue clear"))
    assert last_outcome(svc)["code"] == "QUEUE_CLEARED"
    assert seat_row(svc, game_id, 0)["queued"] is None
    assert "Your queue is empty" in prose_of(box.latest(0))
