"""``help``, ``games`` and ``rules`` from a seated player (README, "Playing"): each is answered with its
own mail, to that player only, and changes nothing in the game — no move, no new decision, the
reply addresses the seats hold stay good. Through the services, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from pbem.db.models import Game, InboundStatus, Move, OutboundMessage
from pbem.db.session import transaction
from pbem.services.app import Services
from tests.harness.players import Received
from tests.integration.mailplay import (
    DOMAIN,
    Mailbox,
    address,
    answer,
    deliver,
    last_outcome,
    new_game,
    text_of,
)

OPTIONS = {"target": 50, "jd_bonus": -10, "pass_cycle": ["hold"]}


def fingerprint(svc: Services, game_id: int) -> tuple:
    """Everything about a game that a command which only informs must leave as it was."""
    with transaction(svc.session_factory) as session:
        game = session.get(Game, game_id)
        seats = tuple((s.seat, s.player_id, s.bot, str(s.status), s.decisions, s.notify, s.stand_in, s.deadline_at,
                       s.played_for) for s in sorted(game.seats, key=lambda s: s.seat))
        moves = session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game_id))
        return (str(game.status), game.snapshot, game.next_seq, game.rules, moves, seats)


def outbox_size(svc: Services) -> int:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(func.count()).select_from(OutboundMessage))


def check_help(text: str, game_ids: list[int], my_turn: bool) -> None:
    assert "Commands (one per reply):" in text
    for command in ("status", "games", "rules", "resign"):
        assert re.search(rf"^\s+{command}\s", text, re.M), command


def check_games(text: str, game_ids: list[int], my_turn: bool) -> None:
    assert "Your games:" in text
    listed = [int(n) for n in re.findall(r"^\s+#(\d+)\s", text, re.M)]
    assert sorted(listed) == sorted(game_ids)
    entry = text.split(f"#{game_ids[0]} ", 1)[1].split("\n  #", 1)[0]  # this table's entry
    assert "Hand 1, your total 0." in entry
    assert ("It is your turn." in entry) is my_turn and ("Waiting for" in entry) is not my_turn, entry


def check_rules(text: str, game_ids: list[int], my_turn: bool) -> None:
    assert "The rules of this game:" in text
    assert "The game ends when a total reaches 50 points." in text  # this game's target, not 100
    assert "Whoever takes J♦ scores -10." in text  # and its bonus card
    assert "no pass" in text


COMMANDS = [
    ("help", "help", "HELP", check_help),
    ("ajuda", "help", "HELP", check_help),
    ("games", "games", "GAMES", check_games),
    ("jocuri", "games", "GAMES", check_games),
    ("rules", "rules", "RULES", check_rules),
    ("regras", "rules", "RULES", check_rules),
]


@pytest.mark.parametrize("body, kind, code, check", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_an_information_command_is_answered_and_changes_nothing(svc: Services, body: str, kind: str, code: str,
                                                                 check) -> None:  # noqa: ANN001
    game_id, mails = new_game(svc, people=3, **OPTIONS)
    other_id, other_mails = new_game(svc, people=2, seed="another table")  # seat 0's second game
    box = Mailbox(list(mails))
    turn = next(m for m in mails if m.kind == "your_turn")
    asked = Received.parse(turn.raw).seat
    idle = next(s for s in range(3) if s != asked)
    before, other_before = fingerprint(svc, game_id), fingerprint(svc, other_id)

    # From the seat whose turn it is (to its turn mail) and from one that waits (to its first mail).
    for seat, mail in ((asked, turn), (idle, box.latest(idle))):
        sent = outbox_size(svc)
        answers = answer(svc, mail, body)
        outcome = last_outcome(svc)
        assert (outcome["status"], outcome["code"]) == (InboundStatus.DONE, code), outcome
        assert [(m.kind, m.recipient) for m in answers] == [(kind, address(seat))]
        assert outbox_size(svc) == sent + 1  # that answer and nothing else
        ids = [game_id, other_id] if seat < 2 else [game_id]  # seats 0 and 1 sit at both tables
        check(text_of(answers[0]), ids, seat == asked)
        assert fingerprint(svc, game_id) == before
        assert fingerprint(svc, other_id) == other_before

    # The turn mail is still the one to answer: the seat's decision is still the same one.
    played = answer(svc, turn, Received.parse(turn.raw).legal[0])
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    assert played and fingerprint(svc, game_id) != before


def test_help_and_games_written_to_the_domains_addresses(svc: Services) -> None:
    """A seated player may also write a new mail (not a reply) to ``help@`` or ``games@``."""
    game_id, mails = new_game(svc, people=3, **OPTIONS)
    asked = Received.parse(next(m for m in mails if m.kind == "your_turn").raw).seat
    before = fingerprint(svc, game_id)
    for local, body, kind, check in (("help", "help", "help", check_help), ("games", "games", "games", check_games)):
        raw = (f"From: {address(1)}\r\nTo: {local}@{DOMAIN}\r\nSubject: {body}\r\n"
               f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()
        answers = deliver(svc, raw, address(1), f"{local}@{DOMAIN}")
        assert [(m.kind, m.recipient) for m in answers] == [(kind, address(1))]
        assert last_outcome(svc)["code"] == kind.upper()
        check(text_of(answers[0]), [game_id], asked == 1)
    assert fingerprint(svc, game_id) == before
