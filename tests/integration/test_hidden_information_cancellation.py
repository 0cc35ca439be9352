"""Nobody but its taker learns the leftover kitty's cards before the hand is scored (RULES.md §6.6: the
leftovers go face down to the winner of the first trick with a winner, as §6.2's kitty; §6.8: carried with a
cancelled first trick), on SQLite, across the channels a player has: every mail (text, HTML and X-Hearts
headers), the ``status`` and ``history`` replies, the game page and the replay.

Six players, seats 0 and 1 people, the others random bots, no passing: seats 0 and 1 hold every spade (one
of each rank), the kitty is both Q♥ (no seat holds a Q♥). A♠ led and followed cancels trick 1 (the kitty
stays on the table with it); K♠ takes trick 2, the carried pile and the kitty. Seat 1 is told who took the
kitty and when, never its cards, and seat 0's points without them; once the hand is scored everyone sees it.
"""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from pbem.engine import OVER, Rules
from pbem.services.app import Services
from tests.engine.helpers import two_deck_deck
from tests.harness.players import Received
from tests.integration.mailplay import Mailbox, address, answer, html_of, new_game, parsed, prose_of, state_of
from tests.integration.test_variant_views import client, db_url, page_html  # noqa: F401  (fixtures: SQLite)

OPTIONS: dict[str, object] = dict(decks=2, players=6, first_lead="left_of_dealer", no_pts_on_first_trick=False,
                                  pass_cycle=("hold",), end_after_hands=1, tie="share")
SPADES = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"
HANDS = {0: SPADES + " 2C 3C 4C 5C", 1: SPADES + " 2D 3D 4D 5D"}
KITTY = "QH QH"
#: Q♥ named in a mail or page, as text (Q♥), in HTML (a span around Q♥), or as a machine card (QH).
QUEEN = re.compile(r"Q(?:<[^>]*>)*♥|(?<![A-Za-z0-9])QH(?![A-Za-z])")


def reply(svc: Services, box: Mailbox, seat: int, command: str) -> str:
    mails = box.add(answer(svc, box.to(seat)[-1], command))
    return next(" ".join((prose_of(m) + html_of(m)).split()) for m in reversed(mails) if m.recipient == address(seat))


def seen_by(svc: Services, client: FlaskClient, box: Mailbox, game_id: int, seat: int) -> dict[str, str]:
    """What ``seat`` can read now: its game page, its replay, its status and history replies."""
    return {"page": page_html(svc, client, game_id, seat), "replay": page_html(svc, client, game_id, seat, replay=True),
            "status": reply(svc, box, seat, "status"), "history": reply(svc, box, seat, "history")}


def everything(mails: list) -> str:
    """Every mail's text and HTML parts and X-Hearts headers."""
    return "\n".join(prose_of(m) + html_of(m) + "\n".join(f"{k}: {v}" for k, v in parsed(m).items()
                                                          if k.lower().startswith("x-hearts")) for m in mails)


def play(svc: Services, box: Mailbox, seat: int, card: str) -> None:
    decision = [m for m in box.to(seat) if parsed(m).get("X-Hearts-Decision")][-1]
    box.add(answer(svc, decision, card))


def test_the_leftover_kitty_is_its_takers_alone_until_the_hand_is_scored(svc: Services, client: FlaskClient) -> None:
    rules = Rules.make("standard", **OPTIONS)
    game_id, mails = new_game(svc, people=2, seed="hidden-cancellation",
                              deck=list(two_deck_deck(rules, HANDS, KITTY)), **OPTIONS)
    box = Mailbox(list(mails))
    assert state_of(svc, game_id).kitty == ("QH", "QH")
    play(svc, box, 0, "AS")
    play(svc, box, 1, "AS")
    state = state_of(svc, game_id)
    assert state.kitty_taker is None and state.carried  # trick 1 cancelled: the kitty still lies on the table
    play(svc, box, 0, "KS")
    play(svc, box, 1, "QS")
    state = state_of(svc, game_id)
    assert state.kitty_taker == 0 and state.kitty_trick == 2 and state.phase != OVER
    hidden = state.points[0] - state.public_points()[0]
    assert hidden == 2  # both Q♥, face down in seat 0's tricks

    # Seat 1 (and its mails so far) learn who took the kitty and when, never its cards.
    seen = seen_by(svc, client, box, game_id, 1)
    for channel, text in {**seen, "mails": everything(box.to(1))}.items():
        assert not QUEEN.search(text), (channel, QUEEN.search(text))
    assert "Player 0 took the kitty at trick 2." in seen["status"]
    # Seat 0's points as seat 1 sees them leave the kitty out; seat 0 sees its own with it.
    row = re.compile(r"Player 0 (?:\(you\) )?(-?\d+) (-?\d+)")
    assert row.search(seen["status"]).group(1) == str(state.public_points()[0])  # type: ignore[union-attr]
    own = reply(svc, box, 0, "status")
    assert "You took the kitty at trick 2: Q♥ ×2." in own
    assert row.search(own).group(1) == str(state.points[0])  # type: ignore[union-attr]

    # The hand to its end (the first legal card each time): only the summary shows the kitty to seat 1.
    for _ in range(60):
        state = state_of(svc, game_id)
        if state.phase == OVER:
            break
        seat = next(s for s in state.seats_to_act() if s in (0, 1))
        mail = [m for m in box.to(seat) if parsed(m).get("X-Hearts-Decision")][-1]
        before = len(box.to(1))
        box.add(answer(svc, mail, Received.parse(mail.raw).legal[0]))
        later = [m for m in box.to(1)[before:] if m.kind not in ("hand_summary", "game_summary")]
        assert not QUEEN.search(everything(later)), [m.kind for m in later]
    assert state_of(svc, game_id).phase == OVER
    summary = " ".join(prose_of([m for m in box.to(1) if m.kind == "hand_summary"][-1]).split())
    assert "The kitty held Q♥ ×2; Player 0 took it at trick 2." in summary
