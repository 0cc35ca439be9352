"""What each seat's page model holds of a partnership and of a kitty (RULES.md §6.1, §6.2).

The view models (``pbem.services.seat_knowledge.seat_facts``, ``pbem.services.game_views.build_page``
and ``build_replay``) are what the pages and the mails render: a kitty card that is not in another
seat's model cannot be shown to it by any template.  The models are built from engine-played hands
(seeded deals, legal moves); the rendered pages come from games on the real database (SQLite here; the passing variants' pages
in test_variant_views_passing on PostgreSQL) through the web front.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pytest
from flask import Flask, render_template
from flask.testing import FlaskClient

from pbem.engine import (
    CARD_NAMES,
    DEAL,
    DISCARD,
    MOON,
    OVER,
    PLAY,
    ChooseMoon,
    Deal,
    DiscardKitty,
    GameState,
    PassCards,
    PlayCard,
    Rules,
    apply,
    move_to_dict,
    new_game,
    shuffled_deck,
)
from pbem.db.models import Game
from pbem.db.session import transaction
from pbem.mail.links import game_link
from pbem.services.app import Services
from pbem.services.game_views import GamePage, LoggedMove, ReplayPage, build_page, build_replay
from pbem.services.mailing import seat_names
from pbem.services.seat_knowledge import seat_facts
from pbem.web import create_app
from pbem.web.i18n import use_language
from pbem.web.runtime import runtime
from tests.integration.mailplay import (
    Mailbox,
    address,
    answer,
    make_services,
    new_game as mail_game,
    parsed,
    prose_of,
    state_of,
)

NAMES = ("Ann", "Ben", "Cy", "Di")
QUOTED_CARD = re.compile(r"'([2-9TJQKA][CDHS])'")


class Table:
    """A game played through the engine, with its move log as the services store it."""

    def __init__(self, rules: Rules, seed: int) -> None:
        self.rules = rules
        self.state = new_game(rules)
        self.log: list[LoggedMove] = []
        self.rng = random.Random(seed)

    def do(self, move: object) -> None:
        self.state, _events = apply(self.state, move)  # type: ignore[arg-type]
        payload = move_to_dict(move)  # type: ignore[arg-type]
        self.log.append(LoggedMove(kind=str(payload["type"]), seat=payload.get("seat"), payload=payload))

    def deal(self) -> None:
        self.do(Deal(shuffled_deck(self.rules, self.rng)))

    def play_until(self, done) -> None:
        for _ in range(200):
            if done(self.state):
                return
            if self.state.phase == DEAL:
                self.deal()
            elif self.state.phase == MOON:
                self.do(ChooseMoon(self.state.shooter[0], "old"))
            elif self.state.phase == DISCARD:
                taker = self.state.kitty_taker
                self.do(DiscardKitty(taker, tuple(sorted(self.state.hand(taker))[:self.state.discard_count])))
            else:
                self.do(PlayCard(self.state.to_move, self.state.legal_cards()[0]))
        raise AssertionError("never done")

    def page(self, seat: int, status: str = "active") -> GamePage:
        return build_page(game_id=1, seat=seat, status=status, names=NAMES, snapshot=self.state.to_dict(),
                          rules=self.rules.to_dict(), moves=self.log)

    def replay(self, seat: int, status: str = "active") -> ReplayPage:
        return build_replay(game_id=1, seat=seat, status=status, names=NAMES, snapshot=self.state.to_dict(),
                            rules=self.rules.to_dict(), moves=self.log)


def cards_in(model: GamePage | ReplayPage) -> set[str]:
    """Every card a page model names anywhere (its rules apart: ``bonus_card`` is no card's place)."""
    return set(QUOTED_CARD.findall(repr(replace(model, rules={}))))


def played(table: Table) -> set[str]:
    """The cards played so far in the current hand."""
    last_deal = max(k for k, m in enumerate(table.log) if m.kind == "deal")
    return {str(m.payload["card"]) for m in table.log[last_deal:] if m.kind == "play"}


def kitty_taken(state: GameState) -> bool:
    return state.kitty_taker is not None


# --- the kitty ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_only_the_taker_holds_the_kitty_in_its_model(seed: int) -> None:
    table = Table(Rules.make("kitty", pass_cycle=("hold",)), seed)
    table.deal()
    table.play_until(kitty_taken)
    state = table.state
    kitty, taker = set(state.kitty), state.kitty_taker
    assert state.phase == PLAY and len(kitty) == 4, "the kitty is taken before the last trick in these deals"
    for seat in range(4):
        facts = seat_facts(state, seat)
        assert facts.kitty_taker == taker and facts.kitty_trick == state.kitty_trick
        page = table.page(seat)
        if seat == taker:
            assert set(facts.kitty) == kitty and kitty <= cards_in(page)
            assert facts.points[taker] == state.points[taker]
            continue
        assert facts.kitty == () and facts.discarded == () and not facts.kitty_open
        assert not set(facts.taken[taker]) & kitty
        assert facts.points[taker] == state.public_points()[taker] < state.points[taker] or not any(
            c.endswith("H") or c == "QS" for c in kitty)
        assert not cards_in(page) & kitty, (seat, cards_in(page) & kitty)
        assert not cards_in(table.replay(seat)) & kitty
        assert page.view is not None and page.view["points_taken"][taker] == facts.points[taker]
        assert [h.kitty for h in page.hands] == [()] and page.hands[0].kitty_taker == taker


def test_the_kitty_is_shown_to_everyone_once_the_hand_is_played_and_the_replay_once_the_game_is_over() -> None:
    table = Table(Rules.make("kitty", pass_cycle=("hold",), end_after_hands=1, tie="share"), 4)
    table.deal()
    kitty = set(table.state.kitty)
    table.play_until(lambda s: s.phase != PLAY)
    assert table.state.phase == OVER
    for seat in range(4):
        facts = seat_facts(table.state, seat)
        assert set(facts.kitty) == kitty and facts.kitty_open
        replay = table.replay(seat, status="finished")
        assert replay.over and set(replay.hands[0].kitty) == kitty


def test_an_unfinished_hand_of_an_ongoing_game_keeps_its_kitty_in_the_replay() -> None:
    table = Table(Rules.make("kitty", pass_cycle=("hold",)), 5)
    table.deal()
    table.play_until(lambda s: s.hand_no == 2 and kitty_taken(s))
    first_kitty = set(table.replay(0).hands[0].log.kitty)
    assert len(first_kitty) == 4  # hand 1 is over: shown
    now = set(table.state.kitty)
    for seat in set(range(4)) - {table.state.kitty_taker}:
        replay = table.replay(seat)
        assert replay.hands[1].log.kitty == () and replay.hands[1].kitty == ()
        # Hand 2's part of the replay, and the seat's facts: hand 1's tricks may hold the same cards.
        shown = set(QUOTED_CARD.findall(repr(replay.hands[1]) + repr(replay.facts)))
        assert not shown & (now - played(table))


@pytest.mark.parametrize("options", [dict(players=3, kitty="first_trick"),
                                     dict(players=5, kitty="first_penalty"),
                                     dict(players=5, kitty="first_trick", kitty_exchange=True)],
                         ids=["3 first_trick", "5 first_penalty", "5 first_trick exchange"])
def test_every_kitty_form_only_the_taker_sees_it(options: dict[str, object]) -> None:
    """RULES.md §6.2's forms with 3 and 5 players (a 1- or 2-card kitty), passing included."""
    table = Table(Rules.make("standard", **options), 13)
    table.deal()
    kitty = set(table.state.kitty)
    players = table.rules.players
    for seat in range(players):  # every seat passes its three lowest cards
        if table.state.phase == "pass":
            table.do(PassCards(seat, tuple(sorted(table.state.hand(seat))[:3])))
    table.play_until(lambda s: kitty_taken(s) and s.phase == PLAY)
    taker = table.state.kitty_taker
    secret = (kitty | set(table.state.discarded)) - played(table)
    assert secret and len(kitty) == table.rules.table.kitty_size
    for seat in range(players):
        page, replay = table.page(seat), table.replay(seat)
        if seat == taker:
            assert kitty <= set(page.facts.kitty) if page.facts else False
            continue
        # What the seat passed it knows, wherever it went (the taker may discard a card passed to it).
        unknown = secret - set(table.state.hand(seat)) - {CARD_NAMES[i] for i in table.state.passes[seat] or ()}
        assert not (cards_in(page) | cards_in(replay)) & unknown, (seat, (cards_in(page) | cards_in(replay)) & unknown)
        assert page.hands[0].kitty_taker == taker and page.hands[0].kitty_trick == table.state.kitty_trick


def test_kitty_exchange_the_discards_and_the_kitty_are_in_no_other_model() -> None:
    table = Table(Rules.make("kitty", kitty_exchange=True, pass_cycle=("hold",)), 6)
    table.deal()
    kitty = set(table.state.kitty)
    table.play_until(lambda s: s.phase == DISCARD)
    taker = table.state.kitty_taker
    assert kitty <= set(table.state.hand(taker))
    table.play_until(lambda s: s.phase == PLAY and bool(s.discarded))
    discarded = set(table.state.discarded)
    for seat in range(4):
        facts = seat_facts(table.state, seat)
        page = table.page(seat)
        if seat == taker:
            assert set(facts.discarded) == discarded and set(facts.kitty) == kitty
            assert set(page.hands[0].discarded) == discarded
            continue
        assert facts.discarded == () and facts.kitty == ()
        secret = (kitty | discarded) - played(table)
        assert not cards_in(page) & secret, cards_in(page) & secret
        assert not cards_in(table.replay(seat)) & secret
        assert facts.points[taker] == table.state.public_points()[taker]


# --- partnership ----------------------------------------------------------------------------


def test_team_mode_the_page_model_has_the_teams_the_partner_and_the_team_scores() -> None:
    table = Table(Rules.make("partnership", pass_cycle=("hold",)), 8)
    table.deal()
    table.play_until(lambda s: s.hand_no == 2 and s.tricks_played == 2)
    state = table.state
    for seat in range(4):
        page = table.page(seat)
        facts = page.facts
        assert facts is not None
        assert facts.teams == ((0, 2), (1, 3)) and facts.partner == (seat + 2) % 4
        assert facts.team_totals == state.team_totals == (state.totals[0], state.totals[1])
        points = state.history[0][0]
        assert page.team_history == ((points[0], points[1]),)
        assert facts.team_points == (state.points[0] + state.points[2], state.points[1] + state.points[3])


def test_individual_mode_team_totals_are_the_partners_sums() -> None:
    table = Table(Rules.make("partnership-individual", pass_cycle=("hold",)), 9)
    table.deal()
    table.play_until(lambda s: s.hand_no == 2)
    totals = table.state.totals
    facts = table.page(1).facts
    assert facts is not None and facts.partner == 3
    assert facts.team_totals == (totals[0] + totals[2], totals[1] + totals[3])
    replay = table.replay(1)
    assert replay.team_history == ((totals[0] + totals[2], totals[1] + totals[3]),)


def test_no_partnership_no_kitty_nothing_new_in_the_model() -> None:
    table = Table(Rules.make("standard"), 10)
    table.deal()
    facts = table.page(0).facts
    assert facts is not None
    assert facts.teams == () and facts.partner is None and facts.team_totals == () and facts.kitty_size == 0


# --- the pages, rendered, on the real database ----------------------------------------------


@pytest.fixture
def db_url(sqlite_migrated_url: str) -> str:
    """This module's one database, SQLite (see the module's docstring)."""
    return sqlite_migrated_url


@pytest.fixture
def client(svc: Services) -> Iterator[FlaskClient]:
    app: Flask = create_app(svc.settings, clock=svc.clock)
    yield app.test_client()
    runtime(app).dispose()


def page_html(svc: Services, client: FlaskClient, game_id: int, seat: int, replay: bool = False) -> str:
    path = urlparse(game_link(svc.settings, game_id, seat)).path + ("/replay" if replay else "")
    response = client.get(path)
    assert response.status_code == 200
    return re.sub(r"\s+", " ", response.get_data(as_text=True))


def test_a_partnership_page_names_the_partner_and_shows_team_totals(svc: Services, client: FlaskClient) -> None:
    game_id, _mails = mail_game(svc, people=1, seed="team-page", partnership="team")
    html = page_html(svc, client, game_id, 0)
    assert "Your partner is " in html and "Teams: Player 0 and " in html
    assert '<table class="teams">' in html
    assert "Teams: Player 0 and " in page_html(svc, client, game_id, 0, replay=True)
    state = state_of(svc, game_id)
    assert state.rules.teams


def test_a_kitty_page_says_the_kitty_lies_on_the_table(svc: Services, client: FlaskClient) -> None:
    game_id, _mails = mail_game(svc, people=1, seed="kitty-page", kitty="penalty")
    html = page_html(svc, client, game_id, 0)
    assert "The kitty (4 cards) lies face down on the table." in html


# --- the templates, in every language, on pure page models ------------------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """The web front, for rendering page models (no database read: once for the module)."""
    tmp_path: Path = tmp_path_factory.mktemp("variant-pages")
    services = make_services(f"sqlite:///{tmp_path / 'unused.db'}", tmp_path)
    app = create_app(services.settings, clock=services.clock)
    yield app
    runtime(app).dispose()
    services.close()


def render(app: Flask, template: str, page: object, language: str) -> str:
    with app.test_request_context("/"):
        use_language(language)
        return re.sub(r"\s+", " ", render_template(template, page=page, token="t"))


def kitty_exchange_pages() -> dict[str, tuple[str, object]]:
    """Page models at the moments that show something new: the discard asked of the taker, the
    kitty taken seen from another seat, a team game's scores, a finished kitty game's replay."""
    pages: dict[str, tuple[str, object]] = {}
    table = Table(Rules.make("kitty", kitty_exchange=True, pass_cycle=("hold",)), 6)
    table.deal()
    table.play_until(lambda s: s.phase == DISCARD)
    taker = table.state.kitty_taker
    pages["discard"] = ("game.html", table.page(taker))
    table.play_until(lambda s: s.phase == PLAY and bool(s.discarded))
    pages["taker"] = ("game.html", table.page(taker))
    pages["other"] = ("game.html", table.page((taker + 1) % 4))
    team = Table(Rules.make("partnership", pass_cycle=("hold",)), 8)
    team.deal()
    team.play_until(lambda s: s.hand_no == 2 and s.tricks_played == 1)
    pages["team"] = ("game.html", team.page(0))
    pages["team replay"] = ("replay.html", team.replay(0))
    over = Table(Rules.make("kitty", pass_cycle=("hold",), end_after_hands=1, tie="share"), 4)
    over.deal()
    over.play_until(lambda s: s.phase == OVER)
    pages["over replay"] = ("replay.html", over.replay(1, status="finished"))
    team_over = Table(Rules.make("partnership", pass_cycle=("hold",), end_after_hands=1), 11)
    team_over.deal()
    team_over.play_until(lambda s: s.phase == OVER)
    assert team_over.state.winners in ((0, 2), (1, 3))
    pages["team over"] = ("game.html", team_over.page(0, status="finished"))
    pages["team over replay"] = ("replay.html", team_over.replay(0, status="finished"))
    pages["lying"] = ("game.html", lying_kitty_page())
    return pages


def lying_kitty_page() -> GamePage:
    table = Table(Rules.make("kitty", kitty_exchange=True, pass_cycle=("hold",)), 12)
    table.deal()
    assert table.state.kitty_taker is None
    return table.page(0)


def test_the_pages_say_it_in_english(app: Flask) -> None:
    pages = kitty_exchange_pages()
    discard = render(app, *pages["discard"], "en")
    assert "It is your turn: discard 4 cards face down to your tricks." in discard
    assert "You took the kitty at trick" in discard and "The kitty held:" in discard
    taker = render(app, *pages["taker"], "en")
    assert "You discarded face down:" in taker
    other = render(app, *pages["other"], "en")
    assert " took the kitty at trick " in other and "The kitty held:" not in other and "Discarded" not in other
    team = render(app, *pages["team"], "en")
    assert "Your partner is Cy." in team and "Teams: Ann and Cy against Ben and Di." in team
    assert "<h3>Teams</h3>" in team
    replay = render(app, *pages["team replay"], "en")
    assert "Teams: Ann and Cy against Ben and Di." in replay and '<table class="teams">' in replay
    over = render(app, *pages["over replay"], "en")
    assert '<tr class="kitty"><td>The kitty</td>' in over
    for name in ("team over", "team over replay"):
        html = render(app, *pages[name], "en")
        assert re.search(r"The game is over\. Won by the team of (Ann and Cy|Ben and Di)\.", html), name
    lying = render(app, *pages["lying"], "en")
    assert ("The kitty (4 cards) lies face down on the table. It goes to the first player to take a penalty card. "
            "Its taker adds it to their hand and discards as many cards face down.") in lying


@pytest.mark.parametrize("language, words", [("pt", ("descarte 4 cartas", "O seu parceiro é Cy.", "O monte")),
                                             ("ro", ("aruncați 4 cărți", "Partenerul dumneavoastră este Cy.",
                                                     "Talonul"))])
def test_the_pages_say_it_in_portuguese_and_romanian(app: Flask, language: str, words: tuple[str, ...]) -> None:
    pages = kitty_exchange_pages()
    text = " ".join(render(app, template, page, language) for template, page in pages.values())
    for word in words:
        assert word in text, word
    assert "took the kitty" not in text and "Your partner" not in text


# --- the status and history replies ----------------------------------------------------------


def test_status_and_history_replies_show_the_teams_and_their_totals(svc: Services) -> None:
    """RULES.md §6.1: "Mails and pages show the team totals beside the players'"."""
    game_id, mails = mail_game(svc, people=1, seed="team-replies", partnership="team", pass_cycle=("hold",))
    box = Mailbox(list(mails))
    for _ in range(20):
        if state_of(svc, game_id).hand_no == 2:
            break
        decision = [m for m in box.to(0, "your_turn") if parsed(m).get("X-Hearts-Legal")][-1]
        legal = str(parsed(decision)["X-Hearts-Legal"]).split()
        box.add(answer(svc, decision, legal[0].replace("T", "10", 1) if legal[0][0] == "T" else legal[0]))
    state = state_of(svc, game_id)
    assert state.hand_no == 2 and state.team_totals
    for command in ("status", "history"):
        reply = [m for m in box.add(answer(svc, box.to(0)[-1], command)) if m.recipient == address(0)][-1]
        text = prose_of(reply)
        team_rows = re.findall(r"Player 0 & (.+?) \(your team\) +(-?\d+) +(-?\d+)", text)
        assert team_rows, (command, text)
        partner_name, _this_hand, total = team_rows[-1]
        assert partner_name.startswith(state_names(svc, game_id)[2]) and int(total) == state.team_totals[0]


def state_names(svc: Services, game_id: int) -> tuple[str, ...]:
    with transaction(svc.session_factory) as session:
        game = session.get(Game, game_id)
        return seat_names(list(game.seats))


def test_a_game_called_off_mid_hand_shows_its_kitty_and_discards_in_the_replay() -> None:
    table = Table(Rules.make("kitty", kitty_exchange=True, pass_cycle=("hold",)), 6)
    table.deal()
    kitty = set(table.state.kitty)
    table.play_until(lambda s: s.phase == PLAY and bool(s.discarded))
    discarded = set(table.state.discarded)
    taker = table.state.kitty_taker
    other = (taker + 1) % 4
    assert table.replay(other).hands[0].log.discarded == ()  # still on
    replay = table.replay(other, status="aborted")
    assert replay.over and set(replay.hands[0].kitty) == kitty
    assert set(replay.hands[0].log.kitty) == kitty and set(replay.hands[0].log.discarded) == discarded


def test_the_help_page_explains_partners_and_the_kitty(app: Flask) -> None:
    html = re.sub(r"\s+", " ", app.test_client().get("/help", headers={"Accept-Language": "en"}).get_data(as_text=True))
    assert "<h2>Partners and the kitty</h2>" in html and "<code>discard 7C 8D</code>" in html
    assert "only its taker sees its cards while the hand is played" in html
    pt = app.test_client().get("/help", headers={"Accept-Language": "pt"}).get_data(as_text=True)
    assert "Parceiros e o monte" in pt
