"""No seat learns what the passing variants hide (RULES.md §6.3, §6.8), on SQLite (the kitty's checks
run on PostgreSQL), across every channel a player has: every part and header of every mail, the ``status`` and
``history`` replies, the game page and the replay (the checks of tests/integration/test_hidden_information.py).

* ``pass_optional``: the scripted human in seat 0 declines (``no pass``); the person in seat 1 passes
  to the right, so their cards go on through seat 0, unseen (RULES.md §6.3 "a player who declined
  never sees the forwarded cards"): none of them is named to seat 0 before it is played, and seat 0
  is told nothing it received.  Nobody else is told that seat 0 declined.
* ``mix`` with a kitty (RULES.md §6.2: the kitty is shuffled in and a new one dealt): the human sees
  only the cards dealt back to them, never another seat's pass, the old kitty or the new one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from pbem.db.models import Move
from pbem.db.session import transaction
from pbem.engine import CARD_NAMES, MIX, OVER, PASS, PLAY, Rules
from pbem.mail.links import game_link
from pbem.services.app import Services
from pbem.web import create_app
from pbem.web.runtime import runtime
from tests.integration.mailplay import Mailbox, address, answer, new_game as mail_game, parsed, prose_of, state_of
from tests.integration.test_hidden_information import HUMAN, Watch, deck_for, lowest, lowest_cards

ORDER = "23456789TJQKA"


@pytest.fixture
def db_url(sqlite_migrated_url: str) -> str:
    """This module's one database, SQLite (see the module's docstring)."""
    return sqlite_migrated_url


@pytest.fixture
def client(svc: Services) -> Iterator[FlaskClient]:
    app: Flask = create_app(svc.settings, clock=svc.clock)
    yield app.test_client()
    runtime(app).dispose()


def decision(box: Mailbox, seat: int) -> tuple[object, str, str]:
    """The latest decision mail to ``seat``: (mail, X-Hearts-Decision, X-Hearts-Legal)."""
    mail = [m for m in box.to(seat, "your_turn") if parsed(m).get("X-Hearts-Legal")][-1]
    message = parsed(mail)
    return mail, str(message.get("X-Hearts-Decision", "")), str(message["X-Hearts-Legal"])


def lowest_three(legal: str) -> str:
    return " ".join(sorted(legal.split(), key=lambda c: ORDER.index(c[0]))[:3])


def to_act(svc: Services, game_id: int, people: int) -> list[int]:
    state = state_of(svc, game_id)
    seats = state.seats_to_pass() if state.phase == PASS else state.seats_to_act()
    return [s for s in seats if s < people]


def play_on(svc: Services, client: FlaskClient, watch: Watch, box: Mailbox, *, people: int, decline: bool) -> None:
    """Answer the people's decisions until the hand is over, the human looking everywhere now and then."""
    game_id = watch.game_id
    turns = 0
    for _ in range(120):
        state = state_of(svc, game_id)
        if state.phase == OVER or state.hand_no > 1:
            return
        seats = to_act(svc, game_id, people)
        assert seats, (state.phase, state.seats_to_act())
        seat = seats[0]
        mail, kind, legal = decision(box, seat)
        if state.phase == PASS:
            if seat == HUMAN and decline:
                assert parsed(mail).get("X-Hearts-Decline"), "the pass decision does not say declining is allowed"
                reply = "no pass"
            else:
                reply = lowest_three(legal)
        else:
            reply = lowest(legal)
        new = box.add(answer(svc, mail, reply))
        after = state_of(svc, game_id)
        if after.phase == OVER or after.hand_no > 1:
            return  # the hand is over: every card has been played
        if after.phase == PLAY and state.phase in (PASS, MIX):
            received = {CARD_NAMES[i] for i in range(52) if after.received[HUMAN] >> i & 1}
            watch.human = tuple(set(watch.human) | received)  # what was dealt back to them is theirs to know
            watch.kitty = tuple(after.kitty)  # a mix deals a new kitty (RULES.md §6.2)
        watch.mails(new)
        turns += 1
        if turns % 4 == 1:
            for command in ("status", "history"):
                watch.mails(box.add(answer(svc, box.to(HUMAN)[-1], command)))
            watch.pages()
    raise AssertionError("the hand never ended")


def test_a_decliner_never_learns_the_cards_forwarded_through_them(svc: Services, client: FlaskClient) -> None:
    options: dict[str, object] = dict(pass_optional=True, pass_cycle=("right",), end_after_hands=1, tie="share")
    game_id, mails = mail_game(svc, people=2, seed="hidden-decline", **options)
    box = Mailbox(list(mails))
    human = tuple(state_of(svc, game_id).hand(HUMAN))
    watch = Watch(svc, game_id, client, (), human)
    watch.mails(mails)
    watch.pages()
    assert "Passing is optional this hand" in client.get(page_path(svc, game_id)).get_data(as_text=True)
    play_on(svc, client, watch, box, people=2, decline=True)
    assert watch.problems == {}
    moves = passes_of(svc, game_id)
    assert moves[HUMAN] == "decline" and isinstance(moves[1], list), moves
    forwarded = set(moves[1])
    assert forwarded and not forwarded & set(human)
    # The human's page says they declined; seat 1's mails and game page never say who declined.
    assert "You declined to pass" in client.get(page_path(svc, game_id)).get_data(as_text=True)
    for mail in box.to(1):
        for line in prose_of(mail).splitlines():
            assert not ("Player 0" in line and "declin" in line.lower()), line
    assert "declin" not in client.get(page_path(svc, game_id, 1)).get_data(as_text=True).lower()
    # The history reply tells the decliner they declined (and only them).
    reply = [m for m in answer(svc, box.to(HUMAN)[-1], "history") if m.recipient == address(HUMAN)][-1]
    assert "You declined the pass: you kept your hand and received no cards." in prose_of(reply)
    other = [m for m in answer(svc, box.to(1)[-1], "history") if m.recipient == address(1)][-1]
    assert "declined" not in prose_of(other)


def test_the_history_reply_names_the_dealers_call(svc: Services) -> None:
    """RULES.md §6.3: "The call is told to everyone with the deal" — and the history reply keeps it."""
    game_id, mails = mail_game(svc, people=1, seed="history-call", dealer_calls_pass=True, pass_cycle=("left",))
    state = state_of(svc, game_id)
    assert state.hand_no == 1 and state.pass_call, (state.phase, state.pass_call)
    reply = [m for m in answer(svc, Mailbox(list(mails)).to(HUMAN)[-1], "history") if m.recipient == address(HUMAN)][-1]
    assert re.search(r"\S called “[^”]+” for this hand\.", prose_of(reply)), prose_of(reply)


def test_a_mix_hand_the_human_sees_only_what_is_dealt_back(svc: Services, client: FlaskClient) -> None:
    kitty = ("AH", "KH", "9D", "8C")
    options: dict[str, object] = dict(kitty="penalty", pass_cycle=("mix",), end_after_hands=1, tie="share")
    rules = Rules.make("standard", **options)
    human = lowest_cards(rules)
    deck = deck_for(rules, kitty, human, seed=5)
    game_id, mails = mail_game(svc, people=1, seed="hidden-mix", deck=deck, **options)
    box = Mailbox(list(mails))
    watch = Watch(svc, game_id, client, kitty, human)
    watch.mails(mails)
    play_on(svc, client, watch, box, people=1, decline=False)
    assert watch.problems == {}
    html = client.get(page_path(svc, game_id)).get_data(as_text=True)
    assert "the passed cards are mixed and dealt back" in html


def page_path(svc: Services, game_id: int, seat: int = HUMAN) -> str:
    return urlparse(game_link(svc.settings, game_id, seat)).path


def passes_of(svc: Services, game_id: int) -> dict[int, object]:
    """Each seat's pass of hand 1 from the move log: its cards, or ``"decline"``."""
    with transaction(svc.session_factory) as session:
        rows = session.execute(select(Move.kind, Move.seat, Move.payload).where(Move.game_id == game_id)
                               .order_by(Move.seq)).all()
    out: dict[int, object] = {}
    for kind, seat, payload in rows:
        if kind == "pass":
            out[seat] = list(payload["cards"])
        elif kind == "decline":
            out[seat] = "decline"
    return out
