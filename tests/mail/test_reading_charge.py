"""Reading a Turbo charge (RULES.md §6.4) in the three languages: ``charge QS TC``, ``charge none``, and
to a charge-decision mail the cards alone or "none"."""

from __future__ import annotations

import pytest

from pbem.mail.reading.commands import Ambiguous, Charge, Play, Unreadable, parse_command


@pytest.mark.parametrize(("text", "expected", "cards"), [
    ("charge QS TC", None, ("QS", "TC")),
    ("charge Q♠ 10♣", "play", ("QS", "TC")),
    ("charge queen of spades", None, ("QS",)),
    ("Charge AH\nthanks", None, ("AH",)),
    ("anuncio Q♠ 10♣", None, ("QS", "TC")),
    ("anunciar dama de espadas", None, ("QS",)),
    ("anunț 10♣", None, ("TC",)),
    ("arăt AH", None, ("AH",)),
    ("QS TC", "charge", ("QS", "TC")),
    ("JD", "charge", ("JD",)),
])
def test_a_charge_names_its_cards(text, expected, cards):
    assert parse_command(text, expected=expected, pass_count=3) == Charge(cards)


@pytest.mark.parametrize(("text", "expected"), [
    ("charge none", None), ("charge nothing", None), ("anuncio nada", None), ("anunț nimic", None),
    ("none", "charge"), ("nothing", "charge"), ("no charge", "charge"), ("nada", "charge"),
    ("não anuncio", "charge"), ("nimic", "charge"), ("nu anunț", "charge"),
])
def test_charging_nothing(text, expected):
    assert parse_command(text, expected=expected, pass_count=3) == Charge(())


def test_none_and_cards_at_once_is_ambiguous_and_a_bare_charge_unreadable():
    both = parse_command("charge none QS", expected="charge", pass_count=3)
    assert isinstance(both, Ambiguous) and both.reason == "CHARGE_NONE_AND_CARDS" and both.details["cards"] == "QS"
    bare = parse_command("charge", expected=None, pass_count=3)
    assert isinstance(bare, Unreadable) and bare.reason == "NO_COMMAND" and bare.details["expected"] == "charge"


def test_a_card_alone_is_a_play_unless_a_charge_is_asked():
    assert parse_command("QS", expected="play", pass_count=3) == Play("QS")
    assert parse_command("QS", expected="charge", pass_count=3) == Charge(("QS",))
