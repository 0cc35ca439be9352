"""Cancellation Hearts' moves by mail (RULES.md §6.6, §6.8): two decks, so a hand may hold both copies of
a card. A reply ``QS`` plays one of them (the next mail shows the other, once); ``pass QS QS 2C``
passes both; naming a card more often than it is held is refused with a clear answer and changes
nothing; a reply to a decision already made is stale even when the card it names is still held and
legal; a card held twice is legal once (``X-Hearts-Legal`` names it once, and ``QS QS`` plays one
copy). With no answer by the deadline, the computer player standing in passes and plays for the seat
with two decks as with one.

Through the services with two scripted people (seats 0 and 1) and random bots, on the module's
SQLite database and the services' clock. The preset's 8 players get 13 cards each and no kitty; the
first dealer is seat 7 and the deal starts from seat 0, so seat s gets deck[s::8].
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.config import Settings
from pbem.db import migrate
from pbem.db.models import Move
from pbem.db.session import transaction
from pbem.engine import Rules, deck_in_play
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.deadlines import Timing
from pbem.services.gamestore import load_game, snapshot_agrees
from tests.integration.mailplay import state_of, text_of as raw_text
from tests.integration.test_deadlines import DOMAIN, START, Table, address, clock, last_outcome
from tests.integration.test_variant_mails_moon import start_with_deck
from tests.integration.test_variant_mails_turbo import header, moves, prose

LONG = Timing(deadline_hours=24 * 30, reminder_hours=0, grace_hours=0)
#: No reminder, no grace: at the deadline the absence policy (a computer player) acts at once.
SHORT = Timing(deadline_hours=24, reminder_hours=0, grace_hours=0)
PLAYERS = 8
#: Seat 0 holds Q♠ twice, 3♣ twice and 2♣ once; seat 1 K♠ twice, A♠ once and ten hearts. The bots
#: hold what is left of the two decks.
SEAT_0 = ["QS", "QS", "2C", "3C", "3C", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD"]
SEAT_1 = ["KS", "KS", "AS", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH"]


def two_deck_deal(*first: list[str]) -> list[str]:
    """A first deal of the 104 cards giving the first seats ``first`` and the others what is left,
    dealt one card at a time from seat 0 (13 cards each, no kitty with 8 players)."""
    rest = list(deck_in_play(Rules.make("cancellation")))
    for card in (c for hand in first for c in hand):
        rest.remove(card)
    hands = [*first, *(rest[13 * k:13 * (k + 1)] for k in range(PLAYERS - len(first)))]
    return [hands[k % PLAYERS][k // PLAYERS] for k in range(13 * PLAYERS)]


DECK = two_deck_deal(SEAT_0, SEAT_1)


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """One migrated SQLite database for the module's games (each test plays a game of its own)."""
    tmp: Path = tmp_path_factory.mktemp("cancellation-moves")
    url = f"sqlite:///{tmp / 'pbem.db'}"
    migrate.upgrade(url)
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": url, "PBEM_DATA_DIR": str(tmp), "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret-key", "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random",
    })
    services = Services.from_settings(settings, clock=ManualClock(START))
    yield services
    services.close()


def start(svc: Services, timing: Timing = LONG, **options: object) -> Table:
    table = start_with_deck(svc, timing, DECK, people=2, preset="cancellation", **options)
    state = state_of(svc, table.game_id)
    assert state.decks == 2 and state.hand(0) == tuple(sorted(SEAT_0, key=state.hand(0).index))
    return table



def agrees(svc: Services, game_id: int) -> bool:
    """The game's snapshot equals the replay of its move log (``pbem game check``)."""
    with transaction(svc.session_factory) as session:
        return snapshot_agrees(session, load_game(session, game_id, lock=False))


def hand_line(mail, suit: str) -> str:
    """The line of the mail's "Your hand" that lists ``suit`` (``♠``), its spaces squeezed."""
    lines = raw_text(mail).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Your hand"))
    line = next(line for line in lines[start + 1:] if line.strip().startswith(suit))
    return " ".join(line.split())


def named(mail, name: str) -> list[str]:
    """The cards an ``X-Hearts-*`` header names, copies included."""
    return (header(mail, name) or "").split()


def answer_seat_1_until_seat_0_is_asked(table: Table) -> None:
    """Seat 1 (a person) plays its first legal card to each of its mails until seat 0 gets a new one."""
    before = len(table.to(0, "your_turn"))
    for _ in range(40):
        if len(table.to(0, "your_turn")) > before:
            return
        ask = table.latest(1, "your_turn")
        table.reply(ask, named(ask, "X-Hearts-Legal")[0])
    raise AssertionError("seat 0 was never asked again")


def test_a_reply_plays_one_of_two_copies_and_a_stale_reply_changes_nothing(svc: Services) -> None:
    table = start(svc, pass_cycle=["hold"])
    ask = table.latest(0, "your_turn")
    assert header(ask, "X-Hearts-Decision") == "play"  # RULES.md §6.6: seat 0, left of the dealer, leads
    # The hand names each copy, the mail shows Q♠ ×2; the legal cards name Q♠ once.
    assert Counter(named(ask, "X-Hearts-Hand")) == Counter(SEAT_0)
    legal = named(ask, "X-Hearts-Legal")
    assert legal.count("QS") == 1 and legal.count("3C") == 1 and len(legal) == len(set(SEAT_0))
    assert "Q ×2" in hand_line(ask, "♠") and "3 ×2" in hand_line(ask, "♣"), raw_text(ask)

    table.reply(ask, "QS")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert moves(svc, table.game_id, "play")[0] == {"type": "play", "seat": 0, "card": "QS"}
    assert state_of(svc, table.game_id).hand(0).count("QS") == 1

    # The next mail to seat 0 shows the other copy, once.
    answer_seat_1_until_seat_0_is_asked(table)
    following = table.latest(0, "your_turn")
    assert named(following, "X-Hearts-Hand").count("QS") == 1
    assert "Q" in hand_line(following, "♠").split() and "×2" not in hand_line(following, "♠"), raw_text(following)

    # The first mail answered again, with the copy still held: stale, nothing changes.
    plays = moves(svc, table.game_id, "play")
    refused = table.reply(ask, "QS")
    assert last_outcome(svc)["code"] == "STALE_TURN", last_outcome(svc)
    assert [m.kind for m in refused] == ["request_rejected"]
    assert "Nothing has changed in the game." in prose(refused[0])
    assert moves(svc, table.game_id, "play") == plays
    assert state_of(svc, table.game_id).hand(0).count("QS") == 1
    assert agrees(svc, table.game_id)


def test_a_card_held_twice_is_legal_once_a_play_naming_it_twice_plays_one_copy(svc: Services) -> None:
    table = start(svc, pass_cycle=["hold"])
    table.reply(table.latest(0, "your_turn"), "Q♠ Q♠")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert moves(svc, table.game_id, "play") == [{"type": "play", "seat": 0, "card": "QS"}]
    state = state_of(svc, table.game_id)
    assert state.hand(0).count("QS") == 1 and state.trick_cards() == ((0, "QS"),)
    # Seat 1 must follow spades: K♠ held twice is one choice, beside A♠.
    ask = table.latest(1, "your_turn")
    assert named(ask, "X-Hearts-Legal") == ["KS", "AS"] and named(ask, "X-Hearts-Hand").count("KS") == 2
    assert agrees(svc, table.game_id)


def test_a_pass_names_both_copies(svc: Services) -> None:
    table = start(svc)
    ask0, ask1 = table.latest(0, "your_turn"), table.latest(1, "your_turn")
    assert header(ask0, "X-Hearts-Decision") == "pass"
    assert Counter(named(ask0, "X-Hearts-Legal")) == Counter(SEAT_0)  # a pass may name each copy
    table.reply(ask0, "pass QS QS 2C")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    table.reply(ask1, "K♠ K♠ A♠")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    passes = {p["seat"]: sorted(p["cards"]) for p in moves(svc, table.game_id, "pass")}
    assert passes[0] == ["2C", "QS", "QS"] and passes[1] == ["AS", "KS", "KS"]
    state = state_of(svc, table.game_id)
    assert state.phase == "play"  # the bots passed at the start, the people now
    # Left: seat 0's three cards to seat 1, both copies of Q♠ among them.
    assert Counter(state.received_cards(1)) == Counter(["QS", "QS", "2C"])
    assert state.hand(1).count("QS") == 2 and "QS" not in state.hand(0) and "KS" not in state.hand(1)
    # Seat 1's next mail (once seat 0 has led: 2♣, its only club, is played for it) shows both copies.
    mails_before = len(table.to(1))
    lead = table.latest(0, "your_turn")
    table.reply(lead, "3C")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert len(table.to(1)) > mails_before
    told = table.latest(1)
    assert named(told, "X-Hearts-Hand").count("QS") == 2
    assert "Q ×2" in hand_line(told, "♠"), raw_text(told)
    assert agrees(svc, table.game_id)


@pytest.mark.parametrize("reply, card", [("pass 2C 2C 3C", "2♣"), ("pass QS QS QS", "Q♠"), ("3♣ 3♣ 3♣", "3♣")])
def test_naming_a_card_more_often_than_held_is_refused_and_changes_nothing(svc: Services, reply: str,
                                                                           card: str) -> None:
    table = start(svc)
    ask = table.latest(0, "your_turn")
    refused = table.reply(ask, reply)
    outcome = last_outcome(svc)
    assert outcome["code"] == "DUPLICATE_CARD", outcome
    assert [m.kind for m in refused] == ["move_rejected"], [m.kind for m in refused]
    said = prose(refused[0])
    assert f"Your reply named {card} more often than you hold it" in said and "Nothing has changed" in said, said
    assert [p for p in moves(svc, table.game_id, "pass") if p["seat"] == 0] == []
    state = state_of(svc, table.game_id)
    assert state.phase == "pass" and Counter(state.hand(0)) == Counter(SEAT_0)
    # The same mail still answers the pass.
    table.reply(ask, "QS QS 2C")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)


def test_at_the_deadline_a_computer_player_passes_for_the_seat_with_two_decks(svc: Services) -> None:
    table = start(svc, SHORT)
    table.reply(table.latest(1, "your_turn"), "KS KS AS")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    clock(svc).advance(hours=24)
    acted = [m for m in table.tick() if m.game_id == table.game_id]  # (the module's other games tick too)
    mine = [m.kind for m in acted if m.recipient == address(0)]
    assert mine[:1] == ["stand_in"], mine
    passed = [p for p in moves(svc, table.game_id, "pass") if p["seat"] == 0]
    assert len(passed) == 1 and len(passed[0]["cards"]) == 3
    assert not Counter(passed[0]["cards"]) - Counter(SEAT_0), passed  # cards seat 0 held, copies counted
    state = state_of(svc, table.game_id)
    assert state.phase == "play"
    assert Counter(state.received_cards(1)) == Counter(passed[0]["cards"])
    # The computer player goes on for the seat: it leads too (RULES.md §6.6: seat 0, left of the dealer).
    played = [p["card"] for p in moves(svc, table.game_id, "play") if p["seat"] == 0]
    assert Counter(state.hand(0)) + Counter(played) == (
        Counter(SEAT_0) - Counter(passed[0]["cards"]) + Counter(state.received_cards(0)))
    assert agrees(svc, table.game_id)


def test_at_the_deadline_a_computer_player_plays_for_the_seat_with_two_decks(svc: Services) -> None:
    table = start(svc, SHORT, pass_cycle=["hold"])
    clock(svc).advance(hours=24)
    acted = [m for m in table.tick() if m.game_id == table.game_id]  # (the module's other games tick too)
    mine = [m.kind for m in acted if m.recipient == address(0)]
    assert mine[:1] == ["stand_in"], mine
    played = [p for p in moves(svc, table.game_id, "play") if p["seat"] == 0]
    assert played and played[0]["card"] in SEAT_0
    first = played[0]["card"]
    # Seat 1 is asked next, to follow the card played for seat 0.
    ask = table.latest(1, "your_turn")
    assert header(ask, "X-Hearts-Decision") == "play"
    state = state_of(svc, table.game_id)
    assert state.trick_cards()[0] == (0, first) and state.to_move == 1
    assert Counter(state.hand(0)) == Counter(SEAT_0) - Counter([first])  # one copy
    assert agrees(svc, table.game_id)
