"""The heuristic player's rules of thumb, each on a hand-built position where it must make that choice."""

from __future__ import annotations

import pytest

from pbem.bots import bot_view, get_bot
from pbem.engine import Rules, new_game
from tests.engine.helpers import deck_for

from .positions import position

STANDARD = Rules.make("standard")


def pass_of(hand: str, rules: Rules = STANDARD) -> set[str]:
    state = new_game(rules).deal(deck_for(rules, {0: hand}), "left")
    chosen = get_bot("heuristic").choose_pass(bot_view(state, 0))
    assert len(chosen) == rules.pass_count and set(chosen) <= set(hand.split())
    return set(chosen)


def play_of(state, bot: str = "heuristic") -> str:
    card = get_bot(bot).choose_play(bot_view(state, state.to_move))
    assert card in state.legal_cards()
    return card


# -- passing ----------------------------------------------------------------------------------------


def test_passes_the_dangerous_high_spades_when_short_in_spades() -> None:
    assert pass_of("QS AS KS 2S 2C 3C 4C 5C 6C 2D 3D 4D 5D") == {"QS", "AS", "KS"}


def test_keeps_a_well_guarded_queen_of_spades() -> None:
    chosen = pass_of("QS 2S 3S 4S 5S AC KC 2D 3D 4D 5D 6D 7D")
    assert "QS" not in chosen
    assert {"AC", "KC"} <= chosen


def test_passes_high_hearts() -> None:
    assert pass_of("AH KH QH 2H 2C 3C 4C 5C 6C 2D 3D 4D 2S") == {"AH", "KH", "QH"}


def test_voids_a_short_suit_when_there_is_room() -> None:
    # Nothing dangerous: a plain "highest cards" pass would be KD 5S 5C; voiding diamonds is better.
    chosen = pass_of("KD 4D 2C 3C 4C 5C 2H 3H 4H 2S 3S 4S 5S")
    assert {"KD", "4D"} <= chosen


def test_keeps_the_omnibus_bonus_card() -> None:
    rules = Rules.make("omnibus")
    chosen = pass_of("JD AD KD QD 2C 3C 4C 5C 2H 3H 4H 2S 3S", rules)
    assert "JD" not in chosen


# -- play -------------------------------------------------------------------------------------------


def test_ducks_under_the_winning_card_with_the_highest_card_that_ducks() -> None:
    state = position(STANDARD, {2: "3C 8C TC KC"}, trick="2C 9C", leader=0)
    assert play_of(state) == "8C"


def test_last_to_play_on_a_trick_without_points_takes_it_with_its_highest_card() -> None:
    state = position(STANDARD, {3: "3C KC"}, trick="2C 9C 5C", leader=0)
    assert play_of(state) == "KC"


def test_dumps_the_queen_of_spades_when_void_in_the_led_suit() -> None:
    state = position(
        STANDARD,
        {1: "QS AS 7S 8H 9H TH 6C 7C 8C 9C TC JC"},  # no diamonds
        taken={3: "2C 3C 4C 5C"},
        trick="2D AD", leader=3,
    )
    assert state.to_move == 1
    assert play_of(state) == "QS"


def test_dumps_the_queen_of_spades_under_the_king_of_spades() -> None:
    state = position(STANDARD, {1: "QS 5S 2D 3D"}, taken={3: "2C 3C 4C 5C"}, trick="KS", leader=0)
    assert play_of(state) == "QS"


def test_keeps_the_queen_of_spades_when_it_would_win() -> None:
    state = position(STANDARD, {1: "QS 5S 2D 3D"}, taken={3: "2C 3C 4C 5C"}, trick="9S", leader=0)
    assert play_of(state) == "5S"


def test_leads_a_card_that_cannot_take_the_trick() -> None:
    # Seat 0 leads (hearts unbroken): AD takes the trick for sure, 2D cannot.
    state = position(STANDARD, {0: "AD 2D 2H 3H 4H 5H 6H 7H 8H 9H TH JH"}, taken={3: "2C 3C 4C 5C"},
                     leader=0)
    assert play_of(state) == "2D"


def test_does_not_lead_the_ace_of_spades_while_the_queen_is_out() -> None:
    # Two tricks left; QS is out (seat 2 holds it). TD may win (2D is out) but AS would win for sure.
    state = position(STANDARD, {0: "AS TD", 1: "JD 3C", 2: "QS 2D", 3: "KD 4C"}, rest_taken_by=3, leader=0)
    assert play_of(state) == "TD"


def test_spoils_a_moon_by_taking_a_heart_trick() -> None:
    # Seat 1 alone has taken points: QS and six hearts (19 of 26). Seat 1 leads 9H; seat 2 would duck
    # with 8H, but takes the trick with AH to stop the moon.
    taken = {1: "QS 2H 3H 4H 5H 6H 7H 2C", 0: "3C 4C 5C 6C 7C 8C 9C TC"}
    state = position(STANDARD, {2: "8H AH 2D 3D 4D 5D 6D 7D"}, taken=taken, trick="9H", leader=1)
    assert play_of(state) == "AH"
    # The same trick with the points split between two seats (no moon possible): duck.
    calm = {0: "QS 2C 3C 4C 5C 6C 7C 8C", 1: "2H 3H 4H 5H 6H 7H 9C TC"}
    state = position(STANDARD, {2: "8H AH 2D 3D 4D 5D 6D 7D"}, taken=calm, trick="9H", leader=1)
    assert play_of(state) == "8H"


def test_leads_a_sure_heart_winner_to_spoil_a_moon() -> None:
    taken = {1: "QS 2H 3H 4H 5H 6H 7H 2C", 0: "3C 4C 5C 6C 7C 8C 9C TC"}
    state = position(STANDARD, {2: "AH 2D 3D 4D 5D 6D 7D 8D"}, taken=taken, leader=2)
    assert play_of(state) == "AH"


def test_does_not_feed_hearts_to_a_would_be_shooter() -> None:
    taken = {1: "QS 2H 3H 4H 5H 6H 7H 2C", 0: "3C 4C 5C 6C 7C 8C 9C TC"}
    # Seat 1 leads AD and wins so far; seat 2 has no diamonds: it discards a club, not a heart.
    state = position(STANDARD, {2: "KH QH JC QC KC AC 2S 3S"}, taken=taken, trick="AD", leader=1)
    assert play_of(state) == "AC"


def moon_for_seat_0(rules: Rules, totals: list[int]):
    """The moon choice of a hand in which seat 0 took every card but AS KS JS TS (JD included)."""
    state = position(rules, {0: "AS"}, taken={0: " ".join(
        c for c in (r + s for s in "CDHS" for r in "23456789TJQKA") if c not in ("AS", "KS", "JS", "TS"))},
        trick="", leader=0, totals=totals)
    for _ in range(4):  # finish the hand: seat 0 leads AS and takes the last trick
        state = state.play(state.legal_cards()[0])
    assert state.phase == "moon" and state.shooter[0] == 0
    return state


@pytest.mark.parametrize("totals,expected", [
    ([0, 80, 85, 90], "old"),  # old scores end the game and the shooter wins it
    ([95, 60, 70, 80], "new"),  # old scores would end the game with seat 1 winning
    ([50, 10, 20, 30], "new"),  # the game goes on; the shooter trails, so it keeps the end away
    ([10, 20, 30, 40], "old"),  # the game goes on; the shooter leads, so it brings the end nearer
])
def test_moon_choice(totals: list[int], expected: str) -> None:
    state = moon_for_seat_0(Rules.make("classic"), totals)
    assert get_bot("heuristic").choose_moon(bot_view(state, 0)) == expected


@pytest.mark.parametrize("bot", ["heuristic", "strong"])
def test_moon_choice_counts_the_bonus_card_the_shooter_took(bot: str) -> None:
    # Omnibus: the shooter took JD (-10) too. Old: [85, 86, 96, 106], the game ends and seat 0 wins
    # it alone; new: [59, 60, 70, 80], the game goes on. (Without the bonus old would look like
    # [95, 86, 96, 106], a win for seat 1.)
    state = moon_for_seat_0(Rules.make("omnibus"), [95, 60, 70, 80])
    old = state.choose_moon(0, "old")
    assert old.is_over and old.winners == (0,) and old.totals == (85, 86, 96, 106)
    assert get_bot(bot).choose_moon(bot_view(state, 0)) == "old"


@pytest.mark.parametrize("tie,expected_over", [("play_on", False), ("share", True)])
def test_moon_choice_on_a_tie_for_the_win(tie: str, expected_over: bool) -> None:
    # Old: [60, 60, 106, 76], seats 0 and 1 tie for the win. With play_on the game goes on (another
    # hand) with the shooter sharing the lead, so old (the end nearer) is the better place; with
    # share old makes it a joint winner. New ([34, 34, 80, 50]) leaves it sharing the lead further
    # from the end.
    state = moon_for_seat_0(Rules.make("classic", tie=tie), [60, 34, 80, 50])
    old = state.choose_moon(0, "old")
    assert old.totals == (60, 60, 106, 76) and old.is_over == expected_over
    assert get_bot("heuristic").choose_moon(bot_view(state, 0)) == "old"


def test_moon_choice_on_a_tie_for_the_win_between_others_keeps_the_end_away() -> None:
    # Old: [70, 60, 60, 106]: seats 1 and 2 tie, so the game goes on with the shooter behind. New
    # ([44, 34, 34, 80]) keeps the end further away.
    state = moon_for_seat_0(Rules.make("classic"), [70, 34, 34, 80])
    assert not state.choose_moon(0, "old").is_over
    assert get_bot("heuristic").choose_moon(bot_view(state, 0)) == "new"
