"""A hand whose unplayed cards cannot change any score is finished without asking anyone
(README, "Playing": a hand whose remaining cards cannot change any score), through the services, on SQLite and PostgreSQL.

The first deal is explicit: seat 0 holds every club, the others none. Seat 0 leads a club to every
trick and takes it; the others, void in clubs, throw their hearts and the queen of spades as soon
as the rules let them (not in the first trick). After trick 6 every penalty card has been played:
seat 0 leads trick 7 with seven clubs in hand, the others hold seven harmless cards each, and from
then on nobody is asked — the last seven tricks are played out in the same turn.
"""

from __future__ import annotations


import pytest
from sqlalchemy import select

from pbem.db.models import InboundMessage, Move
from pbem.db.session import transaction
from pbem.engine import GameState, PlayCard, Rules, apply, move_from_dict
from pbem.engine.cards import CARD_INDEX
from pbem.services.app import Services
from pbem.services.gamestore import load_game, snapshot_agrees
from tests.harness.players import Received
from tests.integration.mailplay import Mailbox, address, answer, new_game, text_of

RULES = {"pass_cycle": ["hold"]}
CLUBS = [c for c in CARD_INDEX if c.endswith("C")]
HANDS = [
    CLUBS,
    ["2H", "3H", "4H", "5H", "QS", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D"],
    ["6H", "7H", "8H", "9H", "TH", "TD", "JD", "QD", "KD", "AD", "2S", "3S", "4S"],
    ["JH", "QH", "KH", "AH", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "KS", "AS"],
]
#: The first hand deals one card at a time from the dealer's (seat 3's) left: seat s gets deck[s::4].
DECK = [HANDS[k % 4][k // 4] for k in range(52)]
PENALTY = {c for c in CARD_INDEX if c.endswith("H")} | {"QS"}
#: Asked: seats 1-3 in trick 1 (2C is played for seat 0, its only legal card), everyone in tricks 2-6.
ASKED = 3 + 5 * 4
PLAYED_OUT = 7 * 4
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def reply_for(received: Received) -> str:
    """Seat 0 plays its lowest club; the others get rid of a penalty card whenever they may."""
    legal = list(received.legal)
    penalties = [c for c in legal if c in PENALTY]
    return (penalties or legal)[0]


def hand_of(mail) -> int:  # noqa: ANN001
    return len(Received.parse(mail.raw).hand)


def test_the_rest_of_a_hand_that_cannot_change_a_score_is_played_out_unasked(svc: Services) -> None:
    state = GameState.new(Rules.make("standard", **RULES)).deal(DECK)
    assert [sorted(state.hand(s)) for s in range(4)] == [sorted(h) for h in HANDS]  # the deal is as meant

    game_id, mails = new_game(svc, deck=DECK, **RULES)
    box = Mailbox(list(mails))
    pending = [m for m in mails if m.kind == "your_turn"]
    replies: list[tuple[int, str]] = []
    last_answers: list = []
    while not any(m.kind == "hand_summary" for m in last_answers):  # until the hand is over
        assert len(pending) == 1, [m.recipient for m in pending]  # one seat is asked at a time
        mail = pending.pop()
        received = Received.parse(mail.raw)
        assert received.decision == "play" and received.legal and mail.recipient == address(received.seat)
        card = reply_for(received)
        replies.append((received.seat, card))
        last_answers = box.add(answer(svc, mail, card))
        pending = [m for m in last_answers if m.kind == "your_turn"]
        assert len(replies) <= ASKED, "asked for a card although the hand was decided"
    assert len(replies) == ASKED
    assert replies[-1] == (3, "6S")  # seat 3's last card of trick 6: every penalty card is out

    # The move log: the last reply's move, then the whole rest of the hand under the same mail.
    with transaction(svc.session_factory) as session:
        last_inbound = session.scalars(select(InboundMessage.id).order_by(InboundMessage.id.desc())).first()
        rows = session.execute(select(Move.seq, Move.kind, Move.seat, Move.payload, Move.inbound_id)
                               .where(Move.game_id == game_id).order_by(Move.seq)).all()
        game = load_game(session, game_id, lock=False)
        assert snapshot_agrees(session, game)
        snapshot = game.snapshot
    deals = [k for k, row in enumerate(rows) if row.kind == "deal"]
    assert len(deals) == 2, "the next hand was dealt"
    hand_one = rows[deals[0] + 1:deals[1]]
    assert [r.kind for r in hand_one] == ["play"] * 52
    from_last_mail = [r for r in hand_one if r.inbound_id == last_inbound]
    assert len(from_last_mail) == 1 + PLAYED_OUT
    assert (from_last_mail[0].seat, from_last_mail[0].payload["card"]) == (3, "6S")
    assert hand_one[-PLAYED_OUT:] == from_last_mail[1:]
    # Replayed: every card played out was played when nothing could change a score, and most by a
    # player who had a choice (this is not the single-legal-card autoplay).
    replayed = GameState.new(Rules.make("standard", **RULES))
    choices = 0
    played_out = {r.seq for r in from_last_mail[1:]}
    for row in rows[:deals[1]]:
        move = move_from_dict(row.payload)
        if row.seq in played_out:
            assert isinstance(move, PlayCard) and move.card in replayed.legal_cards()
            assert not replayed.unplayed_can_change_score()
            choices += len(replayed.legal_cards()) > 1
        replayed, _ = apply(replayed, move)
    assert choices >= PLAYED_OUT - 4  # only the last trick is forced for everyone
    assert snapshot["hand_no"] == 2
    assert snapshot["totals"] == [0, 26, 26, 26]  # seat 0 took every penalty card: the (old) moon

    # The mails of that last turn: nobody was asked for a card of hand 1; everyone got the hand's
    # summary, then the turn mail of hand 2 (13 new cards), in that order.
    for seat in range(4):
        theirs = [m for m in last_answers if m.recipient == address(seat)]
        kinds = [m.kind for m in theirs]
        assert kinds[0] == "hand_summary", kinds
        assert "your_turn" not in kinds or all(hand_of(m) == 13 for m in theirs if m.kind == "your_turn")
        assert "trick_done" not in kinds and "card_played" not in kinds
    assert [m for m in last_answers if m.kind == "your_turn"], "hand 2 asks someone"
    turn_mails_hand_one = [m for m in box.mails if m.kind == "your_turn" and m not in last_answers]
    assert len(turn_mails_hand_one) == ASKED
    summary = text_of(next(m for m in last_answers if m.kind == "hand_summary" and m.recipient == address(1)))
    assert "shot the moon" in summary and "26" in summary
    assert "The rest of the hand was played out for everyone" in summary  # why nobody was asked

    # The end of hand 1 belongs with its summary (its last trick shows each seat's last card):
    # no turn mail of hand 2 lists a card of hand 1 as played for the player, neither the last
    # (forced) ones nor those played out while they still had a choice (tricks 7 to 12).
    def shown(card: str) -> str:
        return ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOLS[card[1]]

    last_cards = {r.seat: r.payload["card"] for r in hand_one[-4:]}
    for seat in range(4):
        summary_text = text_of(next(m for m in last_answers if m.kind == "hand_summary"
                                    and m.recipient == address(seat)))
        assert shown(last_cards[seat]) in summary_text
    first_turn: dict[int, str] = {}
    pending = [m for m in last_answers if m.kind == "your_turn"]
    for _ in range(12):
        mail = pending.pop()
        received = Received.parse(mail.raw)
        first_turn.setdefault(received.seat, text_of(mail))
        if len(first_turn) == 4:
            break
        pending = [m for m in box.add(answer(svc, mail, received.legal[0])) if m.kind == "your_turn"]
    assert first_turn.keys() == {0, 1, 2, 3}
    for seat, text in first_turn.items():
        assert "played for you" not in text or "Trick 1:" in text, (seat, text)  # a hand-2 card, shown in its trick
