"""What one seat's game page and its replay show, as plain values, and the reading of them.

The builders are pure (plain values in, the page's values out: no Flask, no database);
:func:`seat_page` reads a game, its seats and its move log in the caller's session and calls one
of them.  The web front (``pbem.web.game``, ``pbem.web.replay``) only renders what they return.

The game page has two sources, both filtered to what the seat may know:

* the engine's ``seat_view`` of the current state (own hand, the trick on the table, the
  last trick, totals, hand-by-hand results);
* the move log, for the history of play: every card played is seen by the whole table,
  and so is a moon choice; of the passes a seat sees only its own cards (that the others
  have passed, not what); of a deal, nothing (the log keeps the whole deck).

Moves of a kind this module does not know are left out rather than shown raw: a new kind
of move must be taught here before the page reveals anything of it.

Teams and the kitty (RULES.md §6.1, §6.2) come from :mod:`pbem.services.seat_knowledge`, for the
state and for each hand of the log alike: everyone sees the teams, the team totals and who took
the kitty at which trick; the kitty's cards (and a ``kitty_exchange`` taker's face-down discards)
only its taker, until that hand is scored.  The other seats' view of what the taker
has taken, and of its points so far, leaves them out.

The replay shows every trick of every hand of a game. What it shows depends on whether the game
is over:

* while the game is on, only what the seat may see (:func:`visible_history`): every trick
  played, its own passes, the results;
* once it is over (finished, or called off), everything: each hand's deal as dealt (the
  kitty too), every seat's pass, every trick and result, so the players can go over the game
  together.

The passing variants (RULES.md §6.3): each hand says the dealer's call (``dealer_calls_pass``, a
public move), whether its pass was a mix and whether declining was allowed; a seat's own decline
is shown to it alone, and a decline counts as a pass for "how many have passed" (the table is told
only that a seat has passed).  A ``mix`` move (the gathered cards, shuffled) is never read for a
page during the game: what each seat got back is its own ``received``.

So a scored hand's kitty shows in the replay during the game as on the game page (the cards are
no secret once every other card of the hand is played); the current hand's, only to its taker.

The tricks of the history come from replaying the move log through the engine (its ``TrickWon``
events): the winner, the points with charged values (RULES.md §6.4) and a Booster Nines trick's 2n
cards (§6.5) are the engine's.  A log the engine does not replay (a hand-written one) is grouped n
plays a trick from the move it refuses on.

Cancellation Hearts (RULES.md §6.6): a trick every led-suit card of which was cancelled by its twin
is a finished trick with no winner (``TrickLog.cancelled``, from the engine's ``TrickCancelled``) that
went with a later one (``went_with``); the trick that takes the carried pile names its cards
(``carried``) and counts their points, and the hand's last trick with no winner is given to the winner
of the trick before it (``no_winner``).  Lists of cards name a card held or taken twice twice (the
templates show it once, ``Q♠ ×2``).  The two-deck kitty (the leftovers, to the first trick's winner)
is hidden exactly as §6.2's.

The hands as dealt come from replaying the move log through the engine (the log holds each
deal's whole deck), never from a second record of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from pbem.db.models import Game, Move, Seat
from pbem.engine import (
    DeclinePass,
    DiscardKitty,
    GameState,
    KittyTaken,
    MixCards,
    PassCards,
    PassesExchanged,
    Rules,
    ChargesRevealed,
    HandScored,
    IllegalMove,
    TrickCancelled,
    TrickWon,
    apply,
    card_points,
    move_from_dict,
    seat_view,
    trick_winner,
)
from pbem.mail.cards_display import group_by_suit

from .mailing import seat_names
from .seat_knowledge import Call, SeatFacts, decline_allowed, hand_over, seat_facts, team_values

__all__ = [
    "OVER_STATUSES",
    "GamePage",
    "HandLog",
    "KittyLog",
    "LoggedMove",
    "ReplayHand",
    "ReplayPage",
    "SeatPage",
    "TrickLog",
    "build_page",
    "build_replay",
    "kitty_history",
    "seat_page",
    "visible_history",
    "visible_view",
]

OVER_STATUSES = ("finished", "aborted")


@dataclass(frozen=True, slots=True)
class LoggedMove:
    """One row of the move log, as the page reads it."""

    kind: str
    seat: int | None
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TrickLog:
    number: int
    leader: int
    plays: tuple[tuple[int, str], ...]  # (seat, card) in playing order
    winner: int | None  # None while the trick is on the table
    points: int | None
    #: Booster Nines (RULES.md §6.5): a nine of the led suit boosted it; ``plays`` then holds both rounds
    #: (2n cards, each round leader first; fewer while the trick is on the table).
    boosted: bool = False
    #: Cancellation (RULES.md §6.6): every card of the led suit was cancelled by its twin; the trick stays
    #: on the table (``winner`` None, ``points`` its own) and goes with the next trick that has a winner:
    #: ``went_with`` its number, once played.
    cancelled: bool = False
    went_with: int | None = None
    #: The cancelled tricks' cards this trick's winner took with it (``points`` counts them too).
    carried: tuple[str, ...] = ()
    #: The hand's last trick had no winner: it went to ``winner``, who won the trick before it.
    no_winner: bool = False

    @property
    def on_table(self) -> bool:
        """The trick is being played (a cancelled trick is finished, though nobody took it yet)."""
        return self.winner is None and not self.cancelled

    def rounds(self, players: int) -> tuple[tuple[tuple[int, str], ...], ...]:
        """The trick's plays by round: one round, or a boosted trick's two (RULES.md §6.5)."""
        if not self.boosted or len(self.plays) <= players:
            return (self.plays,)
        return (self.plays[:players], self.plays[players:])


@dataclass(slots=True)
class HandLog:
    number: int
    pass_direction: str
    passed: tuple[str, ...] | None = None  # this seat's own pass
    seats_passed: int = 0  # how many seats have passed (not what)
    tricks: list[TrickLog] = field(default_factory=list)
    moon_choices: list[tuple[int, str]] = field(default_factory=list)
    result: Mapping[str, Any] | None = None  # the view's history entry once scored
    #: The kitty (RULES.md §6.2): who took it and at the end of which trick (None while it lies on the
    #: table); its cards and the taker's face-down discards only as this seat may see them (its taker,
    #: or everyone once the hand is scored: :mod:`pbem.services.seat_knowledge`).
    kitty_taker: int | None = None
    kitty_trick: int | None = None
    kitty: tuple[str, ...] = ()
    discarded: tuple[str, ...] = ()
    #: The passing variants (RULES.md §6.3): the dealer's call and who called it (public), whether
    #: declining was allowed on this hand, whether this seat declined (its own), and with a split
    #: call this seat's own pass by direction.
    pass_call: Call = ()
    caller: int | None = None
    decline_allowed: bool = False
    declined: bool = False
    passed_packets: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Turbo (RULES.md §6.4): by seat, the cards each charged once every seat has decided (public),
    #: ``()`` before that; this seat's own charge as soon as it made it (None until then).
    charges: tuple[tuple[str, ...], ...] = ()
    own_charge: tuple[str, ...] | None = None
    #: Turbo, once the hand is scored: by seat the 10 of clubs' factor (1, 2 or 4), ``()`` without turbo.
    multiplier: tuple[int, ...] = ()
    #: The hand's moon or sun once scored (the engine's event: seat, kind, scoring "old"/"new"/"win",
    #: team, total), None otherwise.
    moon: Any = None

    @property
    def charges_revealed(self) -> bool:
        return bool(self.charges)

    @property
    def doubled(self) -> tuple[int, ...]:
        """The seats whose hand score the 10 of clubs multiplied (RULES.md §6.4)."""
        return tuple(s for s, f in enumerate(self.multiplier) if f != 1)

    @property
    def mixed(self) -> bool:
        return self.pass_direction == "mix"


def call_direction(call: Call) -> str:
    """The pass direction a call gives its hand: its one direction, ``mix``, or ``split`` (RULES.md §6.3)."""
    return call[0][0] if len(call) == 1 else "split"


def packets(call: Call, cards: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A split call's pass by direction: the first count of cards to the first direction, and so on."""
    out, start = [], 0
    for direction, count in call:
        out.append((direction, tuple(cards[start:start + count])))
        start += count
    return tuple(out)


def visible_history(
    moves: Iterable[LoggedMove], *, seat: int, rules: Rules, results: Sequence[Mapping[str, Any]] = (),
    every_kitty: bool = False,
) -> list[HandLog]:
    """The hands so far as ``seat`` may see them, oldest first (``every_kitty``: the game is over,
    every hand's kitty and discards are shown, an unfinished hand's too)."""
    table = rules.table
    hands: list[HandLog] = []
    # The tricks come from replaying the log through the engine (one place for who takes a trick, its
    # points with charged values, RULES.md §6.4, and whether a nine boosts it to 2n cards, §6.5).
    state = GameState.new(rules)
    replaying = True
    plays: list[tuple[int, str]] = []

    def trick_points(event: TrickWon, charged: Sequence[str]) -> int:
        """What the trick scores its taker: penalty points (charged values), and the bonus card's bonus
        (Omnibus JD; doubled when charged, RULES.md §6.4; once per copy, a carried pile's too, §6.6)."""
        bonus = 0
        copies = (*event.cards, *event.carried).count(rules.bonus_card) if rules.jd_bonus else 0
        if copies:
            bonus = rules.jd_bonus * copies * (2 if rules.bonus_card in charged else 1)
        return event.points + bonus

    def take_carried(hand: HandLog, number: int) -> None:
        """The cancelled tricks still on the table went with trick ``number`` (RULES.md §6.6)."""
        hand.tricks[:] = [replace(t, went_with=number) if t.cancelled and t.went_with is None else t
                          for t in hand.tricks]

    def fallback_trick(hand: HandLog) -> None:
        """A complete trick of a log the engine does not replay, from the cards alone (RULES.md §6.6 with
        two decks: identical cards cancel; a trick with no winner is carried, the last one goes to the
        winner of the trick before it)."""
        cards = [card for _, card in plays]
        leader = plays[0][0]
        number = len(hand.tricks) + 1
        bonus = rules.jd_bonus * cards.count(rules.bonus_card) if rules.jd_bonus else 0
        points = card_points(rules, cards) + bonus
        winner = trick_winner(cards, leader, rules.players)
        if winner is None and number < table.hand_size:
            hand.tricks.append(TrickLog(number=number, leader=leader, plays=tuple(plays), winner=None,
                                        points=card_points(rules, cards), cancelled=True))
            return
        carried = tuple(c for t in hand.tricks if t.cancelled and t.went_with is None for _, c in t.plays)
        no_winner = winner is None
        if no_winner:
            winner = next((t.winner for t in reversed(hand.tricks) if t.winner is not None), leader)
        points += card_points(rules, carried) + (rules.jd_bonus * carried.count(rules.bonus_card) if rules.jd_bonus else 0)
        take_carried(hand, number)
        hand.tricks.append(TrickLog(number=number, leader=leader, plays=tuple(plays), points=points, winner=winner,
                                    carried=carried, no_winner=no_winner))

    def close_open_trick() -> None:
        if hands and plays:
            hands[-1].tricks.append(TrickLog(number=len(hands[-1].tricks) + 1, leader=plays[0][0],
                                             plays=tuple(plays), winner=None, points=None,
                                             boosted=replaying and state.trick_boosted))
        plays.clear()

    moves_seen: list[LoggedMove] = []
    call: tuple[int | None, Call] | None = None  # the call made for the coming hand (public)
    for move in moves:
        moves_seen.append(move)
        payload = move.payload
        mover = move.seat if move.seat is not None else payload.get("seat")
        charged_before = state.charged_cards
        events: Sequence[object] = ()
        if replaying:
            try:
                state, events = apply(state, move_from_dict(dict(payload)))
            except (IllegalMove, KeyError, TypeError, ValueError):
                replaying = False  # a log the engine does not replay: its tricks by count from here
        if move.kind == "call":
            call = (mover, tuple((str(d), int(c)) for d, c in payload.get("call", ())))
        elif move.kind == "deal":
            close_open_trick()
            number = len(hands) + 1
            caller, called = call if call is not None else (None, ())
            direction = (call_direction(called) if called else payload.get("pass_direction")
                         or table.pass_direction(number))
            hands.append(HandLog(number=number, pass_direction=str(direction), pass_call=called, caller=caller,
                                 decline_allowed=decline_allowed(rules, str(direction))))
            call = None
        elif not hands:
            continue  # nothing is played before the first deal
        elif move.kind in ("pass", "decline"):
            hands[-1].seats_passed += 1  # a decline is told to the table as a pass (RULES.md §6.3)
            if mover == seat and move.kind == "decline":
                hands[-1].declined = True
            elif mover == seat:
                hands[-1].passed = tuple(str(c) for c in payload.get("cards", ()))
                if len(hands[-1].pass_call) > 1:
                    hands[-1].passed_packets = packets(hands[-1].pass_call, hands[-1].passed)
        elif move.kind == "charge" and mover == seat:
            hands[-1].own_charge = tuple(str(c) for c in payload.get("cards", ()))  # RULES.md §6.4: its own
        elif move.kind == "play" and isinstance(mover, int):
            plays.append((mover, str(payload["card"])))
            if not replaying and len(plays) == rules.players:
                fallback_trick(hands[-1])
                plays.clear()
        elif move.kind == "moon" and isinstance(mover, int):
            hands[-1].moon_choices.append((mover, str(payload.get("choice", ""))))
        for event in events:
            if not hands:
                break
            if isinstance(event, TrickWon):
                hand = hands[-1]
                number = len(hand.tricks) + 1
                take_carried(hand, number)
                hand.tricks.append(TrickLog(number=number, leader=event.leader,
                                            plays=tuple(plays), winner=event.winner,
                                            points=trick_points(event, state.charged_cards or charged_before),
                                            boosted=event.boosted, carried=tuple(event.carried),
                                            no_winner=event.cancelled))
                plays.clear()
            elif isinstance(event, TrickCancelled):
                # RULES.md §6.6: the trick stays on the table; its cards go with the next trick won.
                hand = hands[-1]
                hand.tricks.append(TrickLog(number=len(hand.tricks) + 1, leader=event.leader, plays=tuple(plays),
                                            winner=None, points=event.points, cancelled=True))
                plays.clear()
            elif isinstance(event, ChargesRevealed):
                hands[-1].charges = tuple(tuple(c) for c in event.charges)
            elif isinstance(event, HandScored):
                hands[-1].multiplier = tuple(event.multiplier)
                hands[-1].moon = event.moon
    close_open_trick()
    for hand, result in zip(hands, results):
        hand.result = result
    if rules.table.kitty_size:
        for hand, kitty in zip(hands, kitty_history(moves_seen, rules)):
            sees = every_kitty or kitty.taker is not None and (kitty.taker == seat or kitty.over)
            hand.kitty_taker, hand.kitty_trick = kitty.taker, kitty.trick
            hand.kitty = kitty.cards if sees else ()
            hand.discarded = kitty.discarded if sees else ()
    return hands


@dataclass(frozen=True, slots=True)
class KittyLog:
    """One hand's kitty, all of it (RULES.md §6.2): never shown as is, see :func:`visible_history`."""

    cards: tuple[str, ...]
    taker: int | None = None
    trick: int | None = None
    discarded: tuple[str, ...] = ()
    over: bool = False  # the hand is scored


def kitty_history(moves: Iterable[LoggedMove], rules: Rules) -> list[KittyLog]:
    """Each hand's kitty, from replaying the move log through the engine (the deal's deck holds it;
    the engine says who takes it, and when: one place for that rule)."""
    state = GameState.new(rules)
    logs: list[KittyLog] = []
    for logged in moves:
        try:
            move = move_from_dict(dict(logged.payload))
            state, events = apply(state, move)
        except (IllegalMove, KeyError, TypeError, ValueError):
            break  # a log the engine does not replay (a hand-written one): no kitty known from here
        if logged.kind == "deal":
            logs.append(KittyLog(cards=state.kitty))
        elif not logs:
            continue
        if isinstance(move, DiscardKitty):
            logs[-1] = replace(logs[-1], discarded=tuple(move.cards))
        elif isinstance(move, MixCards):
            logs[-1] = replace(logs[-1], cards=state.kitty)  # RULES.md §6.2: a new kitty from the mix
        for event in events:
            if isinstance(event, KittyTaken):
                logs[-1] = replace(logs[-1], taker=event.seat, trick=event.trick_no)
        if logs[-1].taker is not None and hand_over(state):
            logs[-1] = replace(logs[-1], over=True)
    return logs


@dataclass(frozen=True, slots=True)
class GamePage:
    """Everything ``templates/web/game.html`` reads."""

    game_id: int
    seat: int
    status: str
    names: tuple[str, ...]
    rules: Mapping[str, Any]
    view: Mapping[str, Any] | None  # None until the first deal
    hand_by_suit: tuple[tuple[str, tuple[str, ...]], ...]
    hands: tuple[HandLog, ...]
    my_turn: bool
    #: Teams and the kitty as this seat may see them (None until the first deal).
    facts: SeatFacts | None = None
    #: With a partnership: each scored hand's points by team (RULES.md §6.1).
    team_history: tuple[tuple[int, ...], ...] = ()
    #: Who takes the kitty (RULES.md §6.2, §6.6): "first_trick", "first_penalty", "penalty" or "none".
    kitty_form: str = "none"
    #: The last finished trick of the hand as the history has it (its carried pile, RULES.md §6.6).
    last_trick: TrickLog | None = None
    #: Cancellation (RULES.md §6.6): the points of the cancelled tricks lying on the table, and by seat
    #: the penalty cards taken so far this hand (copies named twice; the kitty as this seat may see it).
    carried_points: int = 0
    penalty_cards_taken: tuple[tuple[str, ...], ...] = ()

    @property
    def players(self) -> int:
        return len(self.names)


def visible_view(state: GameState, seat: int, facts: SeatFacts) -> dict[str, Any]:
    """The engine's ``seat_view`` of ``state``, what the taker alone holds of the kitty left out of
    what the other seats see taken and of their points (:mod:`pbem.services.seat_knowledge`)."""
    view = seat_view(state, seat)
    view["taken"] = [list(cards) for cards in facts.taken]  # a card taken twice named twice (RULES.md §6.6)
    view["points_taken"] = list(facts.points)
    for key in ("kitty", "discarded", "kitty_discards"):
        view.pop(key, None)  # only through ``facts``, which knows who may see them
    return view


def build_page(
    *,
    game_id: int,
    seat: int,
    status: str,
    names: Sequence[str],
    snapshot: Mapping[str, Any] | None,
    rules: Mapping[str, Any],
    moves: Iterable[LoggedMove],
) -> GamePage:
    """The page of ``seat``: the engine's view of the snapshot plus the visible log."""
    if snapshot is None:
        return GamePage(
            game_id=game_id, seat=seat, status=status, names=tuple(names), rules=rules,
            view=None, hand_by_suit=(), hands=(), my_turn=False,
        )
    state = GameState.from_dict(dict(snapshot))
    facts = seat_facts(state, seat)
    view = visible_view(state, seat, facts)
    hands = visible_history(moves, seat=seat, rules=state.rules, results=view["history"])
    finished = [t for t in hands[-1].tricks if not t.on_table] if hands else []
    return GamePage(
        game_id=game_id,
        seat=seat,
        status=status,
        names=tuple(names),
        rules=state.rules.to_dict(),
        view=view,
        hand_by_suit=tuple((suit, tuple(cards)) for suit, cards in group_by_suit(view["hand"])),
        hands=tuple(hands),
        my_turn=seat in view["to_act"],
        facts=facts,
        team_history=tuple(team_values(state.rules, entry["points"]) for entry in view["history"]) if facts.teams
        else (),
        kitty_form=state.rules.table.kitty_form,
        last_trick=finished[-1] if finished and view["last_trick"] is not None else None,
        carried_points=card_points(state.rules, view["carried"]),
        penalty_cards_taken=tuple(tuple(c for c in pile if card_points(state.rules, (c,))) for pile in view["taken"]),
    )


# --- the replay -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayHand:
    log: HandLog
    #: Once the game is over: each seat's cards as dealt, and what each seat passed.
    dealt: tuple[tuple[str, ...], ...] = ()
    passes: tuple[tuple[str, ...] | None, ...] = ()
    #: Once the game is over: the kitty as dealt (RULES.md §6.2), even of a hand left unfinished.
    kitty: tuple[str, ...] = ()
    #: Once the game is over (RULES.md §6.3): who declined, what each seat got (passed to it, or
    #: dealt back by a mix), a split pass by direction, and a mix hand's new kitty.
    declined: tuple[bool, ...] = ()
    received: tuple[tuple[str, ...] | None, ...] = ()
    packets: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = ()
    mixed_kitty: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReplayPage:
    """Everything ``templates/web/replay.html`` reads."""

    game_id: int
    seat: int
    status: str
    names: tuple[str, ...]
    rules: Mapping[str, Any]
    over: bool
    hands: tuple[ReplayHand, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    #: Teams (RULES.md §6.1): the teams, this seat's partner and the team totals; the kitty's size.
    facts: SeatFacts | None = None
    #: With a partnership: the team totals after each scored hand.
    team_history: tuple[tuple[int, ...], ...] = ()

    @property
    def players(self) -> int:
        return len(self.names)


def _deals_and_passes(rules: Rules, moves: Sequence[LoggedMove]) -> list[ReplayHand]:
    """Per hand (its ``log`` left empty): every seat's cards as dealt, every seat's pass or decline,
    what each received, and the kitty, as dealt and after a mix (engine replay of the log)."""
    state = GameState.new(rules)
    hands: list[ReplayHand] = []
    n = rules.players
    passes: list[tuple[str, ...] | None] = []
    declined: list[bool] = []
    for logged in moves:
        move = move_from_dict(dict(logged.payload))
        state, events = apply(state, move)
        if logged.kind == "deal":
            passes, declined = [None] * n, [False] * n
            hands.append(ReplayHand(log=HandLog(number=len(hands) + 1, pass_direction=state.pass_direction),
                                    dealt=tuple(tuple(state.hand(s)) for s in range(n)), kitty=state.kitty))
        elif not hands:
            continue
        if isinstance(move, (PassCards, DeclinePass)):
            if isinstance(move, PassCards):
                passes[move.seat] = tuple(move.cards)
            else:
                declined[move.seat] = True
            split = state.pass_direction == "split"
            hands[-1] = replace(hands[-1], passes=tuple(passes), declined=tuple(declined),
                                packets=tuple(packets(state.pass_call, p) if split and p else () for p in passes))
        for event in events:
            if isinstance(event, PassesExchanged):
                hands[-1] = replace(hands[-1], received=tuple(tuple(r) for r in event.received))
        if isinstance(move, MixCards):
            hands[-1] = replace(hands[-1], mixed_kitty=state.kitty)
    return hands


def build_replay(*, game_id: int, seat: int, status: str, names: Sequence[str], snapshot: Mapping[str, Any] | None,
                 rules: Mapping[str, Any], moves: Iterable[LoggedMove]) -> ReplayPage:
    """The replay page of ``seat`` (pure: no Flask, no database)."""
    game_rules = Rules.from_dict(dict(rules))
    moves = list(moves)
    state = GameState.from_dict(dict(snapshot)) if snapshot is not None else GameState.new(game_rules)
    over = status in OVER_STATUSES or (snapshot is not None and state.is_over)
    facts = seat_facts(state, seat)
    view = visible_view(state, seat, facts) if snapshot is not None else {"history": []}
    logs = visible_history(moves, seat=seat, rules=game_rules, results=view["history"], every_kitty=over)
    extra = _deals_and_passes(game_rules, moves) if over else []
    hands = tuple(replace(extra[k], log=log) if k < len(extra) else ReplayHand(log=log) for k, log in enumerate(logs))
    return ReplayPage(game_id=game_id, seat=seat, status=status, names=tuple(names), rules=game_rules.to_dict(),
                      over=over, hands=hands, totals=tuple(state.totals),
                      winners=tuple(state.winners or ()) if state.is_over else (),
                      facts=facts,
                      team_history=tuple(team_values(game_rules, entry["totals"]) for entry in view["history"])
                      if facts.teams else ())


# --- reading a seat's page ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatPage:
    """A built page, and the language of the seat's player (None when unknown)."""

    page: object
    language: str | None


def seat_page(session: Session, *, game_id: int, seat: int, build: Callable[..., object]) -> SeatPage | None:
    """The page of ``seat`` of game ``game_id``, built by ``build`` (:func:`build_page` or
    :func:`build_replay`); None when there is no such game or no such seat.

    The game, its seats and its move log are read in ``session``, and ``build`` is called with
    ``game_id``, ``seat``, ``status``, ``names``, ``snapshot``, ``rules`` and ``moves``.
    """
    game = session.scalars(
        select(Game)
        .where(Game.id == game_id)
        .options(selectinload(Game.seats).selectinload(Seat.player))
    ).one_or_none()
    if game is None:
        return None
    seats = sorted(game.seats, key=lambda s: s.seat)
    own = next((s for s in seats if s.seat == seat), None)
    if own is None:
        return None
    moves = [
        LoggedMove(kind=kind, seat=mover, payload=payload)
        for kind, mover, payload in session.execute(
            select(Move.kind, Move.seat, Move.payload)
            .where(Move.game_id == game.id)
            .order_by(Move.seq)
        )
    ]
    page = build(
        game_id=game.id,
        seat=seat,
        status=str(game.status),
        names=seat_names(seats),
        snapshot=game.snapshot,
        rules=game.rules,
        moves=moves,
    )
    return SeatPage(page=page, language=own.player.language if own.player is not None else None)
