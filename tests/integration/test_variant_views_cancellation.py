"""What each seat's page and replay show of Cancellation Hearts (RULES.md §6.6, §6.8): two decks, six
players here, on one hand-built deal.

The deal (hand 1, dealer seat 5, so seat 0 leads; the deck's first two cards, both copies of 2♥, are the
kitty for the first trick's winner):

* trick 1, seat 0 leads K♣ and seat 3 plays the other K♣: the kings cancel, Cy's Q♣ wins; Cy takes the
  kitty face down;
* trick 2, Cy leads Q♠ and every spade played has its twin in the trick (Q♠ Q♠ K♠ K♠ J♠ J♠): the trick
  is cancelled, stays on the table with its 26 points, and Cy leads again;
* trick 3, Ben's 9♦ wins it and the carried pile: 26 points, two tricks;
* tricks 4 to 16, Ben leads cards nobody else holds a copy of, and wins each;
* trick 17, everyone holds one heart of three pairs (A♥ A♥ K♥ K♥ Q♥ Q♥): the last trick has no winner
  and goes to Ben, who won the trick before it.

The page models (``build_page``, ``build_replay``) are built from that hand played through the engine and
rendered by the real templates in en/pt/ro; the same hand is played through the services on SQLite and
its pages read through the web front, as a seat would (there are no spectators' pages: every page is a
seat's).  2♥ exists only in the kitty, so no page of another seat may name it until the hand is scored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pbem.db.session import transaction
from pbem.engine import DEAL, OVER, PLAY, Deal, GameState, PlayCard, Rules
from pbem.services.app import Services
from pbem.services.game_views import GamePage, LoggedMove, ReplayPage, build_page, build_replay, visible_history
from pbem.services.games import SeatSpec, create_game, settle, start_game
from pbem.services.gamestore import current_state, load_game
from pbem.services.turns import apply_move, begin_turn
from pbem.web import create_app
from pbem.web.runtime import runtime
from tests.integration.mailplay import address, make_services, state_of
from tests.integration.test_variant_views import Table, client, db_url, page_html, render  # noqa: F401  (fixtures)

NAMES = ("Ann", "Ben", "Cy", "Di", "Ed", "Flo")
N = 6
RANKS = "23456789TJQKA"
ALL_CARDS = tuple(r + s for s in "CDHS" for r in RANKS)
KITTY = ("2H", "2H")
#: Tricks 1 to 3, each from its leader on (leaders: seat 0, seat 2, seat 2 again after the cancelled trick).
SCRIPT = (("KC", "2C", "QC", "KC", "3C", "4C"), ("QS", "QS", "KS", "KS", "JS", "JS"), ("2D", "3D", "4D", "5D", "6D", "9D"))
LEADERS = (0, 2, 2)
#: Ben's leads for tricks 4 to 16: both copies of each, or the one whose twin is played (Q♣).
BEN_LEADS = ("AC", "AC", "QC", "AD", "AD", "KD", "KD", "QD", "QD", "JD", "JD", "AS", "AS")
#: The heart each seat keeps for the last trick: three pairs, all cancelled.
LAST = {0: "QH", 1: "AH", 2: "AH", 3: "KH", 4: "KH", 5: "QH"}
OPTIONS: dict[str, object] = dict(players=N, pass_cycle=("hold",), tie="share")


def dealt_hands(script: tuple[tuple[str, ...], ...] = SCRIPT, leaders: tuple[int, ...] = LEADERS,
                more: bool = True) -> dict[int, list[str]]:
    """Each seat's 17 cards: the scripted tricks' (and, ``more``, Ben's leads and the last trick's), then
    what is left of both decks in canonical order."""
    hands: dict[int, list[str]] = {s: [] for s in range(N)}
    for leader, trick in zip(leaders, script):
        for k, card in enumerate(trick):
            hands[(leader + k) % N].append(card)
    if more:
        hands[1] += BEN_LEADS
        for seat, card in LAST.items():
            hands[seat].append(card)
    pool = Counter({c: 2 for c in ALL_CARDS})
    pool.subtract(KITTY)
    for cards in hands.values():
        pool.subtract(cards)
    assert min(pool.values()) >= 0
    rest = [c for c in ALL_CARDS for _ in range(pool[c])]
    for seat in range(N):
        need = 17 - len(hands[seat])
        hands[seat] += rest[:need]
        rest = rest[need:]
    assert not rest
    return hands


def the_deck(hands: dict[int, list[str]] | None = None) -> tuple[str, ...]:
    """The kitty first, then one card at a time clockwise from the dealer's (seat 5's) left."""
    hands = hands or dealt_hands()
    deck: list[str] = [""] * (N * 17)
    for seat, cards in hands.items():
        for j, card in enumerate(cards):
            deck[seat + j * N] = card
    return (*KITTY, *deck)


def the_card(state: GameState) -> str:
    """The card the seat to move plays in the scripted hand."""
    played, position, seat = state.tricks_played, len(state.trick), state.to_move
    if played < len(SCRIPT):
        return SCRIPT[played][position]
    if position == 0 and seat == 1 and played < 16:
        return BEN_LEADS[played - len(SCRIPT)]
    legal = state.legal_cards()
    return next((c for c in legal if c != LAST[seat]), legal[0])


def rules(hands: int = 2) -> Rules:
    return Rules.make("cancellation", end_after_hands=hands, **OPTIONS)  # type: ignore[arg-type]


class TwoDeckTable(Table):
    """The scripted hand through the engine, with its move log; pages for six named seats."""

    def __init__(self, hands: int = 2) -> None:
        super().__init__(rules(hands), 0)
        self.do(Deal(the_deck()))

    def play_until(self, done: Callable[[GameState], bool]) -> None:
        while not done(self.state):
            assert self.state.phase == PLAY
            self.do(PlayCard(self.state.to_move, the_card(self.state)))

    def page(self, seat: int, status: str = "active") -> GamePage:
        return build_page(game_id=1, seat=seat, status=status, names=NAMES, snapshot=self.state.to_dict(),
                          rules=self.rules.to_dict(), moves=self.log)

    def replay(self, seat: int, status: str = "active") -> ReplayPage:
        return build_replay(game_id=1, seat=seat, status=status, names=NAMES, snapshot=self.state.to_dict(),
                            rules=self.rules.to_dict(), moves=self.log)


def hand_over(state: GameState) -> bool:
    return state.phase in (DEAL, OVER)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """The web front, for rendering page models (no database read: once for the module)."""
    tmp_path: Path = tmp_path_factory.mktemp("cancellation-pages")
    services = make_services(f"sqlite:///{tmp_path / 'unused.db'}", tmp_path)
    app = create_app(services.settings, clock=services.clock)
    yield app
    runtime(app).dispose()
    services.close()


def text(html: str) -> str:
    """The page's words, tags left out."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- the models ------------------------------------------------------------------------------


def test_the_history_has_the_cancelled_trick_the_carried_pile_and_the_last_trick_without_a_winner() -> None:
    table = TwoDeckTable()
    table.play_until(hand_over)
    assert table.state.phase == DEAL and table.state.totals == (0, 50, 2, 0, 0, 0)
    for seat in (0, 3):
        (hand,) = table.page(seat).hands
        tricks = hand.tricks
        assert len(tricks) == 17 and all(len(t.plays) == N for t in tricks)
        first, cancelled, carrying, last = tricks[0], tricks[1], tricks[2], tricks[-1]
        assert (first.winner, first.cancelled, hand.kitty_taker, hand.kitty_trick) == (2, False, 2, 1)
        assert cancelled.cancelled and cancelled.winner is None and not cancelled.on_table
        assert (cancelled.leader, cancelled.points, cancelled.went_with) == (2, 26, 3)
        assert carrying.winner == 1 and carrying.leader == 2 and carrying.points == 26
        assert Counter(carrying.carried) == Counter(SCRIPT[1])
        assert last.no_winner and last.winner == 1 and last.leader == 1 and not last.cancelled and last.points == 6
        assert all(t.winner == 1 and not t.carried and not t.no_winner for t in tricks[3:-1])
        # Every point of the hand once: the tricks won (a carried pile counted with its taker) and the kitty.
        assert sum(t.points or 0 for t in tricks if not t.cancelled) + 2 == 52


def test_a_log_the_engine_does_not_replay_shows_the_same_tricks() -> None:
    """The fallback for a hand-written log (the deal's deck left out): the cards alone give the same
    cancelled, carried and last tricks (``trick_winner`` says None for a trick with no winner)."""
    table = TwoDeckTable()
    table.play_until(hand_over)
    written = [LoggedMove(kind=m.kind, seat=m.seat, payload={**m.payload, "deck": []}) if m.kind == "deal" else m
               for m in table.log]
    (replayed,) = visible_history(table.log, seat=0, rules=table.rules)
    (by_hand,) = visible_history(written, seat=0, rules=table.rules)
    assert by_hand.tricks == replayed.tricks


def test_the_kitty_is_only_its_takers_until_the_hand_is_scored(app: Flask) -> None:
    """RULES.md §6.2, §6.6: the leftovers go face down to the first trick's winner (Cy); both copies of
    2♥ are in it, so no other seat's model or page names 2♥ while the hand is on, nor counts its points."""
    table = TwoDeckTable()
    lying = render(app, "game.html", table.page(0), "en")
    assert "The kitty (2 cards) lies face down on the table. It goes to the winner of the first trick." in lying
    for moment in (lambda s: s.tricks_played == 1, lambda s: s.tricks_played == 16):
        table.play_until(moment)
        for seat in range(N):
            page, replay = table.page(seat), table.replay(seat)
            html = render(app, "game.html", page, "en") + render(app, "replay.html", replay, "en")
            if seat == 2:
                assert page.facts is not None and page.facts.kitty == KITTY and "2♥ ×2" in html
                assert "You took the kitty at trick 1." in html
                continue
            assert "2H" not in repr(page) + repr(replay) and "2♥" not in html, seat
            assert "Cy took the kitty at trick 1." in html and "The kitty held:" not in html
            assert page.view is not None and page.view["points_taken"][2] == 0
            assert all("2H" not in pile for pile in page.view["taken"])
    table.play_until(hand_over)
    for seat in range(N):
        page, replay = table.page(seat), table.replay(seat)
        assert page.hands[0].kitty == KITTY and replay.hands[0].log.kitty == KITTY
        html = render(app, "game.html", page, "en")
        assert "The kitty held: 2♥ ×2" in text(html), seat


def test_the_hand_shows_a_card_held_twice_once_with_x2(app: Flask) -> None:
    table = TwoDeckTable()
    page = table.page(0)
    assert page.view is not None and page.view["hand"].count("5C") == 2
    for language in ("en", "pt", "ro"):
        words = text(render(app, "game.html", page, language))
        assert "5♣ ×2 6♣ ×2 7♣ ×2" in words and "5♣ 5♣" not in words, language


@pytest.mark.parametrize("language, words", [
    ("en", ("Every card of the led suit was cancelled by its twin: the trick stays on the table, and Cy leads again.",
            "On the table, the cards of 1 cancelled trick: J♠ ×2 Q♠ ×2 K♠ ×2 (26 points). They go to the winner of the "
            "next trick.", "all cancelled: on the table", "(26)")),
    ("pt", ("Cy volta a sair", "(26 pontos)", "(26)")),
    ("ro", ("Cy deschide din nou", "(26 de puncte)", "(26)")),
])
def test_a_cancelled_trick_stays_on_the_table(app: Flask, language: str, words: tuple[str, ...]) -> None:
    table = TwoDeckTable()
    table.play_until(lambda s: s.tricks_played == 2)
    assert table.state.to_move == 2 and table.state.carried
    page = text(render(app, "game.html", table.page(4), language))
    for word in words:
        assert word in page, (language, word)
    replay = text(render(app, "replay.html", table.replay(4), language))
    assert "(26)" in replay


@pytest.mark.parametrize("language, words", [
    ("en", ("Ben took it (26 points). With it, the cards of the cancelled tricks before it: J♠ ×2 Q♠ ×2 K♠ ×2 .",
            "all cancelled: went with trick 3", "(with 6 carried cards)", "Tricks taken in hand 1 0 2 1 0 0 0",
            "Penalty cards taken in hand 1 Q♠ ×2")),
    ("pt", ("(26 pontos)", "Q♠ ×2")),
    ("ro", ("(26 de puncte)", "Q♠ ×2")),
])
def test_the_trick_after_takes_the_carried_pile(app: Flask, language: str, words: tuple[str, ...]) -> None:
    table = TwoDeckTable()
    table.play_until(lambda s: s.tricks_played == 3)
    assert table.state.tricks_won == (0, 2, 1, 0, 0, 0) and not table.state.carried
    page = text(render(app, "game.html", table.page(0), language))
    for word in words:
        assert word in page, (language, word)
    assert "On the table, the cards" not in page


def test_the_last_trick_without_a_winner_goes_to_the_winner_of_the_trick_before(app: Flask) -> None:
    table = TwoDeckTable()
    table.play_until(hand_over)
    page = text(render(app, "game.html", table.page(5), "en"))
    assert ("Ben took it (6 points). Every card of the led suit was cancelled: the hand's last trick goes to the "
            "winner of the trick before it.") in page
    assert "(all cancelled: the last trick goes to the winner of the trick before)" in page
    over = TwoDeckTable(hands=1)
    over.play_until(hand_over)
    assert over.state.phase == OVER
    replay = text(render(app, "replay.html", over.replay(5, status="finished"), "en"))
    assert "(all cancelled: the last trick goes to the winner of the trick before)" in replay
    assert "2♥ ×2" in replay  # the kitty as dealt


def test_cancelled_tricks_in_a_row_and_the_kitty_go_with_the_next_trick_won(app: Flask) -> None:
    """RULES.md §6.8: carried cards of several cancelled tricks in a row accumulate; a kitty carried with
    a cancelled first trick goes with those cards (here to Flo, at trick 3)."""
    script = (("KC", "KC", "QC", "QC", "JC", "JC"), ("5D", "5D", "4D", "4D", "3D", "3D"),
              ("2S", "3S", "4S", "5S", "6S", "AS"))
    table = Table(rules(), 0)
    table.do(Deal(the_deck(dealt_hands(script, (0, 0, 0), more=False))))
    for trick in script[:2]:
        for card in trick:
            table.do(PlayCard(table.state.to_move, card))
    assert table.state.to_move == 0 and len(table.state.carried) == 12 and table.state.kitty_taker is None
    page = table.page(3)  # named below: Table names four seats
    words = text(render(app, "game.html", replace(page, names=NAMES), "en"))
    assert "On the table, the cards of 2 cancelled tricks: J♣ ×2 Q♣ ×2 K♣ ×2 3♦ ×2 4♦ ×2 5♦ ×2 (0 points)." in words
    assert "The kitty (2 cards) lies face down on the table. It goes to the winner of the first trick." in words
    for card in script[2]:
        table.do(PlayCard(table.state.to_move, card))
    assert table.state.kitty_taker == 5 and table.state.tricks_won[5] == 3
    (hand,) = table.page(0).hands
    assert [t.went_with for t in hand.tricks[:2]] == [3, 3] and all(t.cancelled for t in hand.tricks[:2])
    assert Counter(hand.tricks[2].carried) == Counter(script[0] + script[1]) and hand.tricks[2].winner == 5
    assert (hand.kitty_taker, hand.kitty_trick, hand.kitty) == (5, 3, ())
    words = text(render(app, "game.html", replace(table.page(0), names=NAMES), "en"))
    assert "Flo took the kitty at trick 3." in words and "all cancelled: went with trick 3" in words
    assert "Flo took it (0 points). With it, the cards of the cancelled tricks before it:" in words


def test_ten_players_lay_out_in_scrolling_tables(app: Flask) -> None:
    """RULES.md §6.6 allows ten players: the tricks and scores tables (thirteen columns) scroll sideways
    on a narrow screen instead of widening the page."""
    table = Table(Rules.make("cancellation", players=10, pass_cycle=("hold",)), 3)
    table.deal()
    table.play_until(lambda s: s.tricks_played == 3)
    names = tuple(f"Player {k}" for k in range(10))
    page = build_page(game_id=1, seat=0, status="active", names=names, snapshot=table.state.to_dict(),
                      rules=table.rules.to_dict(), moves=table.log)
    html = render(app, "game.html", page, "en")
    assert html.count('<div class="wide"><table') == 2  # the scores, the tricks
    assert all(f"<th>Player {k}</th>" in html or f'<th class="me">Player {k}</th>' in html for k in range(10))


# --- through the services and the web front, on SQLite -----------------------------------------


def play_on(svc: Services, game_id: int, done: Callable[[GameState], bool]) -> None:
    """The people play the scripted cards until ``done``, in one turn of the services (its mails)."""
    with transaction(svc.session_factory) as session:
        game = load_game(session, game_id)
        turn = begin_turn(game, list(game.seats), current_state(game), svc.clock.now())
        while not done(turn.state):
            apply_move(session, turn, PlayCard(turn.state.to_move, the_card(turn.state)))
        settle(session, svc, turn)


def test_the_pages_of_a_cancellation_game_on_the_database(svc: Services, client: FlaskClient) -> None:
    seats = [SeatSpec(address=address(k), name=NAMES[k]) for k in range(N)]
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=rules(), seats=seats, seed="cancellation-pages")
        start_game(session, svc, game, first_deck=the_deck())
        game_id = game.id
    first = page_html(svc, client, game_id, 0)
    assert "5♣ ×2" in text(first) and "It goes to the winner of the first trick." in first
    play_on(svc, game_id, lambda s: s.tricks_played == 2)
    for seat in (0, 2):
        page = text(page_html(svc, client, game_id, seat))
        assert "the trick stays on the table, and Cy leads again." in page
        assert "On the table, the cards of 1 cancelled trick: J♠ ×2 Q♠ ×2 K♠ ×2 (26 points)" in page
        assert ("2♥" in page) == (seat == 2)
    # Trick 16 is Ben's to lead with two cards left: nobody's only card is played for them (the last
    # trick's are, each seat holding one card, and the hand ends in that turn).
    play_on(svc, game_id, lambda s: s.tricks_played == 15)
    for seat in range(N):
        html = page_html(svc, client, game_id, seat) + page_html(svc, client, game_id, seat, replay=True)
        assert ("2♥" in html) == (seat == 2), seat
        assert "all cancelled: went with trick 3" in html and "(with 6 carried cards)" in html
    play_on(svc, game_id, hand_over)
    state = state_of(svc, game_id)
    assert state.hand_no == 2
    assert state.history[0][0] == (0, 50, 2, 0, 0, 0)
    for seat in range(N):
        page = text(page_html(svc, client, game_id, seat))
        assert "The kitty held: 2♥ ×2" in page, seat
        assert "(all cancelled: the last trick goes to the winner of the trick before)" in page


@pytest.mark.parametrize("language, words", [
    ("en", ("<h2>Cancellation Hearts</h2>", "the trick stays on the table and the same player leads again",
            "<h2>Turbo Hearts and Booster Nines</h2>", "<h2>When the moon wins</h2>", "Q♠ ×2",
            "<code>charge QS TC</code>", "<code>rules: cancellation</code> <code>players: 8</code>")),
    ("pt", ("<h2>Copas com Anulação</h2>", "a vaza fica na mesa", "<h2>Quando a lua ganha</h2>",
            "<code>anuncio QS TC</code>", "<code>anuncio nada</code>")),
    ("ro", ("<h2>Inimi cu anulare</h2>", "levata rămâne pe masă", "<h2>Când luna câștigă</h2>",
            "<code>anunț QS TC</code>", "<code>anunț nimic</code>")),
])
def test_the_help_page_explains_the_variants(app: Flask, language: str, words: tuple[str, ...]) -> None:
    """The rules help page: Turbo and Booster Nines (RULES.md §6.4, §6.5), moon=win (§6.7), Cancellation
    (§6.6), and how a variant is asked for."""
    response = app.test_client().get("/help", headers={"Accept-Language": language})
    html = re.sub(r"\s+", " ", response.get_data(as_text=True))
    for word in words:
        assert word in html, (language, word)
