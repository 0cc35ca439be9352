"""What each seat's page and replay show of Turbo Hearts, Booster Nines and moon=win (RULES.md §6.4,
§6.5, §6.7, §6.8), on pure page models rendered by the real templates (no database: the services'
side is in test_hidden_information_turbo).

* Turbo: once every seat has decided, the charged cards by player, on the game page and in the
  replay; the 10 of clubs' factor in a scored hand's result.
* Booster Nines: a boosted trick is one trick of 2n cards, shown as its two rounds.
* moon=win: the shooter wins at once, and the page says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask

from pbem.engine import CHARGE, DEAL, MOON, OVER, ChargeCards, ChooseMoon, Deal, GameState, PlayCard, Rules
from pbem.web.runtime import runtime
from pbem.web import create_app
from tests.engine.helpers import deck_for, sweep_hands
from tests.integration.mailplay import make_services
from tests.integration.test_variant_views import Table, render


class TurboTable(Table):
    """A game through the engine that charges too: each seat charges its first ``charge`` choices."""

    def __init__(self, rules: Rules, seed: int, charge: int = 1) -> None:
        super().__init__(rules, seed)
        self.charge = charge

    def play_on(self, done: Callable[[GameState], bool]) -> None:
        for _ in range(600):
            state = self.state
            if done(state):
                return
            if state.phase == DEAL:
                self.deal()
            elif state.phase == CHARGE:
                seat = state.seats_to_charge()[0]
                self.do(ChargeCards(seat, tuple(state.charge_choices(seat))[:self.charge]))
            elif state.phase == MOON:
                self.do(ChooseMoon(state.shooter[0], "old"))
            else:
                self.do(PlayCard(state.to_move, state.legal_cards()[0]))
        raise AssertionError("never done")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """The web front, for rendering page models (no database read: once for the module)."""
    tmp_path: Path = tmp_path_factory.mktemp("turbo-pages")
    services = make_services(f"sqlite:///{tmp_path / 'unused.db'}", tmp_path)
    app = create_app(services.settings, clock=services.clock)
    yield app
    runtime(app).dispose()
    services.close()


def played_hand() -> TurboTable:
    """A turbo-nines hand played to its end: charges made, at least one trick boosted."""
    table = TurboTable(Rules.make("turbo-nines", pass_cycle=("hold",), end_after_hands=1, tie="share"), 5)
    table.deal()
    table.play_on(lambda s: s.phase == OVER)
    return table


def test_the_page_and_the_replay_show_the_charges_the_boosted_tricks_and_the_factor(app: Flask) -> None:
    table = played_hand()
    hand = table.page(0).hands[0]
    charges = hand.charges
    assert len(charges) == 4 and any(charges)
    boosted = [t for t in hand.tricks if t.boosted]
    assert boosted and all(len(t.plays) == 8 and len(t.rounds(4)) == 2 for t in boosted)
    assert sum(len(t.plays) for t in hand.tricks) == 52 and all(t.winner is not None for t in hand.tricks)
    assert len(hand.multiplier) == 4 and hand.doubled
    for page, template in ((table.page(1), "game.html"), (table.replay(1, status="finished"), "replay.html")):
        html = render(app, template, page, "en")
        assert "Charged cards:" in html
        assert "(boosted by a nine: two rounds)" in html
        assert html.count('class="boosted"') >= 2 * len(boosted)
        assert "The 10 of clubs multiplied" in html


def test_during_the_charge_phase_the_page_asks_its_seat_and_names_nobody() -> None:
    table = TurboTable(Rules.make("turbo", pass_cycle=("hold",)), 3)
    table.deal()
    assert table.state.phase == CHARGE
    to_charge = table.state.seats_to_charge()
    first = to_charge[0]
    table.do(ChargeCards(first, tuple(table.state.charge_choices(first))[:1]))
    assert table.state.phase == CHARGE
    for seat in range(4):
        page = table.page(seat)
        assert page.facts is not None and not page.facts.charges_revealed
        assert all(c is None for s, c in enumerate(page.facts.charges) if s != seat)
        assert page.hands[-1].charges == ()
        assert page.my_turn == (seat in table.state.seats_to_charge())
        assert page.view is not None and set(page.view["to_act"]) <= {seat}


@pytest.mark.parametrize("language", ["en", "pt", "ro"])
def test_a_moon_win_ends_the_game_and_the_page_says_so(app: Flask, language: str) -> None:
    """RULES.md §6.7: seat 0 holds every club and the top spades, so it takes every trick and wins."""
    rules = Rules.make("standard", moon="win", pass_cycle=("hold",))
    table = TurboTable(rules, 1, charge=0)
    table.do(Deal(deck_for(rules, sweep_hands(rules, 0))))
    table.play_on(lambda s: s.phase == OVER)
    page = table.page(0)
    assert page.view is not None and page.view["history"][-1]["moon"]["scoring"] == "win"
    assert page.hands[-1].moon is not None and page.view["winners"] == [0]
    html = render(app, "game.html", page, language)
    replay = render(app, "replay.html", table.replay(1, status="finished"), language)
    words = {"en": "wins the game at once", "pt": "ganha o jogo de imediato", "ro": "câștigă jocul pe loc"}[language]
    assert words in html and words in replay
