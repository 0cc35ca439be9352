"""No seat learns the kitty (RULES.md §6.2), on PostgreSQL, across every channel a player has.

A game with a kitty is played by mail on the real services: one scripted human in seat 0 and computer
players (three; two in the 3-player game).  The human is dealt the lowest cards of every suit, the 2♣
among them, so they can win no trick and never take the kitty; they play their lowest legal card, ask for their ``status`` and
``history`` now and then, and their game page and replay are fetched from the web front with their
own link.

What is checked, while the hand is on (the hand's last mails may show the kitty: every other card of
the hand has then been played face up):

* **no card the human may not know is named** anywhere they can look: every part of every mail they
  received (text and HTML, every header, ``X-Hearts-*`` included), the ``status`` and ``history``
  replies, the game page and the replay.  "May know" is: the cards they were dealt, and the cards
  played to a trick so far (the move log says which, after each of their replies).  The kitty is in
  no trick, so it is never named; with ``kitty_exchange`` the kitty's cards go to the taker's hand
  and may be named once played, the taker's face-down discards never.  Every other seat's unplayed
  cards are covered by the same rule (no header or page shows another seat's hand).
* **no line that speaks of the kitty names its cards**, at any time of the hand (in the exchange game a
  kitty card may be named once played, but never as the kitty's).
* **the kitty's points are face down too**: the points so far that the ``status`` reply and the game
  page show the kitty's taker are those of the tricks it won, as the whole table saw them played.
* **the table is told who took it**: the page says so once it is taken.
* the checks can fail: a person who takes the kitty is shown its cards (status reply, game page), and
  once the game is over the replay shows the kitty to everyone.

The view models themselves are tested in tests/integration/test_variant_views.py. The database is not
what this is about: the kitty's checks run on PostgreSQL, the passing variants' on SQLite
(tests/integration/test_hidden_information_passing.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from urllib.parse import urlparse

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from pbem.db.models import Move, OutboundMessage
from pbem.db.session import transaction
from pbem.engine import CARD_NAMES, DISCARD, PLAY, Rules, card_points, deck_in_play, new_game, trick_winner
from pbem.mail.links import game_link
from pbem.services.app import Services
from pbem.web import create_app
from pbem.web.runtime import runtime
from tests.integration.mailplay import Mailbox, address, answer, new_game as mail_game, parsed, prose_of, state_of

pytestmark = pytest.mark.postgres

HUMAN = 0
def lowest_cards(rules: Rules) -> tuple[str, ...]:
    """A hand of the lowest ranks (2♣ first): every other card of each suit beats each of its cards."""
    by_rank = [f"{rank}{suit}" for rank in "23456789TJQKA" for suit in "CDHS"]
    return tuple(by_rank[:rules.table.hand_size])
SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
SYMBOL_CARD = re.compile(r"(10|[2-9JQKA])\s?([♣♦♥♠])")
#: A row of the mails' score table: name, points this hand, total.
SCORE_ROW = re.compile(r"^  \S.*?\s{2,}(-?\d+)\s+(-?\d+)\s*$", re.M)
#: The game page's row of the points so far this hand.
SO_FAR_ROW = re.compile(r"<tr><th>Hand \d+ so far</th>(.*?)</tr>")
#: A rule about a card ("Q♠ counts 13 points", in the first mail's rules) says nothing of where it lies.
RULE_ABOUT_A_CARD = re.compile(r"(10|[2-9JQKA])\s?[♣♦♥♠](</span>)?\s+counts\b")
CANONICAL_CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9TJQKA])([CDHS])(?![0-9A-Za-z])")


def named_cards(text: str, *, canonical: bool) -> set[str]:
    """Cards named in ``text``: ``Q♠``/``10♥`` as mails and pages show them, and (``canonical``, for
    headers and replies' examples) ``QS``/``TC``/``10C``."""
    text = RULE_ABOUT_A_CARD.sub(" ", text)
    found = {("T" if rank == "10" else rank) + SYMBOLS[suit] for rank, suit in SYMBOL_CARD.findall(text)}
    if canonical:
        found |= {("T" if rank == "10" else rank) + suit for rank, suit in CANONICAL_CARD.findall(text)}
    return found


def deck_for(rules: Rules, kitty: tuple[str, ...], human: tuple[str, ...], seed: int) -> list[str]:
    """A deck the engine deals as ``kitty`` and ``human`` to seat 0 (the rest shuffled to the bots,
    each with a club: the human's 2♣ lead cannot win), found by dealing a probe deck once."""
    probe = list(deck_in_play(rules))
    dealt = new_game(rules).deal(probe)
    holder = ["kitty" if card in dealt.kitty else next(s for s in range(rules.players) if card in dealt.hand(s))
              for card in probe]
    rest = [c for c in probe if c not in kitty and c not in human]
    rng = random.Random(seed)
    while True:
        rng.shuffle(rest)
        sources = {"kitty": iter(kitty), HUMAN: iter(human)}
        others = iter(rest)
        deck = [next(sources[h]) if h in sources else next(others) for h in holder]
        state = new_game(rules).deal(deck)
        if all(any(c.endswith("C") for c in state.hand(s)) for s in range(1, rules.players)):
            assert set(state.kitty) == set(kitty) and set(state.hand(HUMAN)) == set(human)
            return deck


@dataclass
class Watch:
    """What the human has seen so far, and what went wrong, by channel."""

    svc: Services
    game_id: int
    client: FlaskClient
    kitty: tuple[str, ...]
    human: tuple[str, ...]  # the cards the human was dealt
    problems: dict[str, list[str]] = field(default_factory=dict)
    seen_taker_line: bool = False
    seen_history_taker_line: bool = False

    def fail(self, where: str, what: object) -> None:
        self.problems.setdefault(where, []).append(str(what)[:500])

    def played(self) -> set[str]:
        with transaction(self.svc.session_factory) as session:
            payloads = session.scalars(select(Move.payload).where(Move.game_id == self.game_id, Move.kind == "play"))
            return {str(p["card"]) for p in payloads}

    def trick_points(self) -> list[int]:
        """Each seat's points from the tricks it won this hand, as the whole table saw them played."""
        with transaction(self.svc.session_factory) as session:
            rows = session.execute(select(Move.kind, Move.seat, Move.payload).where(Move.game_id == self.game_id)
                                   .order_by(Move.seq)).all()
        rules = state_of(self.svc, self.game_id).rules
        points = [0] * rules.players
        trick: list[tuple[int, str]] = []
        for kind, seat, payload in rows:
            if kind == "deal":
                points, trick = [0] * rules.players, []
            elif kind == "play":
                trick.append((seat if seat is not None else payload["seat"], str(payload["card"])))
                if len(trick) == rules.players:
                    cards = [c for _, c in trick]
                    points[trick_winner(cards, trick[0][0], rules.players)] += card_points(rules, cards)
                    trick = []
        return points

    def check_points(self, where: str, shown: list[int]) -> None:
        """The points so far a seat is shown are those of the tricks it won (the kitty's are face down)."""
        taker = state_of(self.svc, self.game_id).kitty_taker
        expected = self.trick_points()
        if taker is not None and shown and shown[taker] != expected[taker]:
            self.fail(where, f"the kitty's taker is shown {shown[taker]} points, the tricks give {expected[taker]}")

    def secrets(self) -> tuple[set[str], set[str]]:
        """(cards the human may not know now, the kitty's cards and the discards)."""
        state = state_of(self.svc, self.game_id)
        hidden = set(self.kitty) | set(state.discarded)
        return set(CARD_NAMES) - set(self.human) - self.played(), hidden

    def look(self, where: str, text: str, *, canonical: bool) -> None:
        unknown, kitty = self.secrets()
        text = RULE_ABOUT_A_CARD.sub(" ", text)
        leaked = named_cards(text, canonical=canonical) & unknown
        if leaked:
            spots = [text[max(m.start() - 80, 0):m.end() + 20] for m in SYMBOL_CARD.finditer(text)
                     if ("T" if m.group(1) == "10" else m.group(1)) + SYMBOLS[m.group(2)] in leaked]
            self.fail(where, f"names {sorted(leaked)} before they are played: {spots[:3]!r}")
        for line in re.split(r"\r?\n|<br\s*/?>|</p>|</tr>|</li>", text):
            if "kitty" in line.lower() and named_cards(line, canonical=canonical) & kitty:
                self.fail(where, f"a kitty line names its cards: {line.strip()[:300]!r}")

    def mails(self, mails: list[OutboundMessage]) -> None:
        for mail in mails:
            if mail.recipient != address(HUMAN):
                continue
            message: EmailMessage = parsed(mail)
            where = f"mail {mail.kind}"
            headers = "\n".join(f"{k}: {v}" for k, v in message.items())
            self.look(where + " headers", headers, canonical=True)
            for name in ("X-Hearts-Hand", "X-Hearts-Legal"):
                value = message.get(name)
                if value is not None and name == "X-Hearts-Hand" and not set(str(value).split()) <= set(self.human):
                    self.fail(where, f"{name} is not the human's hand: {value}")
            for part in message.walk():
                if part.get_content_maintype() == "text":
                    self.look(f"{where} {part.get_content_type()}", part.get_content(), canonical=False)
            if mail.kind == "history" and state_of(self.svc, self.game_id).kitty_taker is not None:
                self.seen_history_taker_line = self.seen_history_taker_line or bool(
                    re.search(r"\S took the kitty at trick \d+\.", prose_of(mail)))
            if mail.kind == "status":
                table = message.get_body(("plain",)).get_content().split("This hand", 1)[-1].split("\n\n")[0]
                rows = SCORE_ROW.findall(table)
                self.check_points("status: points this hand", [int(hand) for hand, _total in rows])

    def pages(self) -> None:
        path = urlparse(game_link(self.svc.settings, self.game_id, HUMAN)).path
        for url, where in ((path, "game page"), (path + "/replay", "replay")):
            response = self.client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            html = response.get_data(as_text=True)
            self.look(where, html, canonical=False)
            so_far = SO_FAR_ROW.search(re.sub(r"\s+", " ", html))
            if where == "game page" and so_far:
                self.check_points("game page: points this hand", [int(n) for n in re.findall(r">(-?\d+)</td>",
                                                                                           so_far.group(1))])
            if where == "game page" and state_of(self.svc, self.game_id).kitty_taker is not None:
                self.seen_taker_line = self.seen_taker_line or "took the kitty at trick" in html


@pytest.fixture
def db_url(pg_migrated_url: str) -> str:
    """This module's one database, PostgreSQL (see the module's docstring)."""
    return pg_migrated_url


@pytest.fixture
def client(svc: Services) -> Iterator[FlaskClient]:
    app: Flask = create_app(svc.settings, clock=svc.clock)
    yield app.test_client()
    runtime(app).dispose()


def lowest(legal: str) -> str:
    """The human's lowest legal card, as a player writes it (``10C``, not ``TC``)."""
    ranks = "23456789TJQKA"
    card = min(legal.split(), key=lambda c: ranks.index(c[0]))
    return card.replace("T", "10", 1) if card[0] == "T" else card


def play_the_hand(svc: Services, client: FlaskClient, *, seed: str, kitty_cards: tuple[str, ...],
                  **options: object) -> Watch:
    rules = Rules.make("standard", **options)
    human = lowest_cards(rules)
    deck = deck_for(rules, kitty_cards, human, seed=7)
    game_id, mails = mail_game(svc, people=1, seed=seed, deck=deck, **options)
    watch = Watch(svc, game_id, client, kitty_cards, human)
    box = Mailbox(list(mails))
    watch.mails(mails)
    turns = 0
    for _ in range(40):
        state = state_of(svc, game_id)
        if state.phase not in (PLAY, DISCARD) or state.hand_no > 1:
            break
        decision = [m for m in box.to(HUMAN, "your_turn") if parsed(m).get("X-Hearts-Legal")][-1]
        legal = str(parsed(decision)["X-Hearts-Legal"])
        new = box.add(answer(svc, decision, lowest(legal)))
        turns += 1
        after = state_of(svc, game_id)
        if after.phase not in (PLAY, DISCARD) or after.hand_no > 1:
            break  # the hand is over: its last mails may show the kitty
        watch.mails(new)
        if turns % 3 == 1 or state_of(svc, game_id).kitty_taker is not None and not watch.seen_taker_line:
            for command in ("status", "history"):
                replies = box.add(answer(svc, box.mails[-1] if box.mails[-1].recipient == address(HUMAN)
                                         else box.to(HUMAN)[-1], command))
                assert [m.kind for m in replies if m.recipient == address(HUMAN)], command
                watch.mails(replies)
            watch.pages()
    else:
        raise AssertionError("the hand never ended")
    state = state_of(svc, game_id)
    assert state.kitty_taker not in (None, HUMAN), state.kitty_taker
    return watch


def latest_to_human(svc: Services, game_id: int) -> OutboundMessage:
    with transaction(svc.session_factory) as session:
        row = session.scalars(select(OutboundMessage).where(OutboundMessage.game_id == game_id,
                                                            OutboundMessage.recipient == address(HUMAN))
                              .order_by(OutboundMessage.id.desc())).first()
        assert row is not None
        session.expunge(row)
        return row


def taker_page(svc: Services, client: FlaskClient, game_id: int, taker: int) -> str:
    path = urlparse(game_link(svc.settings, game_id, taker)).path
    return client.get(path).get_data(as_text=True)


KITTY = ("AH", "KH", "9D", "8C")  # two hearts: the taker's points would tell them


def test_a_kitty_game_the_human_never_learns_the_kitty(svc: Services, client: FlaskClient) -> None:
    watch = play_the_hand(svc, client, seed="hidden-kitty", kitty_cards=KITTY, kitty="penalty", pass_cycle=("hold",),
                          end_after_hands=1, tie="share")
    assert watch.problems == {}
    assert watch.seen_taker_line, "the page never said who took the kitty"
    assert watch.seen_history_taker_line, "the history reply never said who took the kitty"
    state = state_of(svc, watch.game_id)
    assert state.is_over
    # The checks can fail: the replay, once the game is over, shows the kitty to everyone.
    path = urlparse(game_link(svc.settings, watch.game_id, HUMAN)).path
    replay = client.get(path + "/replay").get_data(as_text=True)
    assert set(KITTY) <= named_cards(replay, canonical=False)
    # ... and so does the history reply, once the hand is scored.
    box = [m for m in answer(svc, latest_to_human(svc, watch.game_id), "history") if m.recipient == address(HUMAN)]
    said = re.search(r"The kitty held ([^;]+); (.+?) took it at trick (\d+)\.", prose_of(box[-1]))
    assert said and named_cards(said.group(1), canonical=False) == set(KITTY), prose_of(box[-1])
    assert int(said.group(3)) == state.kitty_trick


def test_a_kitty_exchange_game_the_discards_stay_face_down(svc: Services, client: FlaskClient) -> None:
    watch = play_the_hand(svc, client, seed="hidden-exchange", kitty_cards=KITTY, kitty="penalty", kitty_exchange=True,
                          pass_cycle=("hold",), end_after_hands=1, tie="share")
    assert watch.problems == {}
    assert watch.seen_taker_line, "the page never said who took the kitty"
    assert watch.seen_history_taker_line, "the history reply never said who took the kitty"
    state = state_of(svc, watch.game_id)
    assert state.is_over and len(state.discarded) == len(KITTY)


HIGH = tuple(f"{rank}{suit}" for suit in "CDHS" for rank in "QKA")  # twelve cards that win their tricks


def highest(legal: str) -> str:
    ranks = "23456789TJQKA"
    card = max(legal.split(), key=lambda c: ranks.index(c[0]))
    return card.replace("T", "10", 1) if card[0] == "T" else card


def test_three_players_first_trick_kitty_exchange_the_human_never_learns_the_kitty(
        svc: Services, client: FlaskClient) -> None:
    """RULES.md §6.2 with 3 players: 17 cards each and a one-card kitty, to the first trick's winner."""
    watch = play_the_hand(svc, client, seed="hidden-three", kitty_cards=("KH",), players=3, kitty="first_trick",
                          kitty_exchange=True, pass_cycle=("hold",), end_after_hands=1, tie="share")
    assert watch.problems == {}
    assert watch.seen_taker_line and watch.seen_history_taker_line
    assert state_of(svc, watch.game_id).kitty_trick == 1


@pytest.mark.parametrize("exchange", [False, True], ids=["kitty", "kitty_exchange"])
def test_the_taker_is_shown_the_kitty_in_status_history_and_on_the_page(svc: Services, client: FlaskClient,
                                                                exchange: bool) -> None:
    """The taker is shown the kitty (RULES.md §6.2: "it is shown to them in their next mail"): their
    ``status`` and ``history`` replies and their game page name its cards, and with ``kitty_exchange``
    what they discarded."""
    kitty = ("2D", "3D", "4D", "5D")
    options: dict[str, object] = dict(kitty="penalty", kitty_exchange=exchange, pass_cycle=("hold",),
                                      end_after_hands=1, tie="share")
    deck = deck_for(Rules.make("standard", **options), kitty, HIGH, seed=3)
    game_id, mails = mail_game(svc, people=1, seed="human-takes", deck=deck, **options)
    box = Mailbox(list(mails))
    for _ in range(40):
        state = state_of(svc, game_id)
        if state.kitty_taker is not None and state.phase == PLAY:
            break
        decision = [m for m in box.to(HUMAN, "your_turn") if parsed(m).get("X-Hearts-Legal")][-1]
        legal = str(parsed(decision)["X-Hearts-Legal"])
        if state.phase == DISCARD:
            box.add(answer(svc, decision, "discard " + " ".join(sorted(legal.split())[:4])))
        else:
            box.add(answer(svc, decision, highest(legal)))
    state = state_of(svc, game_id)
    assert state.kitty_taker == HUMAN and state.phase == PLAY, (state.kitty_taker, state.phase)
    for command in ("status", "history"):
        reply = [m for m in box.add(answer(svc, box.to(HUMAN)[-1], command)) if m.recipient == address(HUMAN)][-1]
        text = prose_of(reply)
        said = re.search(r"You took the kitty at trick \d+: ([^.]+)\.", text)
        assert said, (command, text)
        assert named_cards(said.group(1), canonical=False) == set(kitty), (command, said.group(0))
    html = taker_page(svc, client, game_id, HUMAN)
    assert "You took the kitty at trick" in html and set(kitty) <= named_cards(html, canonical=False)
    if exchange:
        assert len(state.discarded) == 4 and set(state.discarded) <= named_cards(html, canonical=False)
