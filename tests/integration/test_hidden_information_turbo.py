"""No seat learns another's charge before the reveal, nor who is still to charge (RULES.md §6.4), on
SQLite, across the channels a player has: the game page, the replay, the ``status`` and ``history``
replies and every mail's X-Hearts headers.

Seats 0 and 1 are people, 2 and 3 random bots, on a hand-chosen deal without passing: seat 0 holds AH,
seat 1 QS and TC, seat 3 JD, seat 2 nothing chargeable (the engine records "none" for it at once, so
naming the seats still to decide would say who holds a chargeable card).  Seat 1 charges QS while seat 0
is still to decide: everything seat 0 can read is the same before and after, and names neither QS nor
TC.  Once seat 0 decides too, every channel shows the charges by player.
"""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from pbem.engine import CHARGE, PLAY, Rules
from pbem.services.app import Services
from tests.engine.helpers import deck_for
from tests.integration.mailplay import Mailbox, address, answer, new_game, parsed, prose_of, state_of
from tests.integration.test_variant_views import client, db_url, page_html  # noqa: F401  (fixtures: SQLite)

OPTIONS: dict[str, object] = dict(turbo=True, jd_bonus=-10, pass_cycle=("hold",), end_after_hands=1, tie="share")
HANDS = {0: "AH", 1: "QS TC", 3: "JD"}
CARD = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9TJQKA])[CDHS♣♦♥♠](?![A-Za-z])")  # a card named, not "UTC"


def reply(svc: Services, box: Mailbox, seat: int, command: str) -> str:
    mails = box.add(answer(svc, box.to(seat)[-1], command))
    return next(prose_of(m) for m in reversed(mails) if m.recipient == address(seat))


def seen_by(svc: Services, client: FlaskClient, box: Mailbox, game_id: int, seat: int) -> dict[str, str]:
    """What ``seat`` can read now: its game page, its replay, its status and history replies."""
    return {"page": page_html(svc, client, game_id, seat), "replay": page_html(svc, client, game_id, seat, replay=True),
            "status": reply(svc, box, seat, "status"), "history": reply(svc, box, seat, "history")}


def hearts_headers(mails: list) -> str:
    return "\n".join(f"{k}: {v}" for m in mails for k, v in parsed(m).items() if k.lower().startswith("x-hearts"))


def test_during_the_charge_phase_nobody_learns_another_charge_nor_who_is_still_to_charge(
        svc: Services, client: FlaskClient) -> None:
    rules = Rules.make("standard", **OPTIONS)
    game_id, mails = new_game(svc, people=2, seed="hidden-turbo", deck=list(deck_for(rules, HANDS)), **OPTIONS)
    box = Mailbox(list(mails))
    state = state_of(svc, game_id)
    assert state.phase == CHARGE and state.seats_to_charge() == (0, 1), state.seats_to_charge()
    assert state.charges[2] == () and state.charges[3] is not None  # the bots: none to decide / decided
    before = seen_by(svc, client, box, game_id, 0)
    assert "It is your turn: charge up to 4 cards, or none. You may charge:" in before["page"]
    assert "Waiting for" not in before["page"]
    # Seat 1 charges the queen of spades; seat 0 is still to decide.
    decision = [m for m in box.to(1) if parsed(m).get("X-Hearts-Legal")][-1]
    box.add(answer(svc, decision, "charge QS"))
    assert state_of(svc, game_id).charges[1] == ("QS",) and state_of(svc, game_id).phase == CHARGE
    after = seen_by(svc, client, box, game_id, 0)
    for channel, text in after.items():
        assert text == before[channel], channel
        assert not {"QS", "Q♠", "TC", "10♣"} & set(CARD.findall(text)), channel
    headers = hearts_headers(box.to(0))
    assert "QS" not in headers and "TC" not in headers, headers
    # Seat 1 sees its own charge on its page, and nobody else's.
    own = page_html(svc, client, game_id, 1)
    assert "You charged:" in own and "Charged cards:" not in own
    assert "The players are deciding which cards to charge." in own and "Waiting for" not in own
    # Seat 0 decides: the charges are revealed to everyone.
    decision = [m for m in box.to(0) if parsed(m).get("X-Hearts-Legal")][-1]
    box.add(answer(svc, decision, "charge none"))
    state = state_of(svc, game_id)
    assert state.phase == PLAY and state.charges_revealed and state.charges[:2] == ((), ("QS",))
    for seat in (0, 1):
        html = page_html(svc, client, game_id, seat)
        assert re.search(r"Charged cards: Player 1: <span class=\"card black\">Q♠</span>;", html), seat
