"""The replay page (README, "Summaries"): while the game is on, only what the seat may see; once it is
over, every deal and every pass. Reached by the seat's signed link only."""

from __future__ import annotations

import random
import re

import pytest

from pbem.db.session import transaction
from pbem.mail.cards_display import card_text
from pbem.services.app import Services
from pbem.services.gamestore import current_state, load_game
from pbem.web import create_app
from pbem.mail.links import game_token, replay_link
from tests.harness.players import Received, choose
from tests.integration.mailplay import Mailbox, answer, new_game

CARD_SPAN = re.compile(r'<span class="card (?:red|black)">([^<]+)</span>')


@pytest.fixture
def client(svc: Services):
    app = create_app(svc.settings, clock=svc.clock)
    yield app.test_client()
    app.extensions["pbem"].dispose()


def page_cards(html: str) -> set[str]:
    return set(CARD_SPAN.findall(html))


def path_of(svc: Services, game_id: int, seat: int) -> str:
    return replay_link(svc.settings, game_id, seat).removeprefix(svc.settings.base_url)


def test_while_the_game_is_on_only_the_seats_view(svc: Services, client) -> None:
    game_id, mails = new_game(svc, people=2, pass_cycle=["left"], seed="replay-on")
    box = Mailbox(list(mails))
    rng = random.Random(5)
    passed = {}
    for seat in (0, 1):  # both pass, then a few cards are played
        turn = box.latest(seat, "your_turn")
        passed[seat] = choose(Received.parse(turn.raw), rng)
        box.add(answer(svc, turn, passed[seat]))
    for _ in range(3):
        turn = [m for m in box.mails if m.kind == "your_turn"][-1]
        box.add(answer(svc, turn, choose(Received.parse(turn.raw), rng)))
    with transaction(svc.session_factory) as session:
        state = current_state(load_game(session, game_id, lock=False))
    page = client.get(path_of(svc, game_id, 0))
    assert page.status_code == 200
    html = page.data.decode()
    assert "Dealt" not in html and "only what your seat may see" in html
    shown = page_cards(html)
    assert {card_text(c) for c in passed[0].split()} <= shown  # seat 0's own pass
    # The others' cards, except those seat 0 passed them (it knows where those went).
    unseen = {card_text(c) for s in (1, 2, 3) for c in state.hand(s)} - {card_text(c) for c in passed[0].split()}
    assert not shown & unseen, "another seat's cards are on the page"
    assert client.get(path_of(svc, game_id, 0).replace("/replay", "x/replay")).status_code == 404
    assert client.get(f"/game/{game_token(svc.settings.secret_key, game_id, 7)}/replay").status_code == 404


def test_once_over_every_deal_and_pass(svc: Services, client) -> None:
    game_id, mails = new_game(svc, people=1, pass_cycle=["left"], seed="replay-over", target=30)
    box = Mailbox(list(mails))
    pending = [m for m in mails if m.kind == "your_turn"]
    rng = random.Random(9)
    while not box.to(0, "game_summary"):
        received = Received.parse(pending[-1].raw)
        body = "autopilot" if received.decision == "play" else choose(received, rng)
        pending = [m for m in box.add(answer(svc, pending[-1], body)) if m.kind == "your_turn"] or pending
    with transaction(svc.session_factory) as session:
        state = current_state(load_game(session, game_id, lock=False))
    html = client.get(path_of(svc, game_id, 2)).data.decode()
    hands = state.hand_no
    assert html.count("<th>Dealt</th>") == hands and html.count("<th>Passed</th>") == hands
    assert "The game is over: every card" in html
    # Every row of a deal table lists 13 cards; each hand's rows hold the whole deck.
    rows = re.findall(r"<tr(?: class=\"me\")?><td>[^<]+</td><td>(.*?)</td><td>(.*?)</td></tr>", html)
    assert len(rows) == 4 * hands
    for k in range(hands):
        dealt = [page_cards(d) for d, _p in rows[4 * k: 4 * k + 4]]
        assert all(len(cards) == 13 for cards in dealt)
        assert len(set().union(*dealt)) == 52
        assert all(len(page_cards(p)) == 3 for _d, p in rows[4 * k: 4 * k + 4])
