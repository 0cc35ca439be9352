"""Summaries (README, "Summaries") through the services, on SQLite and PostgreSQL: the game-summary mail's
inline chart, table and statistics (checked against the engine's own events), the replay link,
and the ``history`` mail."""

from __future__ import annotations

import random
import re
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from pbem.db.models import Move
from pbem.db.session import transaction
from pbem.engine import GameState, HandScored, Rules, TrickWon, apply, move_from_dict
from pbem.services.app import Services
from pbem.web import create_app
from tests.harness.players import Received, choose
from tests.integration.mailplay import Mailbox, answer, last_outcome, new_game, parsed, text_of
from tests.mail.test_chart import decode_png

RULES = {"target": 40}


def play_to_the_end(svc: Services, mails: list, rng: random.Random) -> Mailbox:
    """Seat 0 (the only person) passes by hand and lets the autopilot play each hand."""
    box = Mailbox(list(mails))
    pending = [m for m in mails if m.kind == "your_turn"]
    for _ in range(100):
        if box.to(0, "game_summary"):
            return box
        turn = pending[-1]
        received = Received.parse(turn.raw)
        body = "autopilot" if received.decision == "play" else choose(received, rng)
        pending = [m for m in box.add(answer(svc, turn, body)) if m.kind == "your_turn"]
        assert last_outcome(svc)["code"] in ("AUTOPILOT_ON", "MOVE_APPLIED")
    raise AssertionError("the game did not end")


def engine_counts(svc: Services, game_id: int) -> tuple[list[int], list[int], int]:
    """Hearts and queens of spades taken per seat, and hands played, from the engine's events."""
    with transaction(svc.session_factory) as session:
        payloads = list(session.scalars(select(Move.payload).where(Move.game_id == game_id).order_by(Move.seq)))
    state = GameState.new(Rules.make("standard", **RULES))
    hearts, queens = [0] * 4, [0] * 4
    for payload in payloads:
        state, events = apply(state, move_from_dict(payload))
        for event in events:
            if isinstance(event, TrickWon):
                hearts[event.winner] += sum(card[1] == "H" for card in event.cards)
                queens[event.winner] += "QS" in event.cards
    return hearts, queens, state.hand_no


def engine_hands(svc: Services, game_id: int) -> list[tuple[int, list[int], tuple[int, ...]]]:
    """Per hand, from the engine's events: who took QS, hearts taken per seat, totals after it."""
    with transaction(svc.session_factory) as session:
        payloads = list(session.scalars(select(Move.payload).where(Move.game_id == game_id).order_by(Move.seq)))
    state = GameState.new(Rules.make("standard", **RULES))
    hands, queen, hearts = [], -1, [0] * 4
    for payload in payloads:
        state, events = apply(state, move_from_dict(payload))
        for event in events:
            if isinstance(event, TrickWon):
                hearts[event.winner] += sum(card[1] == "H" for card in event.cards)
                queen = event.winner if "QS" in event.cards else queen
            elif isinstance(event, HandScored):
                hands.append((queen, hearts, event.totals))
                queen, hearts = -1, [0] * 4
    return hands


def test_hand_summaries_name_what_each_seat_took_and_rank_the_totals(svc: Services) -> None:
    """Each hand's summary names the Q♠ taker and each seat's hearts as the engine counted them, and
    lists the totals best first with places; the recipient is "(you)"."""
    game_id, mails = new_game(svc, people=1, seed="summary", **RULES)
    box = play_to_the_end(svc, mails, random.Random(11))
    hands = engine_hands(svc, game_id)
    summaries = box.to(0, "hand_summary")
    assert len(summaries) == len(hands) >= 2
    for number, (mail, (queen, hearts, totals)) in enumerate(zip(summaries, hands), start=1):
        text = text_of(mail)
        taken = text[text.index("Taken this hand:"):].splitlines()[1:5]
        for seat, line in enumerate(taken):
            assert ("Q♠" in line) == (seat == queen), (number, line)
            count = re.search(r"(\d+) hearts?", line)
            assert (int(count.group(1)) if count else 0) == hearts[seat], (number, line)
        assert "(you)" in taken[0]
        table = text[text.index(f"Standings after hand {number}:"):].splitlines()[2:6]
        listed = [int(line.split()[-1]) for line in table]
        assert listed == sorted(totals)  # lowest first
        places = [line.split()[0] for line in table]
        assert places[0] in ("1", "1=") and all(p.rstrip("=").isdigit() for p in places)
        you = next(line for line in table if "(you)" in line)
        assert int(you.split()[-1]) == totals[0]


def test_game_summary_has_chart_table_statistics_and_replay(svc: Services) -> None:
    game_id, mails = new_game(svc, people=1, seed="summary", **RULES)
    box = play_to_the_end(svc, mails, random.Random(11))
    summary = box.latest(0, "game_summary")
    message = parsed(summary)
    outer = list(message.iter_parts())
    assert [p.get_content_type() for p in outer] == ["text/plain", "multipart/related"]
    html_part, image = list(outer[1].iter_parts())
    cid = image["Content-ID"].strip("<>")
    assert f'src="cid:{cid}"' in html_part.get_content()
    width, height, _rows = decode_png(image.get_content())
    shown = re.search(r'<img src="cid:[^"]+" width="(\d+)" height="(\d+)"[^>]*width:100%', html_part.get_content())
    assert (width, height) == (2 * int(shown.group(1)), 2 * int(shown.group(2)))  # drawn at 2x

    text = text_of(summary)
    hearts, queens, hands = engine_counts(svc, game_id)
    assert "Totals after each hand:" in text
    table = text[text.index("Statistics of the game:"):].splitlines()[2:6]
    rows = [list(map(int, line.split()[-3:])) for line in table]
    assert [r[2] for r in rows] == hearts and [r[1] for r in rows] == queens
    assert sum(hearts) == 13 * hands and sum(queens) == hands

    replay = re.search(r"https://hearts\.test/game/\S+/replay", text).group(0)
    app = create_app(svc.settings, clock=svc.clock)
    try:
        page = app.test_client().get(urlsplit(replay).path)
    finally:
        app.extensions["pbem"].dispose()
    assert page.status_code == 200
    body = page.data.decode()
    assert body.count("<th>Dealt</th>") == hands  # the game is over: every deal is shown

    # history: every trick of the game, as seat 0 may see it.
    answers = answer(svc, summary, "history")
    assert last_outcome(svc)["code"] == "HISTORY"
    assert [m.kind for m in answers] == ["history"]
    listed = text_of(answers[0])
    # Text parts are wrapped at 72 columns: a sentence may go on on the next line.
    assert len(re.findall(r"took\s+it\s+\(\d+\s+points?\)", listed)) == 13 * hands
    assert len(re.findall(r"You\s+passed", listed)) == sum(1 for h in range(1, hands + 1) if h % 4 != 0)
