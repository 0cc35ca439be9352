"""What each seat's page model holds of the passing variants (RULES.md §6.3, §6.8).

The table must know the dealer's call for the hand, that a hand's pass was a mix and that declining
is allowed; nobody may learn what they must not: a decliner never sees the cards forwarded through
it (until they are played), no seat sees the cards gathered for a mix but those dealt back to it,
and nobody is told who declined or who passed what to whom beyond what they received.  The models
(``seat_facts``, ``build_page``, ``build_replay``) are what the templates render: a card that is not
in a seat's model cannot be shown to it.  The pages are rendered from the same models in en/pt/ro;
a game's first page comes from the real services on PostgreSQL (the partnership's and the kitty's
pages, in test_variant_views, on SQLite).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from urllib.parse import urlparse

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pbem.engine import (
    CALL,
    CARD_NAMES,
    MIX,
    OVER,
    PASS,
    CallPass,
    DeclinePass,
    GameState,
    MixCards,
    PassCards,
    Rules,
    shuffled_mix,
)
from pbem.mail.links import game_link
from pbem.services.app import Services
from pbem.services.seat_knowledge import seat_facts
from pbem.web import create_app
from pbem.web.runtime import runtime
from tests.integration.mailplay import make_services, new_game as mail_game
from tests.integration.test_variant_views import Table, cards_in, render


class PassTable(Table):
    """A game through the engine that also calls, declines and mixes."""

    def __init__(self, rules: Rules, seed: int) -> None:
        super().__init__(rules, seed)
        self.dealt: dict[int, tuple[str, ...]] = {}
        self.passed: dict[int, tuple[str, ...]] = {}

    def deal(self) -> None:
        super().deal()
        self.dealt = {s: tuple(self.state.hand(s)) for s in range(self.rules.players)}
        self.passed = {}

    def pass_lowest(self, seat: int) -> tuple[str, ...]:
        cards = tuple(sorted(self.state.hand(seat), key=CARD_NAMES.index)[:self.rules.pass_count])
        self.passed[seat] = cards
        self.do(PassCards(seat, cards))
        return cards

    def mix(self) -> None:
        self.do(MixCards(shuffled_mix(self.state, self.rng)))

    def play_on(self, done: Callable[[GameState], bool]) -> None:
        for _ in range(400):
            if done(self.state):
                return
            if self.state.phase == CALL:
                self.do(CallPass(self.state.next_dealer, self.state.default_call()))
            elif self.state.phase == PASS:
                self.pass_lowest(self.state.seats_to_pass()[0])
            elif self.state.phase == MIX:
                self.mix()
            else:
                self.play_until(lambda s: done(s) or s.phase in (CALL, PASS, MIX))
        raise AssertionError("never done")


def known_to(table: PassTable, seat: int) -> set[str]:
    """What ``seat`` may know of this hand's cards: its deal, what it received, what was played."""
    received = table.state.received[seat] if table.state.phase != PASS else 0
    got = {CARD_NAMES[i] for i in range(52) if received >> i & 1}
    last_deal = max(k for k, m in enumerate(table.log) if m.kind == "deal")
    played = {str(m.payload["card"]) for m in table.log[last_deal:] if m.kind == "play"}
    return set(table.dealt[seat]) | got | played


def seen_by(table: PassTable, seat: int) -> set[str]:
    return cards_in(table.page(seat)) | cards_in(table.replay(seat))


# --- pass_optional --------------------------------------------------------------------------


def test_a_decliner_never_holds_the_cards_forwarded_through_it() -> None:
    """RULES.md §6.3: Ben declines; Ann's pass to the left goes through him, unseen, to Cy."""
    table = PassTable(Rules.make("standard", pass_optional=True, pass_cycle=("left",)), 21)
    table.deal()
    assert table.state.may_decline
    table.do(DeclinePass(1))
    forwarded = table.pass_lowest(0)
    for seat in (2, 3):
        table.pass_lowest(seat)
    assert table.state.phase != PASS
    assert set(forwarded) <= set(table.state.hand(2)) and table.state.received[1] == 0
    # Before any card is played, and after each card, until they are all played.
    for _ in range(60):
        unplayed = set(forwarded) - (known_to(table, 1) - set(table.dealt[1]))
        assert not seen_by(table, 1) & unplayed, seen_by(table, 1) & unplayed
        page = table.page(1)
        assert page.facts is not None and page.facts.declined and page.hands[-1].declined
        assert page.view is not None and page.view["received"] == []
        if not unplayed or table.state.phase == OVER:
            break
        table.play_until(lambda s, n=table.state.tricks_played: s.tricks_played > n or s.phase != "play")
    else:
        raise AssertionError("the hand went on for ever")
    # Nobody else is told who declined: their models say only that every seat has passed.
    for seat in (0, 2, 3):
        page = table.page(seat)
        assert page.facts is not None and not page.facts.declined and not page.hands[-1].declined
        assert page.hands[-1].seats_passed == 4 and page.hands[-1].decline_allowed
        assert "declined=True" not in repr(page)


def test_a_loop_of_decliners_each_keeps_its_own_and_sees_nothing_new() -> None:
    """RULES.md §6.3: every other player on the loop declined, so Ann's pass comes back to her."""
    table = PassTable(Rules.make("standard", pass_optional=True, pass_cycle=("left",)), 22)
    table.deal()
    for seat in (1, 2, 3):
        table.do(DeclinePass(seat))
    own = table.pass_lowest(0)
    assert set(table.state.hand(0)) == set(table.dealt[0])
    for seat in (1, 2, 3):
        assert not seen_by(table, seat) - known_to(table, seat)
        assert set(table.state.hand(seat)) == set(table.dealt[seat])
    page = table.page(0)
    assert page.view is not None and set(page.view["received"]) == set(own)


def test_a_mix_hand_cannot_be_declined_and_says_so() -> None:
    table = PassTable(Rules.make("standard", pass_optional=True, pass_cycle=("mix",)), 23)
    table.deal()
    facts = seat_facts(table.state, 0)
    assert facts.mixed and not facts.decline_allowed and not table.state.may_decline


# --- mix ------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["standard", "kitty"])
def test_nobody_sees_the_mixed_cards_of_others_before_they_arrive(preset: str) -> None:
    """RULES.md §6.3 ``mix`` (with the kitty shuffled in and a new kitty dealt, §6.2): during the MIX
    phase a seat's model holds only its own pass; afterwards what was dealt back to it."""
    table = PassTable(Rules.make(preset, pass_cycle=("mix",)), 24)
    table.deal()
    first_kitty = set(table.state.kitty)
    for seat in range(4):
        table.pass_lowest(seat)
    assert table.state.phase == MIX and table.state.cards_to_mix
    gathered = set(table.state.cards_to_mix)
    for seat in range(4):
        assert not seen_by(table, seat) & (gathered - set(table.passed[seat])), seat
        assert seat_facts(table.state, seat).mixed
    table.mix()
    new_kitty = set(table.state.kitty)
    for seat in range(4):
        seen = seen_by(table, seat)
        assert not seen - known_to(table, seat), (seat, seen - known_to(table, seat))
        assert not seen & (new_kitty - set(table.dealt[seat]) - set(table.passed[seat]))
        page = table.page(seat)
        assert page.hands[-1].mixed and page.hands[-1].pass_direction == "mix"
    if preset == "kitty":
        assert len(new_kitty) == 4 and new_kitty <= gathered and first_kitty <= gathered
        table.play_on(lambda s: s.phase == OVER or s.hand_no > 1)
        replay = table.replay(0, status="finished")
        assert set(replay.hands[0].kitty) == first_kitty and set(replay.hands[0].mixed_kitty) == new_kitty


# --- dealer_calls_pass ----------------------------------------------------------------------


def test_the_call_is_told_to_everyone_and_the_choices_only_to_the_dealer() -> None:
    table = PassTable(Rules.make("standard", dealer_calls_pass=True, end_after_hands=2), 25)
    assert table.state.phase == CALL and table.state.next_dealer == 3
    for seat in range(4):
        facts = seat_facts(table.state, seat)
        assert facts.calling == 3
        assert bool(facts.call_choices) == (seat == 3)
    call = (("left", 2), ("right", 1))
    table.do(CallPass(3, call))
    table.deal()
    for seat in range(4):
        page = table.page(seat)
        assert page.facts is not None and page.facts.pass_call == call and page.facts.caller == 3
        assert page.hands[-1].pass_call == call and page.hands[-1].caller == 3
        assert page.hands[-1].pass_direction == "split"
    for seat in range(4):
        table.pass_lowest(seat)
    own = table.page(0).hands[-1]
    assert own.passed_packets == (("left", table.passed[0][:2]), ("right", table.passed[0][2:]))
    table.play_on(lambda s: s.phase == CALL)
    assert seat_facts(table.state, 0).calling == 0 and seat_facts(table.state, 0).call_choices
    table.do(CallPass(0, (("mix", 3),)))
    table.deal()
    hands = table.page(2).hands
    assert [h.pass_call for h in hands] == [call, (("mix", 3),)] and [h.caller for h in hands] == [3, 0]
    assert hands[1].mixed


# --- the pages, in every language -------------------------------------------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    tmp: Path = tmp_path_factory.mktemp("passing-pages")
    services = make_services(f"sqlite:///{tmp / 'unused.db'}", tmp)
    app = create_app(services.settings, clock=services.clock)
    yield app
    runtime(app).dispose()
    services.close()


def passing_pages() -> dict[str, tuple[str, object]]:
    pages: dict[str, tuple[str, object]] = {}
    table = PassTable(Rules.make("standard", dealer_calls_pass=True, pass_optional=True, end_after_hands=2), 26)
    pages["calling"] = ("game.html", table.page(3))
    pages["waiting for the call"] = ("game.html", table.page(0))
    table.do(CallPass(3, (("left", 2), ("right", 1))))
    table.deal()
    pages["may decline"] = ("game.html", table.page(1))
    table.do(DeclinePass(1))
    for seat in (0, 2, 3):
        table.pass_lowest(seat)
    pages["declined"] = ("game.html", table.page(1))
    pages["split"] = ("game.html", table.page(0))
    table.play_on(lambda s: s.phase == CALL)
    table.do(CallPass(0, (("mix", 3),)))
    table.deal()
    for seat in range(4):
        table.pass_lowest(seat)
    pages["mixing"] = ("game.html", table.page(2))
    table.mix()
    table.play_on(lambda s: s.phase == OVER)
    pages["over replay"] = ("replay.html", table.replay(1, status="finished"))
    pages["history"] = ("game.html", table.page(1, status="finished"))
    return pages


def test_the_pages_say_it_in_english(app: Flask) -> None:
    pages = {name: render(app, template, page, "en") for name, (template, page) in passing_pages().items()}
    assert "It is your turn: call the pass for hand 1." in pages["calling"]
    assert "You may call: 3 to the left; 2 to the left and 1 to the right;" in pages["calling"]
    assert "; a mix." in pages["calling"]
    assert "Hand 1 is about to be dealt: Di calls its pass." in pages["waiting for the call"]
    may = pages["may decline"]
    assert "Hand 1, passing 2 to the left and 1 to the right." in may and "Di called 2 to the left and 1 to the right." in may
    assert "Passing is optional this hand" in may and "You may also decline: reply “no pass”." in may
    assert "You declined to pass" in pages["declined"] and "You received" not in pages["declined"]
    assert "You declined" not in pages["split"] and re.search(r"You passed: to the left: .*; to the right: ", pages["split"])
    assert "Hand 2: the passed cards are mixed and dealt back." in pages["mixing"] and "Ann called a mix." in pages["mixing"]
    assert "The passed cards are being mixed." in pages["mixing"]
    replay = pages["over replay"]
    assert "<th>Received</th>" in replay and ">declined<" in replay and "Ann called a mix." in replay
    assert "You declined to pass" in pages["history"] and "Di called 2 to the left and 1 to the right." in pages["history"]


@pytest.mark.parametrize("language, words", [
    ("pt", ("Di anunciou 2 para a esquerda e 1 para a direita.", "É a sua vez: anuncie a passagem da mão 1.",
            "Recusou passar", "as cartas passadas são misturadas", "uma mistura", "recusou")),
    ("ro", ("Di a anunțat 2 la stânga și 1 la dreapta.", "Este rândul dumneavoastră: anunțați darea pentru mâna 1.",
            "Ați refuzat să dați", "Cărțile date se amestecă", "un amestec", "a refuzat")),
])
def test_the_pages_say_it_in_portuguese_and_romanian(app: Flask, language: str, words: tuple[str, ...]) -> None:
    text = " ".join(render(app, template, page, language) for template, page in passing_pages().values())
    for word in words:
        assert word in text, word
    for english in ("called", "declined", "mixed", "to the left", "You may call"):
        assert english not in text, english


def test_the_help_page_explains_declining_calls_and_the_mix(app: Flask) -> None:
    client = app.test_client()
    html = re.sub(r"\s+", " ", client.get("/help", headers={"Accept-Language": "en"}).get_data(as_text=True))
    assert "reply “no pass” to keep your cards" in html and "<code>2 left 1 right</code>" in html
    assert "In a mix hand every player puts the cards to pass face down in the middle" in html
    pt = client.get("/help", headers={"Accept-Language": "pt"}).get_data(as_text=True)
    ro = client.get("/help", headers={"Accept-Language": "ro"}).get_data(as_text=True)
    assert "responda “não passo”" in pt and "Outras formas de passar" in pt
    assert "răspundeți „nu dau”" in ro and "Alte feluri de a da cărțile" in ro



# --- through the real services and the web front ----------------------------------------------


@pytest.fixture
def db_url(pg_migrated_url: str) -> str:
    """This module's one database, PostgreSQL (see the module's docstring)."""
    return pg_migrated_url


@pytest.fixture
def client(svc: Services) -> Iterator[FlaskClient]:
    app: Flask = create_app(svc.settings, clock=svc.clock)
    yield app.test_client()
    runtime(app).dispose()


@pytest.mark.postgres
def test_a_game_that_starts_with_the_dealers_call_says_who_calls(svc: Services, client: FlaskClient) -> None:
    """RULES.md §6.3: the game starts in the call phase (seat 4 deals first): the dealer's page asks
    for the call and lists the calls, the others' pages say who calls."""
    game_id, _mails = mail_game(svc, people=4, seed="call-page", dealer_calls_pass=True)
    pages = {seat: re.sub(r"\s+", " ", client.get(urlparse(game_link(svc.settings, game_id, seat)).path)
                          .get_data(as_text=True)) for seat in (0, 3)}
    assert "It is your turn: call the pass for hand 1." in pages[3] and "a mix." in pages[3]
    assert "Hand 1 is about to be dealt: Player 3 calls its pass." in pages[0]
    assert "You may call" not in pages[0]
