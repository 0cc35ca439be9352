"""One decision, one mail, and what the mails of a game tell (README, "Playing by mail"), on SQLite
and PostgreSQL, read back from the bytes the outbox holds.

A whole bounded game is played by a careful bot that answers every mail carrying
``X-Hearts-Decision`` — and only those — with the example the mail's own text gives.  Each
decision must have had exactly one such mail (none refused as stale, none unanswered), no other
mail may carry the decision headers, the first decision mail says the game has begun, every
trick completed by a move is shown to every person told of it, the cards passed and received
reach every player, and a pass mail never carries the end of the hand before it.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from sqlalchemy import select

from pbem.db.models import InboundMessage, Move, OutboundMessage, Seat
from pbem.db.session import transaction
from pbem.engine import PASS, PLAY
from pbem.mail.addresses import parse_reply_address
from pbem.services.app import Services
from tests.harness.players import Received, reply_bytes
from tests.integration.mailplay import (
    DOMAIN,
    Mailbox,
    address,
    answer,
    deliver,
    last_outcome,
    new_game,
    parsed,
    state_of,
    text_of,
)

DECISION_HEADERS = (b"\r\nX-Hearts-Decision:", b"\r\nX-Hearts-Legal:")


def set_level(svc: Services, game_id: int, seat: int, level: str) -> None:
    with transaction(svc.session_factory) as session:
        session.get(Seat, (game_id, seat)).notify = level


def head(mail: OutboundMessage) -> bytes:
    return bytes(mail.raw).split(b"\r\n\r\n", 1)[0]


def is_decision(mail: OutboundMessage) -> bool:
    return any(h in head(mail) for h in DECISION_HEADERS)


def example_of(mail: OutboundMessage) -> str:
    """The reply the mail itself suggests ("… for example: 10♣")."""
    match = re.search(r"for example: (.+)$", text_of(mail), re.M)
    assert match, text_of(mail)
    return match.group(1).strip()


def finished_tricks_shown(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"^Trick (\d+): (?!nothing)", text, re.M)}


def decisions_by_mail(svc: Services, game_id: int) -> Counter:
    """Per seat, the moves its own player made by mail (not automatic ones)."""
    with transaction(svc.session_factory) as session:
        rows = session.execute(
            select(Move.seat, InboundMessage.mail_from).join(InboundMessage, InboundMessage.id == Move.inbound_id)
            .where(Move.game_id == game_id, Move.seat.is_not(None))).all()
    return Counter(seat for seat, sender in rows if sender == address(seat))


TABLE_KINDS = ("your_turn", "trick_done", "card_played")


def play_on(svc: Services, box: Mailbox, pending: list[OutboundMessage], stop) -> None:
    """Answer the decision mails in order with their own examples until ``stop()``."""
    for _ in range(400):
        if stop():
            return
        mail = pending.pop(0)
        new = box.add(answer(svc, mail, example_of(mail).replace("TC", "10C")))
        assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
        pending += [m for m in new if m.kind == "your_turn"]
    raise AssertionError("never stopped")


def test_a_whole_game_one_mail_per_decision_and_nothing_unseen(svc: Services) -> None:
    """What goes wrong is collected by the point of the README it breaks, then reported together."""
    people = 3  # and one computer player
    game_id, mails = new_game(svc, people=people, seed="one-mail-7", end_after_hands=4)
    levels = {0: "every_card", 1: "turn_and_trick", 2: "turn_only"}
    for seat, level in levels.items():
        set_level(svc, game_id, seat, level)
    box = Mailbox(list(mails))
    problems: dict[str, list[str]] = {}

    def check(point: str, ok: object, what: object = "") -> None:
        if not ok:
            problems.setdefault(point, []).append(str(what)[:600])

    # The start: no separate "game started" mail; each first decision mail says the game begins.
    check("start: one mail", [m.kind for m in mails] == ["your_turn"] * people, [m.kind for m in mails])
    for mail in (m for m in mails if m.kind == "your_turn"):
        text = text_of(mail)
        check("start: said in the decision mail", "the game begins" in text and "Seats, in playing order:" in text
              and "The rules:" in text and text.find("the game begins") < text.index("Reply with the"), text)
        check("start: no mail announced", "follows" not in text, text)
    # In the first hand two players let the autopilot play their cards (their passes stay
    # theirs): then a single legal card of seat 0 makes one move complete several tricks.
    for seat in (1, 2):
        box.add(answer(svc, box.latest(seat, "your_turn"), "autopilot"))
        assert last_outcome(svc)["status"] == "done", last_outcome(svc)

    pending = [m for m in mails if m.kind == "your_turn"]
    several_tricks = exchanges_told = stale_checked = 0
    awaiting: dict[int, int] = {}  # seat -> hand whose exchange its next table mail must tell
    applied: Counter = Counter()
    for _ in range(2000):
        if not pending:
            break
        mail = pending.pop(0)
        received = Received.parse(mail.raw)
        before = state_of(svc, game_id)
        body = "old" if received.decision == "moon" else example_of(mail)
        if received.decision == "play":  # the example is written as the hand shows it, and is legal
            shown = [c.replace("T", "10")[:-1] + "♣♦♥♠"["CDHS".index(c[-1])] for c in received.legal]
            check("example as the hand shows it", body in shown, (body, shown))
            body = body if body in shown else received.legal[0]
        # A news mail sent with the same reply address as this decision (while it was pending).
        twin = next((m for m in reversed(box.to(0)) if m.kind in ("trick_done", "card_played")
                     and Received.parse(m.raw).reply_to == received.reply_to), None) \
            if mail.recipient == address(0) and received.decision == "play" and not stale_checked else None
        new = box.add(answer(svc, mail, body))
        assert last_outcome(svc)["code"] == "MOVE_APPLIED", (body, last_outcome(svc))
        applied[received.seat] += 1
        pending += [m for m in new if m.kind == "your_turn"]
        after = state_of(svc, game_id)
        if twin is not None and len(received.legal) > 1:
            # A card answered to that news mail too is not applied: the decision was made.
            other = next(c for c in received.legal if c.replace("T", "10") not in body)
            moves = sum(decisions_by_mail(svc, game_id).values())
            box.add(answer(svc, twin, other.replace("T", "10")))
            assert last_outcome(svc)["code"] == "STALE_TURN", last_outcome(svc)
            assert sum(decisions_by_mail(svc, game_id).values()) == moves
            stale_checked += 1

        # Every trick completed by this move is shown to each person told of the table.
        if after.hand_no == before.hand_no and after.phase == PLAY:
            completed = set(range(before.tricks_played + 1, after.tricks_played + 1))
            several_tricks += len(completed) > 1
            for m in new:
                if m.kind in ("your_turn", "trick_done"):
                    check("every trick of a move shown", completed <= finished_tricks_shown(text_of(m)),
                          (m.kind, m.recipient, completed, text_of(m)))
        # The exchange: each person's first mail about the table afterwards says what they passed
        # and received, even when their first card was played for them (the 2♣ always is).
        if before.phase == PASS and after.phase == PLAY and after.hand_no == before.hand_no:
            awaiting = {seat: after.hand_no for seat in range(people)}
        for m in new:
            seat = next((s for s in awaiting if m.recipient == address(s)), None)
            if seat is None or m.kind not in TABLE_KINDS or Received.parse(m.raw).decision == "pass":
                continue
            check("exchange told", "You received" in text_of(m), (seat, m.kind, text_of(m)))
            del awaiting[seat]
            exchanges_told += 1
        awaiting = {s: h for s, h in awaiting.items() if h == after.hand_no}
    assert not pending and box.to(0, "game_summary"), "the game did not end"
    assert several_tricks, "no move completed several tricks: the check above proved nothing"
    assert exchanges_told >= 2 * people and stale_checked == 1

    # One decision, one mail: only decision mails carry the headers, every decision mail carries
    # both, and each decision (seat, decision number of its reply address) had exactly one mail.
    decision_mails = [m for m in box.mails if is_decision(m)]
    check("decision headers only on decision mails", all(m.kind == "your_turn" for m in decision_mails),
          Counter(m.kind for m in decision_mails))
    check("both headers on every decision mail",
          all(all(h in head(m) for h in DECISION_HEADERS) for m in box.mails if m.kind == "your_turn"))
    tokens = [parse_reply_address("test-secret-key", DOMAIN, Received.parse(m.raw).reply_to)
              for m in box.mails if m.kind == "your_turn"]
    check("one mail per decision", len(set(tokens)) == len(tokens))
    check("every decision mail answered once", Counter(t.seat for t in tokens) == applied)
    check("pass acknowledged (not to turn only)", all(m.kind != "pass_done" for m in box.to(2))
          and any(m.kind == "pass_done" for m in box.to(0) + box.to(1)))

    # Cards played for a player are told in their turn mail of the same hand, in the right
    # number; the end of a hand (its forced last cards) is never in the next hand's pass mail.
    for mail in box.mails:
        text = text_of(mail)
        if mail.kind == "your_turn" and Received.parse(mail.raw).decision == "pass":
            check("no end of a hand in a pass mail", "played for you" not in text, text)
        for line in re.findall(r"^.*(?:only one card you could play|only possible card).*$", text, re.M):
            cards = line.split(": ", 1)[1]
            check("forced cards worded by number", line.startswith("Each time") == (" and " in cards), line)
    assert any("only one card you could play" in text_of(m) for m in box.mails) or problems, \
        "no card was played for anyone: the check above proved nothing"
    assert not problems, "\n".join(f"{point}: {len(found)} times, e.g. {found[0]}" for point, found in problems.items())


def test_the_two_of_clubs_holder_is_told_the_exchange_in_a_later_turn_mail(svc: Services) -> None:
    """Turn-only players get no trick mails: the 2♣ holder's first mail after the passes is a turn
    mail at trick 2 or later, and it still says what they passed and received (once)."""
    game_id, mails = new_game(svc, people=4, seed="exchange-3")
    for seat in range(4):
        set_level(svc, game_id, seat, "turn_only")
    box = Mailbox(list(mails))
    pending = [m for m in mails if m.kind == "your_turn"]
    play_on(svc, box, pending, lambda: state_of(svc, game_id).phase == PLAY)
    holder = _two_of_clubs_leader(svc, game_id)

    def turns() -> list[OutboundMessage]:
        return [m for m in box.to(holder, "your_turn") if Received.parse(m.raw).decision == "play"]

    play_on(svc, box, pending, lambda: len(turns()) >= 1)
    text = text_of(turns()[0])
    assert "Trick 1:" in text and "2♣" in text
    assert "You passed" in text and "You received" in text, text
    assert "You had only one card you could play, so it was played for you: 2♣." in text
    play_on(svc, box, pending, lambda: len(turns()) >= 2 or state_of(svc, game_id).hand_no > 1)
    if len(turns()) >= 2:
        assert "You received" not in text_of(turns()[1])


def _two_of_clubs_leader(svc: Services, game_id: int) -> int:
    with transaction(svc.session_factory) as session:
        rows = session.execute(select(Move.seat, Move.payload).where(Move.game_id == game_id, Move.kind == "play")
                               .order_by(Move.seq)).all()
    return next(seat for seat, payload in rows if payload["card"] == "2C")


def test_a_pass_is_acknowledged_at_once_without_decision_headers(svc: Services) -> None:
    game_id, mails = new_game(svc, people=3, seed="ack-1")
    set_level(svc, game_id, 2, "digest")
    box = Mailbox(list(mails))
    first = box.latest(0, "your_turn")
    chosen = example_of(first)
    new = box.add(answer(svc, first, chosen))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    assert [(m.kind, m.recipient) for m in new] == [("pass_done", address(0))]
    ack = new[0]
    assert not is_decision(ack)
    assert parsed(ack)["List-Unsubscribe"]  # a news mail
    assert parsed(ack)["Reply-To"]  # a status or a say line may still answer it
    state = state_of(svc, game_id)
    target = (0 + 1) % 4  # hand 1 passes to the left
    text = " ".join(text_of(ack).split())
    assert f"You passed {_listed(chosen)} to Player {target}." in text, text
    assert "once everyone has passed" in text and "Waiting for Player 1 and Player 2." in text
    assert state.phase == PASS

    # A digest player is not sent one (they chose fewer mails); the last to pass gets none either:
    # the exchange follows at once.
    assert answer(svc, box.latest(2, "your_turn"), example_of(box.latest(2, "your_turn"))) == []
    last = box.add(answer(svc, box.latest(1, "your_turn"), example_of(box.latest(1, "your_turn"))))
    assert "pass_done" not in {m.kind for m in last}
    assert state_of(svc, game_id).phase == PLAY


def _listed(example: str) -> str:
    """``Q♠ K♥ A♥`` as the mails list cards: sorted as in a hand (♠ ♥ ♣ ♦, low to high), "A, B, and C"."""
    order = {s: k for k, s in enumerate("♠♥♣♦")}
    ranks = "2 3 4 5 6 7 8 9 10 J Q K A".split()
    cards = sorted(example.split(), key=lambda c: (order[c[-1]], ranks.index(c[:-1])))
    return ", ".join(cards[:-1]) + ", and " + cards[-1]


# -- notices about a game, inside its thread ----------------------------------------------------


def _thread_of(mail: OutboundMessage) -> tuple[str, str, str]:
    msg = parsed(mail)
    return str(msg["Subject"]), str(msg["In-Reply-To"]), str(msg["X-Hearts-Game"])


def test_notices_about_a_game_come_inside_its_thread(svc: Services) -> None:
    game_id, mails = new_game(svc, people=2, seed="notices-1")
    turn = next(m for m in mails if m.recipient == address(0))
    received = Received.parse(turn.raw)
    subject, root, game = _thread_of(turn)
    assert game == str(game_id) and root.startswith("<hearts-")

    # A reply from another address: the seat's player is told, in the game's thread.
    forged = deliver(svc, reply_bytes(received, sender="mallory@evil.test", body="status"), "mallory@evil.test",
                     received.reply_to)
    assert [(m.kind, m.recipient) for m in forged] == [("request_rejected", address(0))]
    # An altered reply address (its signature changed): told in the thread too.
    local, domain = received.reply_to.split("@")
    altered = local[:-1] + ("a" if local[-1] != "a" else "b") + "@" + domain
    bad = deliver(svc, reply_bytes(received, sender=address(0), body=received.hand[0]), address(0), altered)
    assert [(m.kind, m.recipient) for m in bad] == [("request_rejected", address(0))]
    assert last_outcome(svc)["code"] == "BAD_ADDRESS"
    for notice in forged + bad:
        msg = parsed(notice)
        assert _thread_of(notice) == (subject, root, game)
        assert root in str(msg["References"])
        assert msg["X-Hearts-Hand"] == parsed(turn)["X-Hearts-Hand"]
        assert not is_decision(notice)


def _new_game_request(sender: str, message_id: str, body: str) -> bytes:
    return "\r\n".join([
        f"From: Ana <{sender}>", f"To: new@{DOMAIN}", "Subject: Friday game", f"Message-ID: {message_id}",
        "MIME-Version: 1.0", 'Content-Type: text/plain; charset="utf-8"', "", body, ""]).encode()


def test_the_answer_to_a_new_game_request_threads_with_the_request(svc: Services) -> None:
    request_id = "<request-1@ana.test>"
    answers = deliver(svc, _new_game_request("ana@ana.test", request_id, "new game\nplayers: bob@bob.test\nbots: 2"),
                      "ana@ana.test", f"new@{DOMAIN}")
    assert [m.kind for m in answers] == ["invitation"]  # to confirm her own seat
    msg = parsed(answers[0])
    assert msg["In-Reply-To"] == request_id
    assert request_id in str(msg["References"]) and "<hearts-" in str(msg["References"])

    # A request that cannot be used is answered in the request's thread too.
    refused = deliver(svc, _new_game_request("ana@ana.test", "<request-2@ana.test>",
                                             "new game\nplayers: bob@bob.test\nrules: omnibsu"),
                      "ana@ana.test", f"new@{DOMAIN}")
    assert [m.kind for m in refused] == ["request_rejected"]
    assert parsed(refused[0])["In-Reply-To"] == "<request-2@ana.test>"

    # A Message-ID we would not write back is left out, never copied into our headers.
    odd = "<" + "x" * 300 + "@ana.test>"
    refused = deliver(svc, _new_game_request("ana@ana.test", odd, "new game\nplayers: bob@bob.test\nrules: x"),
                      "ana@ana.test", f"new@{DOMAIN}")
    assert all(parsed(m)["In-Reply-To"] is None for m in refused)


def test_a_verified_players_game_against_the_computer_starts_in_the_requests_thread(svc: Services) -> None:
    new_game(svc, people=1, seed="verified-1")  # p0 took a seat: a verified address
    request_id = "<against-the-computer@players.test>"
    answers = deliver(svc, _new_game_request(address(0), request_id, "new game\nbots: 3"), address(0),
                      f"new@{DOMAIN}")
    assert [(m.kind, m.recipient) for m in answers] == [("your_turn", address(0))]
    msg = parsed(answers[0])
    assert msg["In-Reply-To"] == request_id and "<hearts-" in str(msg["References"])
    assert "the game begins" in text_of(answers[0]) and is_decision(answers[0])


def test_a_player_with_nothing_to_decide_at_the_start_is_told_once_without_a_decision(svc: Services) -> None:
    """No passing in hand 1: the 2♣ is played for its holder and one player is asked; the others
    get the start of the game in a news mail of its own, with their hand and no decision."""
    game_id, mails = new_game(svc, people=4, seed="hold-start-2", pass_cycle=["hold"])
    for seat in range(4):
        theirs = [m for m in mails if m.recipient == address(seat)]
        begins = [m for m in theirs if "the game begins" in text_of(m)]
        assert len(begins) == 1, [m.kind for m in theirs]
        first = begins[0]
        if first.kind == "game_started":
            assert not is_decision(first) and parsed(first)["X-Hearts-Hand"]
            assert "follows" not in text_of(first) and "You will get a mail when it is your turn." in text_of(first)
        else:
            assert first.kind == "your_turn" and is_decision(first)
    assert sum(m.kind == "your_turn" for m in mails) == 1


def test_a_card_sent_to_a_news_mail_after_the_decision_is_not_applied_twice(svc: Services) -> None:
    """News mails keep the seat's reply address (for ``status``, ``say``…); its decision number
    makes a second answer to the same decision stale."""
    game_id, mails = new_game(svc, people=2, seed="news-twice-2")
    box = Mailbox(list(mails))
    ack = box.add(answer(svc, box.latest(0, "your_turn"), example_of(box.latest(0, "your_turn"))))
    assert [m.kind for m in ack] == ["pass_done"]
    assert Received.parse(ack[0].raw).reply_to != Received.parse(box.latest(0, "your_turn").raw).reply_to
    moves = sum(decisions_by_mail(svc, game_id).values())
    before = state_of(svc, game_id).passes
    # The same pass again, to the first mail: refused as stale, nothing changes.
    box.add(answer(svc, box.latest(0, "your_turn"), example_of(box.latest(0, "your_turn"))))
    assert last_outcome(svc)["code"] in ("STALE_TURN", "ALREADY_PASSED")
    assert state_of(svc, game_id).passes == before and sum(decisions_by_mail(svc, game_id).values()) == moves
    # A status command to the acknowledgement works: the reply address is the seat's.
    status = box.add(answer(svc, ack[0], "status"))
    assert [m.kind for m in status] == ["status"] and not is_decision(status[0])
