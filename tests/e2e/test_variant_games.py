"""Every variant of this release played by mail on the production pipeline (RULES.md §6.1-§6.7).

One game per configuration, all of them at the same time in one pipeline: the SMTP front
(``pbem smtp``), a real Celery worker on Redis, PostgreSQL, and an SMTP sink as the relay where
the players read their mail. Each game has one scripted person (their own address) and computer
players, and ends after two hands (``end_after_hands: 2``; one more per tie for the lead, RULES.md
§2 rule 9; a moon that wins at once, §6.7, ends it sooner). The person asks for the game by mail
to ``new@`` (the rule set and options as ``name: value`` lines, ``bots: N``), accepts the
invitation to their seat, and then answers every decision mail from its headers alone
(``X-Hearts-Decision``: pass, play, moon, discard, call_pass, charge; ``X-Hearts-Legal``; the
number of cards a pass or a discard names is the game's rules'; ``X-Hearts-Decline``, the reply
that declines a pass; ``X-Hearts-Charge-Limit``, the most cards a charge names), ignoring the news.

Checked for each game: it finished (status, phase ``over``, the number of hands); the move log is
numbered without a gap or a duplicate and replays to the snapshot (``pbem game check``); every
reply the person sent became exactly the move it named, once; every decision mail they got
carried the headers its decision needs, and no other mail carried them; each decision had one
mail; no mail is left unsent. The passing variants (§6.3) are read back from the move log, replayed
move by move: the person's decline left their hand as dealt, with nothing received; the mix hand's
passed cards were mixed and dealt back; each hand's dealer called before its deal, and the
person's call is the pass of their hand. So are Turbo's charges (§6.4): every seat that held a
chargeable card decided once a hand, the others never, each charge within ``charge_limit`` and of
chargeable cards it held, the person's the cards their reply named; and the tricks (§6.5): a trick
has 2n cards exactly when a nine of the led suit is among its first n and it did not start with
one card in every hand (with ``booster_nines``; never without).

Four decisions need a deal that brings them to the person: the moon choice (``rules: classic``,
RULES.md §3 ``moon=choice``), a team slam's moon choice (§6.1), the kitty taker's discard
(``kitty_exchange``, §6.2) and a charge under ``charge_limit: 1`` (§6.4). Those games are made on
the command line with the first deal given (``pbem game new --deck``; a mail cannot give one).
For the first three the person holds every club and passing is off (``pass_count: 0``), so they
lead the 2 of clubs and win every trick of the first hand; for the charge they are dealt all four
chargeable cards (AH, QS, JD, TC), of which a pass of three keeps at least one.

The configurations are those of the issue's list (§6.1 to §6.7):
the presets ``partnership``, ``partnership-individual``, ``kitty``, ``turbo``, ``turbo-nines``,
``dnf`` and ``cancellation``; ``kitty: first_trick`` and ``first_penalty`` with 3 and with 5 players, with and
without ``kitty_exchange``; ``pass_to_partner``; ``partner_moon: charged``; ``pass_optional`` (the
person declines once); ``pass_cycle: left mix`` (hand 2 a mix); ``dealer_calls_pass`` (the person
deals hand 2 and calls a split pass); ``turbo`` with ``charge_limit: 1``; Cancellation (§6.6,
preset ``cancellation``, two decks) by mail with 6 and with 10 players, and at the preset's 8 from a
first deal giving the person three pairs (``pbem game new --deck``); and the standard game. The
file covers the seven presets of §6 (checked below).

With two decks (§6.6) the person passes both copies of a card when they hold a pair, and every
decision mail's hand, as the text shows it (``Q ×2``), is the hand its ``X-Hearts-Hand`` names, copy
for copy. Read back from the replayed log: a trick whose led-suit cards all cancelled stays on the
table and its leader leads again; the next trick won takes its cards (``carried``), a last trick
with no winner goes to the previous trick's winner; no hand ends with cards on the table; each
hand's scores add up to M = 52 without a moon.
"""


from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import make_msgid

import pytest
from sqlalchemy import select

from pbem.db.models import (
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    Move,
    OutboundMessage,
    OutboundStatus,
    Player,
    Seat,
)
from pbem.engine import (
    HandScored,
    Rules,
    TrickCancelled,
    TrickWon,
    apply,
    chargeable_cards,
    deck_in_play,
    move_from_dict,
    new_game,
)
from pbem.services.gamestore import snapshot_agrees
from tests.e2e.pipeline import DECISIONS, DOMAIN, PHASE_OF, Asked, Pipeline, Table, redis_db
from tests.harness.waiting import WaitTimeout, wait_for

NEW = f"new@{DOMAIN}"
HANDS = 2
REDIS_DB = 8  # this module's own database on the shared test Redis
#: Generous: every game of the module together, on a loaded 2-core machine (within the
#: module's pytest timeout below, which its first test's setup, all the games, counts against).
TIMEOUT = 480

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.postgres, pytest.mark.timeout(TIMEOUT + 240)]


@dataclass(frozen=True)
class Config:
    """One game: its rule set and options as a person writes them to ``new@``."""

    name: str
    preset: str = "standard"
    options: tuple[tuple[str, str], ...] = ()
    players: int = 4
    #: Started on the command line (``pbem game new``) with this first deal, instead of by mail.
    deck: tuple[str, ...] = ()
    #: Decisions the person must be asked (the deal makes sure of it).
    must_ask: tuple[str, ...] = ()
    #: Pass mails the person declines (``no pass``, pass_optional: RULES.md §6.3) before passing.
    declines: int = 0

    @property
    def person(self) -> str:
        return f"{self.name}@players.test"

    @property
    def rules(self) -> Rules:
        """The rules the game should have (what the mail asks for, read as the engine reads it)."""
        values = {"yes": True, "no": False}
        options: dict[str, object] = {k: values.get(v, int(v) if v.isdigit() else v) for k, v in self.options}
        if "pass_cycle" in options:  # a list, as the mail writes it: "left mix"
            options["pass_cycle"] = tuple(str(options["pass_cycle"]).split())
        if self.players != 4:
            options["players"] = self.players
        return Rules.make(self.preset, end_after_hands=HANDS, **options)

    def mail(self) -> bytes:
        lines = ["new game", f"rules: {self.preset}", *(f"{k}: {v}" for k, v in self.options)]
        if self.players != 4:
            lines.append(f"players: {self.players}")
        lines += [f"bots: {self.players - 1}", f"end_after_hands: {HANDS}"]
        return (f"From: {self.name.title()} <{self.person}>\r\nTo: {NEW}\r\nSubject: {self.name}\r\n"
                f"Message-ID: {make_msgid(domain='players.test')}\r\nMIME-Version: 1.0\r\n"
                "Content-Type: text/plain; charset=utf-8\r\n\r\n" + "\r\n".join(lines) + "\r\n").encode()

    def cli(self) -> list[str]:
        args = ["game", "new", f"--player={self.person}", f"--bots={self.players - 1}", f"--preset={self.preset}",
                f"--title={self.name}", f"--option=end_after_hands={HANDS}"]
        args += [f"--option={k}={v}" for k, v in self.options]
        if self.players != 4:
            args.append(f"--option=players={self.players}")
        if self.deck:
            args.append("--deck=" + " ".join(self.deck))
        return args


def every_club_to_seat_0(rules: Rules) -> tuple[str, ...]:
    """A first deal giving seat 0 every club and, if its hand holds more, the highest diamonds: a
    kitty first (the deck's first cards, RULES.md §6.2: low diamonds), then one card at a time from
    the dealer's left, seat 0. Whatever seat 0 leads, nobody can beat it: it wins every trick."""
    deck = deck_in_play(rules)
    size = (len(deck) - rules.table.kitty_size) // rules.players
    clubs = [c for c in deck if c.endswith("C")]
    diamonds = [c for c in deck if c.endswith("D")]
    first = clubs + diamonds[::-1][:size - len(clubs)]
    kitty = [c for c in deck if c not in first][:rules.table.kitty_size]
    rest = iter(c for c in deck if c not in first and c not in kitty)
    return (*kitty, *(card for mine in first for card in (mine, *(next(rest) for _ in range(rules.players - 1)))))


def every_charge_to_seat_0(rules: Rules) -> tuple[str, ...]:
    """A first deal giving seat 0 the four chargeable cards (RULES.md §6.4) and the lowest others,
    one card at a time from the dealer's left, seat 0: a pass of three keeps at least one of them."""
    deck = deck_in_play(rules)
    charged = ["AH", "QS", "JD", "TC"]
    others = [c for c in deck if c not in charged]
    size = len(deck) // rules.players
    first = charged + others[:size - len(charged)]
    rest = iter(others[size - len(charged):])
    return tuple(card for mine in first for card in (mine, *(next(rest) for _ in range(rules.players - 1))))


def holding_the_charges(config: Config) -> Config:
    """``config`` started on the command line from a first deal where the person holds AH QS JD TC."""
    return dataclasses.replace(config, deck=every_charge_to_seat_0(config.rules))


def pairs_to_seat_0(rules: Rules) -> tuple[str, ...]:
    """A first deal of two decks (RULES.md §6.6) giving seat 0 both copies of Q♠, A♥ and K♦ and low
    clubs, one card at a time from the dealer's left, seat 0, after the kitty (the deck's first
    cards): a pass of three keeps at least one pair."""
    deck = list(deck_in_play(rules))
    size = (len(deck) - rules.table.kitty_size) // rules.players
    mine = ["QS", "QS", "AH", "AH", "KD", "KD"]
    mine += [c for c in dict.fromkeys(deck) if c.endswith("C")][:size - len(mine)]
    for card in mine:
        deck.remove(card)
    kitty, rest = deck[:rules.table.kitty_size], iter(deck[rules.table.kitty_size:])
    return (*kitty, *(card for first in mine for card in (first, *(next(rest) for _ in range(rules.players - 1)))))


def holding_pairs(config: Config) -> Config:
    """``config`` started on the command line from a first deal where the person holds three pairs."""
    return dataclasses.replace(config, deck=pairs_to_seat_0(config.rules))


def rigged(config: Config) -> Config:
    """``config`` started on the command line from a first deal where the person holds every club,
    with passing off: they lead the 2 of clubs and win every trick of the first hand."""
    options = (*config.options, ("pass_count", "0"))
    shape = dataclasses.replace(config, options=options)
    return dataclasses.replace(shape, deck=every_club_to_seat_0(shape.rules))


CONFIGS = [
    Config("standard"),
    # The moon choice (RULES.md §3 moon=choice): the person shoots the moon in hand 1 and chooses.
    rigged(Config("moon-choice", "classic", must_ask=("moon",))),
    # 6.1 partnership.
    Config("partnership", "partnership"),
    Config("partnership-individual", "partnership-individual"),
    Config("pass-to-partner", options=(("partnership", "team"), ("pass_to_partner", "yes"))),
    Config("partner-moon-charged", options=(("partnership", "individual"), ("partner_moon", "charged"))),
    # A team slam under moon=choice: the person takes every trick, their team chooses through them.
    rigged(Config("team-moon-choice", "partnership", (("moon", "choice"),), must_ask=("moon",))),
    # 6.2 kitty.
    Config("kitty", "kitty"),
    *(Config(f"kitty-{kind.replace('_', '-')}-{n}{'-exchange' if exchange else ''}",
             options=(("kitty", kind),) + ((("kitty_exchange", "yes"),) if exchange else ()), players=n)
      for kind in ("first_trick", "first_penalty") for n in (3, 5) for exchange in (False, True)),
    # The taker's discard: the person wins the trick that takes the kitty (the first with a penalty card).
    rigged(Config("kitty-discard", options=(("kitty", "first_penalty"), ("kitty_exchange", "yes")), players=3,
                  must_ask=("discard",))),
    # 6.3 passing variants. pass_optional: the person declines hand 1's pass (``no pass``) and
    # passes in hand 2.
    Config("pass-optional", options=(("pass_optional", "yes"),), must_ask=("pass",), declines=1),
    # A mix hand (hand 2): everyone passes, the passed cards are mixed and dealt back.
    Config("mix", options=(("pass_cycle", "left mix"),), must_ask=("pass",)),
    # dealer_calls_pass: hand 1's dealer is the last seat (a bot), hand 2's the person (seat 0),
    # who calls a split pass.
    Config("dealer-calls-pass", options=(("dealer_calls_pass", "yes"),), must_ask=("call_pass",)),
    # 6.4 Turbo, 6.5 Booster Nines, 6.7 Dirty Nasty Filthy (the person calls hand 2's pass: see below).
    Config("turbo", "turbo"),
    Config("turbo-nines", "turbo-nines"),
    Config("dnf", "dnf"),
    # charge_limit: 1 (the seeds' reading, RULES.md §6.8): the person holds all four chargeable cards.
    holding_the_charges(Config("charge-limit-1", "turbo", (("charge_limit", "1"),), must_ask=("charge",))),
    # 6.6 Cancellation: two decks, by mail with 6 and 10 players (17 cards and a kitty of 2, 10 and 4), and
    # the preset's 8 players (13 cards, no kitty) from a deal that gives the person three pairs.
    Config("cancellation-6", "cancellation", players=6),
    Config("cancellation-10", "cancellation", players=10),
    holding_pairs(Config("cancellation", "cancellation", players=8)),
]
#: RULES.md §6: the presets of the variants, each played by a game above.
PRESETS = ("partnership", "partnership-individual", "kitty", "turbo", "turbo-nines", "cancellation", "dnf")


@dataclass
class Played:
    """What the module's run left: the games, their logs, the mails, the scripted people."""

    pipeline: Pipeline
    table: Table
    elapsed: float = 0.0
    timeout: str = ""  # what the wait for the end ran out on, if it did


def games_of(pipeline: Pipeline) -> dict[str, Game]:
    """Each person's game (the one where they hold a seat), detached from its session."""
    with pipeline.session_factory() as session:
        rows = session.execute(select(Player.address, Game).join(Seat, Seat.player_id == Player.id)
                               .join(Game, Game.id == Seat.game_id)).all()
        session.expunge_all()
    return {address: game for address, game in rows}


@pytest.fixture(scope="module")
def played(postgres_server, pg_template, redis_url, smtp_sink, tmp_path_factory) -> Iterator[Played]:
    """Every configuration's game, played at the same time to its end (or until nothing moves)."""
    url = postgres_server.create_database(template=pg_template)
    smtp_sink.clear()
    pipeline = Pipeline(url, redis_db(redis_url, REDIS_DB), smtp_sink, tmp_path_factory.mktemp("variants"))
    try:
        with pipeline:
            began = time.monotonic()
            table = Table(pipeline, [c.person for c in CONFIGS], accept_invitations=True,
                          declines={c.person: c.declines for c in CONFIGS if c.declines})
            result = Played(pipeline, table)
            by_cli = [c for c in CONFIGS if c.deck]
            for config in CONFIGS:
                if config not in by_cli:
                    pipeline.send(config.person, NEW, config.mail())
            # The command-line games are made while the others play: their `pbem game new` commands
            # one after the other in one process of their own.
            commands = ThreadPoolExecutor(max_workers=1)
            made = [commands.submit(pipeline.cli_each, [c.cli() for c in by_cli])]

            quiet_since = [time.monotonic()]

            def over() -> bool:
                """Every person told their game is over, or nothing left to happen: every mail handled
                and delivered, none unanswered (a game that stopped fails its own test below). The
                database is asked only after a second without new mail."""
                if table.step():
                    quiet_since[0] = time.monotonic()
                    return all(table.kinds_of[c.person]["game_summary"] for c in CONFIGS)
                if time.monotonic() - quiet_since[0] < 1 or not all(m.done() for m in made):
                    return False
                quiet_since[0] = time.monotonic()
                return pipeline.idle() and not table.step()

            try:
                wait_for(over, timeout=TIMEOUT, interval=0.05, message="every game to end")
                wait_for(pipeline.idle, timeout=60, message="the last mails to be delivered")
            except WaitTimeout as timeout:  # each game's own test says what it reached
                result.timeout = str(timeout)
            table.step()
            result.elapsed = time.monotonic() - began
            for future in made:
                future.result()  # a game the command line refused fails here, with its error
            commands.shutdown()
            yield result
    finally:
        postgres_server.drop_database(url.rsplit("/", 1)[1])


def test_the_file_plays_every_preset_of_the_variants() -> None:
    """RULES.md §6: each of the seven presets has its game here; Cancellation with 6 and with 10 players."""
    assert set(PRESETS) <= {c.preset for c in CONFIGS}, set(PRESETS) - {c.preset for c in CONFIGS}
    assert {c.players for c in CONFIGS if c.preset == "cancellation"} >= {6, 10}


def test_the_games_ran_concurrently_in_one_pipeline(played: Played, capsys):
    """Every game was made (by mail unless it needed a given deal) and came to its end in time, and
    every mail the people sent was handled."""
    games = games_of(played.pipeline)
    assert sorted(games) == sorted(c.person for c in CONFIGS)
    assert not played.timeout
    assert set(played.pipeline.inbound_statuses()) == {"done"}
    with capsys.disabled():
        print(f"\n[e2e] {len(CONFIGS)} variant games by mail at once: {played.table.answered} replies, "
              f"{len(played.pipeline.sink.messages)} mails out, {played.elapsed:.1f} s")


def expected_legal(asked: Asked) -> bool:
    if asked.move == "call":  # the calls (RULES.md §6.3): "3 left", "2 left 1 right", ..., "mix"
        return "mix" in asked.legal and len(set(asked.legal)) == len(asked.legal) > 1
    if asked.decision in ("pass", "discard"):
        return asked.legal == asked.hand and len(asked.legal) > 0
    if asked.decision == "moon":
        return set(asked.legal) >= {"old", "new"}
    if asked.decision == "charge":  # the chargeable cards held, then "none" (RULES.md §6.4)
        cards = asked.legal[:-1]
        return asked.legal[-1:] == ("none",) and 0 < len(cards) and set(cards) <= set(asked.hand) \
            and set(cards) <= {"AH", "QS", "JD", "TC"} and asked.limit is not None
    return 0 < len(asked.legal) and set(asked.legal) <= set(asked.hand)


def reply_cards(asked: Asked) -> list[str]:
    return [w for w in asked.reply.split() if w not in ("discard", "charge", "none")]


def reply_call(asked: Asked, pass_count: int) -> list[list]:
    """A call's reply as the move log writes it: ``2 left 1 right`` -> ``[["left", 2], ["right", 1]]``."""
    words = asked.reply.split()
    if words == ["mix"]:
        return [["mix", pass_count]]
    return [[words[i + 1], int(words[i])] for i in range(0, len(words), 2)]


#: The kinds of move a person's reply makes (a play may also be made for them when it is the only card).
REPLIED = ("pass", "decline", "moon", "discard", "call", "charge")


@dataclass
class Replayed:
    """A game's move log replayed move by move: ``states[i + 1]`` is the state after ``moves[i]``,
    ``events[i]`` what that move did."""

    moves: list[Move]
    states: list = field(default_factory=list)
    events: list[list] = field(default_factory=list)

    @classmethod
    def of(cls, rules: Rules, moves: list[Move]) -> "Replayed":
        replayed = cls(moves, [new_game(rules)])
        for move in moves:
            state, events = apply(replayed.states[-1], move_from_dict(move.payload))
            replayed.states.append(state)
            replayed.events.append(list(events))
        return replayed


def passing_checks(expected: Rules, seat: int, config: Config, log: Replayed, asked: list[Asked]) -> None:
    """RULES.md §6.3 read back from the move log, replayed move by move: a decliner's hand is left
    as dealt and receives nothing; a mix hand's passed cards are mixed and dealt back; the
    dealer's call is the hand's pass."""
    moves, states = log.moves, log.states
    declines = [i for i, m in enumerate(moves) if m.kind == "decline" and m.seat == seat]
    assert len(declines) == config.declines, [m.payload for m in moves if m.kind in ("decline", "pass")]
    for i in declines:
        deal = max(j for j in range(i) if moves[j].kind == "deal")
        play = next(j for j in range(i, len(moves)) if moves[j].kind == "play")
        assert states[play].phase == "play"
        assert states[play].hand(seat) == states[deal + 1].hand(seat), "a decliner's hand changed"
        assert states[play].received[seat] == 0, "a decliner received cards"
    if expected.pass_optional:  # every pass mail said how to decline (no mix hand in this game)
        assert all(a.decline for a in asked if a.decision == "pass"), asked
    else:
        assert not [a for a in asked if a.decline is not None]
    mixes = [i for i, m in enumerate(moves) if m.kind == "mix"]
    if "mix" in expected.pass_cycle:
        hands_mixed = [states[i + 1].hand_no for i in mixes]
        mix_hands = [h for h in range(1, states[-1].hand_no + 1)
                     if expected.pass_cycle[(h - 1) % len(expected.pass_cycle)] == "mix"]
        assert hands_mixed == mix_hands, (hands_mixed, mix_hands)
        for i in mixes:
            assert states[i].phase == "mix" and states[i].pass_direction == "mix"
            assert states[i + 1].phase == "play" and len(states[i + 1].hand(seat)) == len(states[i].hand(seat)) \
                + expected.pass_count, "the mixed cards were not dealt back"
        # The person was asked to pass on the mix hand too (every seat passes, none declines).
        assert sum(a.decision == "pass" for a in asked) == states[-1].hand_no
    elif not expected.dealer_calls_pass:
        assert not mixes
    calls = [i for i, m in enumerate(moves) if m.kind == "call"]
    if expected.dealer_calls_pass:
        # Before each hand's deal, that hand's dealer called: the last seat first, then clockwise.
        deals = [i for i, m in enumerate(moves) if m.kind == "deal"]
        assert [i + 1 for i in calls] == deals, [m.payload for m in moves if m.kind in ("call", "deal")]
        assert [moves[i].seat for i in calls] == [(h - 1 - 1) % expected.players
                                                  for h in range(1, len(calls) + 1)]
        for a, i in zip([a for a in asked if a.move == "call"],
                        [i for i in calls if moves[i].seat == seat], strict=True):
            dealt = states[i + 2]  # after the call and the deal: the hand passes as called
            assert [list(p) for p in dealt.pass_call] == reply_call(a, expected.pass_count)
            direction = a.reply.split()[1] if len(a.reply.split()) == 2 else "split"
            assert dealt.pass_direction == (direction if a.reply != "mix" else "mix"), (a.reply, dealt.pass_direction)
    else:
        assert not calls


def charge_checks(expected: Rules, seat: int, log: Replayed, asked: list[Asked]) -> None:
    """RULES.md §6.4 read back from the replayed log: each hand, every seat that held a chargeable
    card when the charges began decided once and no other seat did; each charge names chargeable
    cards its seat held, at most ``charge_limit``; the person was asked exactly when they could
    charge, with the game's limit."""
    moves, states = log.moves, log.states
    charges = [i for i, m in enumerate(moves) if m.kind == "charge"]
    if not expected.turbo:
        assert not charges and not [a for a in asked if a.decision == "charge"]
        return
    chargeable = set(chargeable_cards(expected))
    assert chargeable == {"AH", "QS", "JD", "TC"}, chargeable
    # The state in which each hand's charges began (the first in phase charge after its deal).
    began = [i for i in range(1, len(states)) if states[i].phase == "charge" and states[i - 1].phase != "charge"]
    hands_charged = {states[i].hand_no for i in began}
    for i in charges:
        move, before = moves[i], states[i]
        cards = move.payload["cards"]
        assert before.phase == "charge" and move.seat in before.seats_to_charge(), move.payload
        assert len(cards) <= expected.charge_limit, (expected.charge_limit, move.payload)
        assert set(cards) <= set(before.charge_choices(move.seat)) <= chargeable, (move.payload, before.hand(move.seat))
    for start in began:
        state = states[start]
        holders = [s for s in range(expected.players) if chargeable & set(state.hand(s))]
        assert list(state.seats_to_charge()) == holders, (state.hand_no, holders, state.seats_to_charge())
        end = next(j for j in range(start, len(states)) if states[j].phase != "charge")
        decided = sorted(moves[j].seat for j in charges if start <= j < end)
        assert decided == holders, (state.hand_no, decided, holders)
        revealed = states[end]
        assert revealed.charges_revealed and set(revealed.charged_cards) == {
            c for s in range(expected.players) for c in revealed.charges[s]}, revealed.charges
    # Every hand that was played had its charges (with every card dealt, someone holds each of the four).
    assert {states[i + 1].hand_no for i, m in enumerate(moves) if m.kind == "play"} <= hands_charged
    mine = [a for a in asked if a.decision == "charge"]
    assert len(mine) == sum(seat in states[i].seats_to_charge() for i in began)
    assert all(a.limit == expected.charge_limit for a in mine), mine


def trick_checks(expected: Rules, log: Replayed) -> int:
    """RULES.md §6.5 read back from the replayed log: a trick has 2n cards, and is won as boosted,
    exactly when a nine of the led suit is among its first n cards and it did not start with one
    card in every hand (never without ``booster_nines``); the returned count is of boosted tricks."""
    n, boosted, started = expected.players, 0, None
    for i, move in enumerate(log.moves):
        before = log.states[i]
        if move.kind == "play" and not before.trick_cards():
            started = [len(before.hand(s)) for s in range(n)]
        for event in log.events[i]:
            if not isinstance(event, TrickWon):
                continue
            suit = event.cards[0][-1]
            nine = f"9{suit}" in event.cards[:n]
            boosts = expected.booster_nines and nine and started != [1] * n
            assert event.boosted == boosts and len(event.cards) == (2 * n if boosts else n), (
                event, started, expected.booster_nines)
            boosted += boosts
    return boosted


def score_checks(expected: Rules, log: Replayed) -> None:
    """Each hand's scores, from the replayed log: without a moon, the penalty values taken (the
    charged values, the kitty's too: RULES.md §6.2, §6.4) and the bonus card's add up to M plus
    the bonus before Turbo's 10♣ multiplier, which is on its taker alone: ×4 if 10♣ was charged,
    else ×2 (§6.4). A team's hand score is kept for the team only (§6.8): its seats are not summed."""
    for i, events in enumerate(log.events):
        for event in events:
            if not isinstance(event, HandScored):
                continue
            before = log.states[i]
            charged = set(before.charged_cards) if expected.turbo else set()
            multiplier = event.multiplier or (1,) * expected.players
            if expected.turbo:
                assert sorted(multiplier) == [1] * (expected.players - 1) + [4 if "TC" in charged else 2], (
                    event, charged)
            else:
                assert not event.multiplier, event
            if event.moon is None and expected.partnership != "team":
                base = [points // factor for points, factor in zip(event.points, multiplier)]
                assert [b * f for b, f in zip(base, multiplier)] == list(event.points), event
                bonus = expected.table.bonus * (2 if expected.bonus_card in charged else 1)
                assert sum(base) == before.moon_total + bonus, (event, before.moon_total, charged)


def cancel_checks(expected: Rules, log: Replayed) -> int:
    """RULES.md §6.6 read back from the replayed log: a trick whose led-suit cards all cancelled
    (``TrickCancelled``) stays on the table and its leader leads the next; the next trick won takes
    those cards (``carried``, in play order, several cancelled tricks in a row accumulating); a last
    trick with no winner (``cancelled``) goes to the winner of the trick before it (its own leader if
    none had one); no hand ends with cards on the table. One deck: nothing is ever cancelled. The
    returned count is of cancelled tricks."""
    on_table: list[str] = []
    last_winner: int | None = None
    cancelled = 0
    for i, events in enumerate(log.events):
        for event in events:
            if isinstance(event, TrickCancelled):
                assert expected.decks == 2, event
                on_table += event.cards
                cancelled += 1
                after = log.states[i + 1]
                assert after.to_move == event.leader and tuple(after.carried) == tuple(on_table), (event, after.carried)
                nxt = log.moves[i + 1] if i + 1 < len(log.moves) else None
                assert nxt is None or nxt.kind != "play" or nxt.seat == event.leader, (event, nxt.payload)
            elif isinstance(event, TrickWon):
                assert tuple(event.carried) == tuple(on_table), (event, on_table)
                if event.cancelled:
                    assert expected.decks == 2 and any(isinstance(e, HandScored) for e in events), event  # the last
                    assert event.winner == (event.leader if last_winner is None else last_winner), (event, last_winner)
                else:
                    last_winner = event.winner
                on_table = []
            elif isinstance(event, HandScored):
                assert not on_table, ("a hand ended with cards on the table", on_table)
                last_winner = None
    return cancelled


RANKS = {"10": "T", **{r: r for r in "23456789JQKA"}}
SUITS = {"♠": "S", "♥": "H", "♣": "C", "♦": "D"}


def shown_hand(text: str) -> Counter[str]:
    """The cards a mail's "Your hand" shows, a card shown ``Q ×2`` (two decks, RULES.md §6.6) twice."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Your hand"))
    shown: Counter[str] = Counter()
    for line in lines[start + 1:start + 5]:
        suit, *words = line.split()
        assert suit in SUITS, (line, text)
        for word in words:
            if word == "×2":
                shown[last] += 1
            elif word != "—":
                last = RANKS[word] + SUITS[suit]
                shown[last] += 1
    return shown


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_a_game_by_mail_with_bots_to_its_end(played: Played, config: Config, capsys):
    person, table, pipeline = config.person, played.table, played.pipeline
    game = games_of(pipeline).get(person)
    assert game is not None, f"no game for {config.name}: mails to them {dict(table.kinds_of[person])}"
    kinds = table.kinds_of[person]
    assert kinds["move_rejected"] == 0 and kinds["request_rejected"] == 0, (
        dict(kinds), [line for line in table.log if line.startswith(person)])
    expected = config.rules
    with pipeline.session_factory() as session:
        game = session.get(Game, game.id)
        assert Rules.from_dict(game.rules) == expected
        # It finished, after the hands asked for (and one more for each tie for the lead).
        assert game.status == GameStatus.FINISHED, (played.timeout, game.status, game.snapshot["phase"],
                                                    game.snapshot["hand_no"], dict(kinds), table.log[-3:])
        snapshot = game.snapshot
        assert snapshot["phase"] == "over" and len(snapshot["history"]) == snapshot["hand_no"]
        # A moon under moon=win (RULES.md §6.7) ends the game at once, its shooter (or team) the winner.
        wins = [i for i, hand in enumerate(snapshot["history"]) if (hand["moon"] or {}).get("scoring") == "win"]
        if wins:
            assert expected.moon == "win" and wins == [snapshot["hand_no"] - 1], snapshot["history"]
            shooter = snapshot["history"][-1]["moon"]["seat"]
            team = next((t for t in expected.teams if shooter in t), (shooter,))
            assert tuple(snapshot["winners"]) == tuple(team), (snapshot["winners"], shooter)
        else:  # the hands asked for, or a total at the target
            assert snapshot["hand_no"] >= HANDS or max(snapshot["totals"]) >= expected.target, snapshot["history"]
        for after in snapshot["history"][HANDS - 1:-1]:  # a team's standing: its partners' sum (§6.1)
            standing = [sum(after["totals"][s] for s in team) for team in expected.teams] or after["totals"]
            best = (min if expected.lowest_wins else max)(standing)
            assert standing.count(best) > 1, "played on without a tie"
        for hand in snapshot["history"]:
            if expected.partnership == "team":  # the seat's total is its team's
                assert all(hand["totals"][a] == hand["totals"][b] for a, b in expected.teams), hand
        if expected.teams:  # both seats of the winning team (§6.1)
            assert tuple(snapshot["winners"]) in expected.teams, snapshot["winners"]
        assert kinds["game_summary"] == 1
        # Every move applied once: the log is numbered 1..n without gaps and replays to the snapshot.
        moves = session.scalars(select(Move).where(Move.game_id == game.id).order_by(Move.seq)).all()
        assert [m.seq for m in moves] == list(range(1, game.next_seq))
        assert snapshot_agrees(session, game)
        # Each hand's passing, as the log replays it: pass_to_partner passes across every hand.
        log = Replayed.of(expected, list(moves))
        directions = [log.states[i + 1].pass_direction for i, m in enumerate(moves) if m.kind == "deal"]
        assert len(directions) == snapshot["hand_no"]
        if expected.pass_to_partner:
            assert set(directions) == {"across"}, directions
        seat = next(s.seat for s in game.seats if s.player is not None and s.player.address == person)
        # Each reply of the person: handled, and the first move of their seat it made is what it said.
        asked = [a for a in table.asked if a.player == person]
        assert asked, "the person was never asked anything"
        inbound = {row.message_key.strip("<>"): row for row in session.scalars(
            select(InboundMessage).where(InboundMessage.mail_from == person))}
        for a in asked:
            row = inbound[a.reply_id.strip("<>")]
            assert row.status == InboundStatus.DONE, (a, row.status, row.outcome)
            made = [m for m in moves if m.inbound_id == row.id and m.seat == seat]
            assert made and made[0].kind == a.move, (a, [m.payload for m in made])
            payload = made[0].payload
            if a.move == "play":
                assert payload["card"] == a.reply
            elif a.move == "moon":
                assert payload["choice"] == a.reply
            elif a.move == "call":
                assert sorted(payload["call"]) == sorted(reply_call(a, expected.pass_count)), (a, payload)
            elif a.move == "decline":
                assert payload == {"type": "decline", "seat": seat}
            else:
                assert sorted(payload["cards"]) == sorted(reply_cards(a))
        # The person's moves came from their replies only (and the cards the server played for
        # them when one was legal): as many decisions of theirs as replies.
        decided = [m for m in moves if m.seat == seat and m.kind in REPLIED]
        assert len(decided) == sum(a.move != "play" for a in asked)
        passing_checks(expected, seat, config, log, asked)
        charge_checks(expected, seat, log, asked)
        trick_checks(expected, log)
        score_checks(expected, log)
        cancelled = cancel_checks(expected, log)
        unsent = session.scalars(select(OutboundMessage).where(
            (OutboundMessage.game_id == game.id) | (OutboundMessage.recipient == person),
            OutboundMessage.status != OutboundStatus.SENT)).all()
        assert not unsent
    # Every decision mail carried the headers of its decision; no news mail carried them; one
    # mail per decision (each its own signed reply address).
    for a in asked:
        assert a.decision in DECISIONS and a.phase == PHASE_OF.get(a.decision, a.decision), a
        assert a.game == str(game.id) and a.seat == seat, a
        assert expected_legal(a), a
    assert not [s for s in table.stray_headers if s[0] == person]
    if expected.decks == 2:  # RULES.md §6.6: the hand as shown, Q ×2 for a pair, is the hand held
        for a in asked:
            assert shown_hand(a.text) == Counter(a.hand), (a.hand, a.text)
        pairs = [a for a in asked if a.decision == "pass" and len(set(reply_cards(a))) < len(reply_cards(a))]
        if config.deck:  # dealt three pairs: hand 1's pass named both copies of one, and a mail showed ×2
            assert pairs and any(max(Counter(a.hand).values()) == 2 for a in asked if a.decision == "play"), asked
        with capsys.disabled():
            print(f"\n[e2e] {config.name}: {cancelled} cancelled tricks, {len(pairs)} passes of a pair by mail, "
                  f"{sum('×2' in a.text for a in asked)} of {len(asked)} decision mails showing ×2")
    assert len({a.reply_to for a in asked}) == len(asked)
    # The person deals hand 2: with dealer_calls_pass (dnf too) they call it, if the game got there.
    must_ask = config.must_ask + (("call_pass",) if expected.dealer_calls_pass and snapshot["hand_no"] >= 2 else ())
    for decision in must_ask:
        assert decision in [a.decision for a in asked], (f"never asked to {decision}", dict(kinds), [
            m.payload for m in moves if m.kind not in ("play", "deal")])
