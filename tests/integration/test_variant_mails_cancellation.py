"""Cancellation Hearts (RULES.md §6.6, §6.8) by mail, through the services with scripted people (the other
seats random bots), on one SQLite database for the module: a card held twice shown as ``Q♠ ×2`` in the
mails (twice in X-Hearts-Hand and in a pass's X-Hearts-Legal), a pass naming a card twice passing both
copies and the receiver told so, a first trick cancelled by its twins (it stays on the table, its leader
leads again), the carried pile shown on the table, the next trick taken with it and with the leftover
kitty (§6.8: a kitty carried with a cancelled first trick goes with those cards), the hand and game
summaries of six players with two decks, and the ``history`` reply.

Six players (17 cards each, a kitty of 2): the first dealer is seat 5, seat 0 leads the first trick. In the
play game seats 0 and 1 hold every spade, one of each rank: the bots can only discard on a spade lead, so
A♠ led and A♠ followed cancel the whole trick whatever the bots play.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.config import Settings
from pbem.db import migrate
from pbem.engine import OVER, PLAY, Rules
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.deadlines import Timing
from tests.engine.helpers import two_deck_deck
from tests.harness.players import Received
from tests.integration.mailplay import state_of
from tests.integration.test_deadlines import DOMAIN, START, Table, address, text_of
from tests.integration.test_variant_mails_moon import start_with_deck
from tests.integration.test_variant_mails_turbo import header, moves, prose

LONG = Timing(deadline_hours=24 * 30, reminder_hours=0, grace_hours=0)
SPADES = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"
OPTIONS: dict[str, object] = dict(players=6, pass_cycle=["hold"], end_after_hands=1, tie="share")
#: The leftover kitty: both Q♥, which no seat holds (so no mail may name Q♥ before the hand is scored).
KITTY = "QH QH"
PLAY_HANDS = {0: SPADES + " 2C 3C 4C 5C", 1: SPADES + " 2D 3D 4D 5D"}


def play_deck(rules: Rules) -> list[str]:
    return list(two_deck_deck(rules, PLAY_HANDS, KITTY))


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """One migrated SQLite database for the module's games (each test plays a game of its own)."""
    tmp: Path = tmp_path_factory.mktemp("cancellation-mails")
    url = f"sqlite:///{tmp / 'pbem.db'}"
    migrate.upgrade(url)
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": url, "PBEM_DATA_DIR": str(tmp), "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret-key", "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random",
    })
    services = Services.from_settings(settings, clock=ManualClock(START))
    yield services
    services.close()


def start(svc: Services, hands: dict[int, str], kitty: str = KITTY, **options: object) -> Table:
    rules = Rules.make("cancellation", **{**OPTIONS, **options})
    return start_with_deck(svc, LONG, list(two_deck_deck(rules, hands, kitty)), people=2, preset="cancellation",
                           **{**OPTIONS, **options})


def play_out(table: Table, seats: tuple[int, ...]) -> None:
    """The people in ``seats`` answer their turn mails with their first legal card until the game is over."""
    for _ in range(200):
        state = state_of(table.svc, table.game_id)
        if state.phase == OVER:
            return
        acting = [s for s in state.seats_to_act() if s in seats]
        assert acting, f"nobody here is asked to move in phase {state.phase}"
        mail = table.latest(acting[0], "your_turn")
        table.reply(mail, Received.parse(mail.raw).legal[0])
    raise AssertionError("the game did not end")


def test_a_cancelled_first_trick_stays_on_the_table_and_goes_with_the_next_and_the_kitty(svc: Services) -> None:
    table = start(svc, PLAY_HANDS)
    ask = table.latest(0, "your_turn")
    assert header(ask, "X-Hearts-Decision") == "play"
    assert header(ask, "X-Hearts-Legal").split()[-13:] == SPADES.split()  # the opening lead is free: any card
    said = prose(ask)
    assert "Every seat is taken: the game begins." in said
    assert "Two decks are played: 104 cards, every card twice." in said
    assert "The 2 cards left over after the deal form a kitty, face down; it goes to the winner of the first trick." in said
    assert "The kitty (2 cards) still lies face down on the table." in said

    # Trick 1: A♠ led and followed; the bots hold no spade: every spade is cancelled.
    table.reply(ask, "AS")
    follow = table.latest(1, "your_turn")
    assert "Trick 1 so far: Player 0 A♠" in prose(follow)
    table.reply(follow, "A♠")
    state = state_of(svc, table.game_id)
    assert state.phase == PLAY and state.to_move == 0 and state.tricks_played == 1 and len(state.carried) == 6
    assert state.kitty_taker is None
    again = prose(table.latest(0, "your_turn"))
    assert "Trick 1: Player 0 A♠ · Player 1 A♠ · " in again
    assert "A♠ was played twice: the two cancel each other" not in again  # said by the trick's end instead
    assert ("Every card of the suit led (spades) was cancelled by its twin: the trick stays on the table and "
            "Player 0 leads again; its cards (") in again
    assert "On the table from a cancelled trick: A♠ ×2, " in again
    assert "they go to the winner of the next trick." in again
    told = [m for m in table.to(1) if "was cancelled by its twin" in prose(m)]
    assert told, [m.kind for m in table.to(1)]
    assert told[-1].kind == "trick_done" and prose(told[-1]).startswith("Trick 1 cancelled: it stays on the table")

    # Trick 2: K♠ led, Q♠ follows: K♠ takes the trick, the carried cards and the kitty (RULES.md §6.8).
    carried = state.carried
    table.reply(table.latest(0, "your_turn"), "KS")
    table.reply(table.latest(1, "your_turn"), "QS")
    state = state_of(svc, table.game_id)
    assert state.carried == () and state.kitty_taker == 0 and state.kitty_trick == 2 and state.to_move == 0
    took = prose(table.latest(1))
    assert "Player 0 took it, and with it the cards of the cancelled tricks left on the table: A♠ ×2, " in took
    assert "Player 0 took the kitty at trick 2." in took
    assert "Q♥" not in took
    mine = prose(table.latest(0, "your_turn"))
    assert "You took the kitty at trick 2: Q♥ ×2. Its cards count among your tricks." in mine
    assert "On the table from" not in mine
    assert len(state.taken_cards()[0]) == 6 + 6 + 2 and set(carried) <= set(state.taken_cards()[0])
    assert state.taken_cards()[0].count("QH") == 2  # the kitty, face down

    # The history reply tells both tricks; then the hand to its end and its summaries.
    history = prose(table.reply(table.latest(1), "history")[-1])
    assert re.search(r"1\. Player 0 A♠ · Player 1 A♠ · .* — Every card of the suit led cancelled: left on the table", history), history
    assert re.search(r"2\. Player 0 K♠ · Player 1 Q♠ · .* — Player 0 took it with the cards left on the table", history), history
    assert "Q♥" not in history
    play_out(table, (0, 1))
    summary = prose(table.latest(1, "hand_summary"))
    assert "The kitty held Q♥ ×2; Player 0 took it at trick 2." in summary
    assert re.search(r"Player 0 Q♠( ×2)?, \d+ hearts", summary) or "Q♠ ×2" in summary, summary
    over = prose(table.latest(1, "game_summary"))
    assert re.search(r"Statistics of the game: Player Moons Queen of spades Hearts taken Player 0 0 1 \d+ Player 1 0 0 ",
                     over), over


def test_a_pass_naming_a_card_twice_passes_both_copies_and_the_receiver_is_told(svc: Services) -> None:
    hands = {0: "QS QS 2C 2C 9D", 1: "3H 4H 5H"}
    table = start(svc, hands, pass_cycle=["left"])
    ask = table.latest(0, "your_turn")
    assert header(ask, "X-Hearts-Decision") == "pass"
    assert "2C 2C" in header(ask, "X-Hearts-Legal") and "QS QS" in header(ask, "X-Hearts-Legal")
    assert "QS QS" in header(ask, "X-Hearts-Hand")
    said = prose(ask)
    assert "A card you hold twice may be named twice, to pass both copies." in said
    assert re.search(r"♠  (\S+  )*Q\u00a0×2", text_of(ask)) and "♣  2\u00a0×2" in text_of(ask)
    table.reply(ask, "pass QS QS 2C")
    assert {"type": "pass", "seat": 0, "cards": ["QS", "QS", "2C"]} in moves(svc, table.game_id, "pass")
    table.reply(table.latest(1, "your_turn"), "3H 4H 5H")
    state = state_of(svc, table.game_id)
    assert state.received_cards(1) == ("2C", "QS", "QS")
    assert state.hand(0).count("QS") == 0 and state.hand(0).count("2C") == 1
    lead = table.latest(0, "your_turn")
    assert "You passed Q♠ ×2 and 2♣." in prose(lead)
    table.reply(lead, Received.parse(lead.raw).legal[0])  # seat 1's next mail tells the exchange
    told = [prose(m) for m in table.to(1) if "You received" in prose(m)]
    assert told and "You passed 3♥, 4♥, and 5♥. You received Q♠ ×2 and 2♣." in told[0], told


def test_naming_a_card_more_often_than_held_is_refused_in_two_deck_words(svc: Services) -> None:
    table = start(svc, {0: "QS QS 2C 9D", 1: "9D"}, pass_cycle=["left"])
    refused = table.reply(table.latest(0, "your_turn"), "9D 9D 2C")
    assert [m.kind for m in refused] == ["move_rejected"]
    assert ("Your reply named 9♦ more often than you hold it: name a card you hold once only once, and a card you "
            "hold twice at most twice.") in prose(refused[0])
    assert not [m for m in moves(svc, table.game_id, "pass") if m["seat"] == 0]
