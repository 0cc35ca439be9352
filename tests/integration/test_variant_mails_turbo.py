"""Turbo Hearts with Booster Nines (RULES.md §6.4, §6.5) and moon=win (§6.7) by mail, through the services
with scripted people (the other seats random bots), on one SQLite database for the module: the charge
decision mail and its headers, a charge noted to its player only, the charges told to everyone once all
have decided (and to nobody before: no mail or X-Hearts header to another seat names a charge), a
charged card held back, a boosted trick's two rounds, the 10♣ multiplier in the hand summary, and a
Dirty Nasty Filthy moon that wins the game at once.

With 4 players the first dealer is seat 3 and the cards are dealt from seat 0: seat s gets deck[s::4].
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.config import Settings
from pbem.db import migrate
from pbem.db.models import Move
from pbem.db.session import transaction
from pbem.engine import OVER
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.deadlines import Timing
from tests.harness.players import Received
from tests.integration.test_auto_finish import DECK as CLUBS_DECK
from tests.integration.mailplay import state_of
from tests.integration.test_deadlines import DOMAIN, START, Table, address, text_of
from tests.integration.test_variant_mails_moon import start_with_deck

LONG = Timing(deadline_hours=24 * 30, reminder_hours=0, grace_hours=0)
#: Seat 0 holds Q♠, 10♣ and J♦ (and leads 2♣), seat 1 A♥ and 9♣, its only club: following the lead with
#: it boosts the first trick. The bots hold no chargeable card.
HANDS = [
    ["2C", "3C", "4C", "TC", "QS", "JD", "2D", "3D", "4D", "5D", "6D", "7D", "8D"],
    ["9C", "AH", "2H", "3H", "4H", "5H", "6H", "9D", "TD", "2S", "3S", "4S", "5S"],
    ["5C", "6C", "7C", "8C", "7H", "8H", "9H", "TH", "JH", "QD", "KD", "6S", "7S"],
    ["JC", "QC", "KC", "AC", "QH", "KH", "AD", "8S", "9S", "TS", "JS", "KS", "AS"],
]
DECK = [HANDS[k % 4][k // 4] for k in range(52)]


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """One migrated SQLite database for the module's games (each test plays a game of its own)."""
    tmp: Path = tmp_path_factory.mktemp("turbo-mails")
    url = f"sqlite:///{tmp / 'pbem.db'}"
    migrate.upgrade(url)
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": url, "PBEM_DATA_DIR": str(tmp), "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret-key", "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random",
    })
    services = Services.from_settings(settings, clock=ManualClock(START))
    yield services
    services.close()


def header(mail, name: str) -> str | None:
    value = message_from_bytes(mail.raw, policy=default).get(name)
    return None if value is None else " ".join(str(value).split())


def prose(mail) -> str:
    return " ".join(text_of(mail).split())


def x_headers(mail) -> str:
    message = message_from_bytes(mail.raw, policy=default)
    return "\n".join(f"{k}: {v}" for k, v in message.items() if k.startswith("X-Hearts"))


def moves(svc: Services, game_id: int, kind: str) -> list[dict]:
    with transaction(svc.session_factory) as session:
        return list(session.scalars(select(Move.payload).where(Move.game_id == game_id, Move.kind == kind)
                                    .order_by(Move.seq)).all())


def play_out(table: Table, seats: tuple[int, ...]) -> None:
    """The people in ``seats`` answer their turn mails with their first legal card until the game is over."""
    for _ in range(80):
        state = state_of(table.svc, table.game_id)
        if state.phase == OVER:
            return
        acting = [s for s in state.seats_to_act() if s in seats]
        assert acting, f"nobody here is asked to move in phase {state.phase}"
        mail = table.latest(acting[0], "your_turn")
        table.reply(mail, Received.parse(mail.raw).legal[0])
    raise AssertionError("the game did not end")


def test_a_turbo_hand_by_mail_charges_the_reveal_a_boosted_trick_and_the_ten_of_clubs(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=2, preset="turbo-nines", pass_cycle=["hold"], end_after_hands=1)
    # The charge decision: one mail each, with its headers; the bots have nothing to charge.
    ask0, ask1 = table.latest(0, "your_turn"), table.latest(1, "your_turn")
    assert [m.kind for m in table.to(0)] == ["your_turn"] and [m.kind for m in table.to(1)] == ["your_turn"]
    assert header(ask0, "X-Hearts-Decision") == "charge" and header(ask0, "X-Hearts-Phase") == "charge"
    assert header(ask0, "X-Hearts-Legal") == "TC JD QS none"
    assert header(ask0, "X-Hearts-Charge-Limit") == "4"
    assert header(ask1, "X-Hearts-Legal") == "AH none"
    said = prose(ask0)
    assert "Every seat is taken: the game begins." in said
    assert "You hold Q♠, 10♣, and J♦: you may charge any of them, or none." in said
    assert "Whoever takes 10♣ doubles their hand score; if it is charged, they score four times it instead." in said
    assert "Reply with the cards you charge, for example: charge Q♠ 10♣; or reply “charge none”." in said
    assert "With no answer by the deadline, nothing is charged." in said
    assert "You hold A♥, which you may charge, or not." in prose(ask1)

    # Seat 0 charges: told to seat 0 alone; nothing reaches seat 1.
    noted = table.reply(ask0, "charge QS TC")
    assert moves(svc, table.game_id, "charge") == [{"type": "charge", "seat": 0, "cards": ["QS", "TC"]}]
    assert [(m.kind, m.recipient) for m in noted] == [("charge_done", address(0))]
    assert "You charge Q♠ and 10♣: the table learns them once everyone has decided." in prose(noted[0])
    status = table.reply(table.latest(1, "your_turn"), "status")
    assert [m.kind for m in status] == ["status"]
    before_reveal = table.to(1)
    assert "It is your turn: decide what you charge." in prose(status[0])
    for mail in before_reveal:
        text = prose(mail)
        assert "Q♠ 10♣" not in text and "You charge" not in text and "Charged" not in text
        assert "Waiting for Player 0" not in text  # nor who else is still to charge
        assert not {"QS", "TC"} & set(x_headers(mail).split())

    # Seat 1 charges (in Portuguese): everyone is told every charge; 2♣ and seat 1's 9♣ (each the only
    # legal card) are played, the bots follow, and 9♣ boosts the trick: seat 0 plays again.
    revealed = table.reply(table.latest(1, "your_turn"), "anuncio A♥")
    assert [p["seat"] for p in moves(svc, table.game_id, "charge")] == [0, 1]
    told = {m.recipient: prose(m) for m in revealed}
    assert "Charged this hand: Player 0 (you) Q♠ 10♣; Player 1 A♥." in told[address(0)]
    assert "Charged this hand: Player 0 Q♠ 10♣; Player 1 (you) A♥." in told[address(1)]
    boost = table.latest(0, "your_turn")
    assert header(boost, "X-Hearts-Decision") == "play"
    assert header(boost, "X-Hearts-Legal") == "3C 4C"  # 10♣, charged, waits for a later club trick
    said = prose(boost)
    assert said.startswith("Your turn: trick 1's boost round, you may play 3♣ 4♣")
    assert "Trick 1 so far: Player 0 2♣ · Player 1 9♣ · " in said
    assert "This is the boost round: 9♣ boosted the trick, so everyone plays one more card to it" in said
    assert "You charged 10♣, so it waits" in said

    # The boost round goes on (seat 1, without a club, plays any card), then the trick's two rounds.
    table.reply(boost, "3C")
    second = table.latest(1, "your_turn")
    assert "Boost round: Player 0 3♣" in prose(second)
    table.reply(second, Received.parse(second.raw).legal[0])
    shown = [prose(m) for m in table.to(0) if "Boosted by 9♣, a second round: Player 0 3♣ · Player 1 " in prose(m)]
    assert shown and "Trick 1: Player 0 2♣ · Player 1 9♣ · " in shown[0]

    # The hand to its end: the summary's charges, values and the 10♣ multiplier, quadrupled (charged).
    play_out(table, (0, 1))
    summary = prose(table.latest(1, "hand_summary"))
    assert "Charged this hand: Player 0 Q♠ 10♣; Player 1 (you) A♥." in summary
    assert re.search(r"took 10♣, which was charged: (your|their) hand score is quadrupled\.", summary), summary
    assert "Q♠ ×2" in summary


def test_a_dirty_nasty_filthy_moon_wins_the_game_at_once(svc: Services) -> None:
    table = start_with_deck(svc, LONG, CLUBS_DECK, people=1, preset="dnf", dealer_calls_pass=False,
                            pass_cycle=["hold"])
    play_out(table, (0,))
    hand = prose(table.latest(0, "hand_summary"))
    assert "You took every penalty card, and win the game at once!" in hand
    assert hand.startswith("Hand 1 over: you took every penalty card and win the game")
    over = prose(table.latest(0, "game_summary"))
    assert "You took every penalty card, and win the game at once! The game is over, and you won!" in over


def test_an_unanswered_charge_charges_nothing_at_the_deadline_and_says_so(svc: Services) -> None:
    table = start_with_deck(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=12), DECK, people=1,
                            preset="turbo-nines", pass_cycle=["hold"])
    assert header(table.latest(0, "your_turn"), "X-Hearts-Decision") == "charge"
    svc.clock.advance(hours=24)  # type: ignore[attr-defined]
    reminder = [m for m in table.tick() if m.recipient == address(0)]
    assert [m.kind for m in reminder] == ["reminder"]
    assert "you charge nothing this hand." in prose(reminder[0])
    svc.clock.advance(hours=12)  # type: ignore[attr-defined]
    mine = [m for m in table.tick() if m.recipient == address(0)]
    assert mine[0].kind == "decision_defaulted"
    said = prose(mine[0])
    assert said.startswith("Time ran out: you charge nothing")
    assert "So nothing was charged for you this hand: your cards count as usual." in said
    assert {"type": "charge", "seat": 0, "cards": []} in moves(svc, table.game_id, "charge")
    # Then play begins, the charges told (seat 0's: none).
    told = [prose(m) for m in mine[1:] if "Charged this hand: " in prose(m) or "Nobody charged" in prose(m)]
    assert told and "Player 0 (you)" not in told[0].split("Charged this hand: ")[-1].split(".")[0]


def test_the_history_reply_shows_the_charges_and_a_boosted_tricks_two_rounds(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=1, preset="turbo-nines", pass_cycle=["hold"])
    table.reply(table.latest(0, "your_turn"), "charge QS")
    table.reply(table.latest(0, "your_turn"), "3C")  # the boost round of trick 1 (9♣ followed the lead)
    history = table.reply(table.latest(0, "your_turn"), "history")
    assert [m.kind for m in history] == ["history"]
    said = prose(history[0])
    assert "Charged this hand: Player 0 (you) Q♠" in said
    assert re.search(r"1\. Player 0 2♣ · [^·]* 9♣ · .*; Boosted by 9♣, a second round: Player 0 3♣ · ", said), said


def test_the_trick_that_takes_the_ten_of_clubs_says_it_doubles_the_taker_s_score(svc: Services) -> None:
    """RULES.md §6.4: the trick line names what the 10♣ does to its taker's hand score as the trick is
    told, not only in the hand summary; charged, it quadruples."""
    table = start_with_deck(svc, LONG, DECK, people=2, preset="turbo", pass_cycle=["hold"], end_after_hands=1)
    table.reply(table.latest(0, "your_turn"), "charge none")
    table.reply(table.latest(1, "your_turn"), "charge none")
    play_out(table, (0, 1))
    mails = table.to(1)
    first_hand = mails[:next(k for k, m in enumerate(mails) if m.kind == "hand_summary")]  # nothing charged
    told = [prose(m) for m in first_hand]
    assert any(re.search(r"took it \(\d+ points?\)\. 10♣ doubles the hand score of [^.]+\.", text)
               for text in told), told
    assert not any("multiplies the hand score" in text for text in told)
    # A charged 10♣ (a later hand, where the bots' charges are their own): "multiplies … by 4", only then.
    for mail in mails[len(first_hand):]:
        text = prose(mail)
        if "multiplies the hand score" in text:
            assert re.search(r"Charged this hand: [^.]*10♣", text), text
