"""One turn of a game: a decision applied, then everything that follows without a person.

A *turn* is the work of one transaction on one game: the move a player sent (or none, when a game
starts or a deadline passes), then the moves nobody needs to be asked for:

- the next hand is dealt (from the game's seed, or from system randomness; the deck is logged);
- computer players (bot seats, and seats whose player resigned) decide;
- a player with exactly one legal card plays it, unless they turned that off;
- when no unplayed card can change any score, the rest of the hand is played out.

The turn records what happened (engine events, who decided, what was played for whom) so that
:mod:`pbem.services.notify` can tell each player what they need to know.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbem.bots import decide, get_bot
from pbem.db.models import Game, GameStatus, Move, Seat, SeatStatus
from pbem.engine import (
    CALL,
    CHARGE,
    DEAL,
    DISCARD,
    MIX,
    MOON,
    OVER,
    PASS,
    PLAY,
    CallPass,
    ChargeCards,
    ChooseMoon,
    Deal,
    DeclinePass,
    DiscardKitty,
    Event,
    GameState,
    HandScored,
    MixCards,
    PlayCard,
    apply,
    shuffled_deck,
    shuffled_mix,
)
from pbem.engine import Move as EngineMove
from pbem.engine.cards import CARD_INDEX

from .gamestore import append_move, save_state
from .playahead import autopilot_on, queued_cards, store_queue

#: Most automatic moves one turn applies in one transaction (a step).  A turn with a person in
#: the game needs a few (the bots' cards of a trick or two, a hand played out: at most a deck and
#: its passes); a game whose every seat is played by computers goes on in further steps, each
#: committed on its own (``pbem.services.continuation``), so one game never holds a worker for long.
AUTOMATIC_MOVES_PER_STEP = 64
#: And at most this much CPU time (the bots' searches are the costly part): a step stops after
#: the move that passes it, far inside the tasks' time limits (``workers.app``) on a busy machine.
#: Where a step ends changes no move (each bot's seed comes from the move's number), only how
#: the moves are batched into mails.
AUTOMATIC_STEP_CPU_SECONDS = 10.0
#: The CPU bound of a step of ``pbem.services.continuation`` (a game already past one step: most
#: often one of computers only, whose steps nobody's mail waits for): short, so that a worker's
#: pool process is soon free again for the mail of a person (one `strong` decision is 0.4 s of CPU
#: on average, README "Benchmarks"; a step still makes at least one move).
CONTINUE_STEP_CPU_SECONDS = 0.25
#: ``session.info`` key: the games whose turn stopped at that bound in this transaction (id -> mark).
_CONTINUE = "pbem.continue_games"


@dataclass(frozen=True)
class HandKitty:
    """A finished hand's kitty (RULES.md §6.2), for its summary."""

    cards: tuple[str, ...]
    taker: int | None
    trick: int | None
    discarded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Choice:
    """An automatic move chosen for the position ``state`` by ``by`` (the computer player's name, or
    ``deal`` / ``mix`` for a shuffle).  The same chooser in the same position at the same sequence
    number chooses the same move (a bot's seed is the game's and the move's number, the hand's
    tricks are the log's before it), so a choice made ahead stands for choosing again; a shuffle
    of a game without a seed is as random drawn ahead as drawn now."""

    state: GameState
    by: str
    move: EngineMove


@dataclass
class Turn:
    game: Game
    seats: list[Seat]
    before: GameState
    state: GameState
    now: datetime
    inbound_id: int | None = None
    events: list[Event] = field(default_factory=list)
    #: Seats that made a decision in this turn (themselves, a bot, or automatically).
    movers: set[int] = field(default_factory=set)
    #: Cards played automatically for people because they were their only legal card, by seat,
    #: as (hand number, card): the next turn mail of the same hand tells them so.
    autoplayed: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    #: Cards played for people, by seat, when the rest of the hand could not change any score and a
    #: player had a choice (not "only legal card": the mails must not say so).
    played_out: dict[int, list[str]] = field(default_factory=dict)
    #: Whether a new hand was dealt in this turn (every decision after it is a new one).
    dealt: bool = False
    #: Cards played for people as they asked (their queue, or the autopilot), by seat (README,
    #: "Playing ahead"), as (hand number, card).
    played_ahead: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    #: The game begins in this turn (``games.start_game``): the first mail of each person says so.
    started: bool = False
    #: Mails to these players answer a request of theirs (a ``new@`` mail): player id -> the
    #: References chain that threads them with it (``mailing.answer_thread``).
    answering: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: Decisions whose time ran out and that the rules' default made (``deadline_default``), by
    #: seat: ``moon``, ``discard``, ``call`` or ``decline`` (the mails say so).
    defaulted: dict[int, str] = field(default_factory=dict)
    #: The kitty of each hand scored in this turn (RULES.md §6.2), by hand number, as it stood when
    #: the hand ended: its cards, who took it, at which trick, and the taker's discards. The hand
    #: summary shows it (the next hand may be dealt in the same turn).
    kitties: dict[int, HandKitty] = field(default_factory=dict)
    #: dealer_calls_pass: the game's first deck when given (tests, ``pbem game new``), dealt once the
    #: first dealer has called in this turn (RULES.md §6.3: the call comes before the deal).
    first_deck: tuple[str, ...] | None = None
    #: The sequence number of the turn's first move (the game's ``next_seq`` when it began).
    first_seq: int = 0
    #: The current hand's cards played before this turn, from the move log as (seat, card), read
    #: once a turn when a computer first decides (None: not read yet; :func:`turn_tricks`) ...
    logged_plays: list[tuple[int, str]] | None = None
    #: ... and those played in this turn since its last deal.
    plays: list[tuple[int, str]] = field(default_factory=list)
    #: The choices of this turn's automatic moves (a computer's decision, a shuffled deck), by the
    #: sequence number of the move: recorded as they are made, and taken instead of choosing again
    #: when they were made ahead for the same position (:func:`chosen`; ``pbem.services.continuation``
    #: decides a step's moves before it takes the game's lock).
    choices: dict[int, Choice] = field(default_factory=dict)

    def seat_row(self, seat: int) -> Seat:
        return self.seats[seat]


def begin_turn(game: Game, seats: list[Seat], state: GameState, now: datetime,
               inbound_id: int | None = None) -> Turn:
    return Turn(game=game, seats=sorted(seats, key=lambda s: s.seat), before=state, state=state, now=now,
                inbound_id=inbound_id, first_seq=game.next_seq)


def apply_move(session: Session, turn: Turn, move: EngineMove) -> None:
    """Apply one move (raising ``IllegalMove`` with the state untouched), log it, count the decision."""
    state, events = apply(turn.state, move)
    append_move(session, turn.game, move, inbound_id=turn.inbound_id, now=turn.now)
    turn.state = state
    turn.events.extend(events)
    if state.rules.table.kitty_size:  # a §6.2 kitty, or two decks' leftovers (§6.6)
        for event in events:
            if isinstance(event, HandScored):  # the state still holds the hand that ended
                turn.kitties[event.hand_no] = HandKitty(tuple(state.kitty), state.kitty_taker, state.kitty_trick,
                                                        tuple(state.discarded))
    seat = getattr(move, "seat", None)
    if seat is not None:
        turn.movers.add(seat)
        turn.seat_row(seat).decisions += 1
    if isinstance(move, Deal):
        turn.dealt = True
        turn.plays = []
    elif isinstance(move, PlayCard):
        turn.plays.append((move.seat, str(move.card)))


#: ``seat.stand_in`` reasons for which a bot decides for a player who may take the seat back
#: (README, "Time"; :mod:`pbem.services.absence`).
STAND_IN_DEADLINE, STAND_IN_VACATION, STAND_IN_SUBSTITUTE = "deadline", "vacation", "substitute_wanted"
BOT_STAND_INS = frozenset({STAND_IN_DEADLINE, STAND_IN_VACATION, STAND_IN_SUBSTITUTE})
#: ``seat.stand_in`` of the seat whose absence paused the game (no bot plays: the game waits).
PAUSED_FOR = "paused"


def is_computer(seat: Seat) -> bool:
    return (seat.status == SeatStatus.BOT or (seat.bot is not None and seat.player_id is None)
            or seat.stand_in in BOT_STAND_INS)


def next_deck(game: Game, state: GameState, rng: random.Random) -> tuple[str, ...]:
    """The deck of the next hand: from the game's seed when it has one (reproducible games)."""
    if game.seed is not None:
        rng = random.Random(f"{game.seed}:{state.hand_no + 1}")
    return shuffled_deck(state.rules, rng)


def next_mix(game: Game, state: GameState, rng: random.Random) -> tuple[str, ...]:
    """A ``mix`` hand's cards dealt back (RULES.md §6.3): shuffled from the game's seed when it has
    one, like the decks (:func:`next_deck`)."""
    if game.seed is not None:
        rng = random.Random(f"{game.seed}:{state.hand_no}:mix")
    return shuffled_mix(state, rng)


def hand_tricks(session: Session, game: Game, state: GameState) -> list[tuple[int, tuple[int, ...]]]:
    """The finished tricks of the current hand, from the move log: (leader, card indices)."""
    return split_tricks(_logged_plays(session, game.id, None), state)


def turn_tricks(session: Session, turn: Turn) -> list[tuple[int, tuple[int, ...]]]:
    """:func:`hand_tricks` for a turn's automation: the log's plays of the hand read once a turn, then
    the turn's own.  Read before the turn's own moves are applied (:func:`read_logged_plays`), they
    need no write: the automation can run in a transaction that only reads."""
    if turn.dealt:
        return split_tricks(turn.plays, turn.state)
    return split_tricks(read_logged_plays(session, turn) + turn.plays, turn.state)


def read_logged_plays(session: Session, turn: Turn) -> list[tuple[int, str]]:
    """The current hand's cards played before the turn (once a turn; kept in the turn)."""
    if turn.logged_plays is None:
        turn.logged_plays = _logged_plays(session, turn.game.id, turn.first_seq)
    return turn.logged_plays


def _logged_plays(session: Session, game_id: int, before: int | None) -> list[tuple[int, str]]:
    """The cards played since the last deal in the game's log (before the move ``before``): (seat, card)."""
    # Moves buffered in this transaction are in the log before these queries (pbem.db.writes writes
    # them before every ORM statement); the changed seats and game need not be flushed first.
    older = (Move.seq < before,) if before is not None else ()
    with session.no_autoflush:
        last_deal = session.scalar(select(func.max(Move.seq))
                                   .where(Move.game_id == game_id, Move.kind == "deal", *older))
        plays = session.execute(
            select(Move.seat, Move.payload)
            .where(Move.game_id == game_id, Move.kind == "play", Move.seq > (last_deal or 0), *older)
            .order_by(Move.seq)
        ).all()
    return [(seat, payload["card"]) for seat, payload in plays]


def split_tricks(plays: list[tuple[int, str]], state: GameState) -> list[tuple[int, tuple[int, ...]]]:
    """The finished tricks of the hand of ``state`` from its plays in order: (leader, card indices)."""
    n = state.players
    cards = [CARD_INDEX[card] for _, card in plays]
    tricks = []
    k = 0
    for _ in range(state.tricks_played):
        size = n
        if state.t.booster and _boosted(cards[k:k + n], state.t.hand_size - k // n, n):
            size = 2 * n
        tricks.append((plays[k][0], tuple(cards[k:k + size])))
        k += size
    return tricks


def _boosted(first_round: list[int], held: int, n: int) -> bool:
    """Booster Nines (RULES.md §6.5): whether a trick whose first-round cards are ``first_round``, started
    with ``held`` cards in each hand, was boosted to 2n cards: a nine of the led suit among them, and
    more than one card each when it started."""
    return held >= 2 and first_round[0] // 13 * 13 + 7 in first_round


def _bot_move(session: Session, turn: Turn, seat: int, stand_in_bot: str) -> EngineMove:
    """The computer player's move for ``seat`` (``pbem.bots.decide``: the method the phase calls
    for), seeded by the game and the move's number, with the hand's tricks from the move log: the
    seat's own bot, or for a person's seat ``stand_in_bot`` (``PBEM_STAND_IN_BOT``)."""
    game = turn.game
    name = turn.seat_row(seat).bot or stand_in_bot

    def decided() -> EngineMove:
        bot = get_bot(name, seed=f"{game.seed or game.id}:{game.next_seq}")
        return decide(bot, turn.state, seat, turn_tricks(session, turn))

    return chosen(turn, name, decided)


def chosen(turn: Turn, by: str, choose: Callable[[], EngineMove]) -> EngineMove:
    """The move ``by`` chooses now: the one it chose ahead in this very position (``turn.choices``),
    else ``choose()``; recorded either way."""
    seq = turn.game.next_seq
    ahead = turn.choices.get(seq)
    if ahead is not None and ahead.by == by and ahead.state == turn.state:
        return ahead.move
    move = choose()
    turn.choices[seq] = Choice(turn.state, by, move)
    return move


def deadline_default(state: GameState, seat: int) -> EngineMove | None:
    """The move the rules make for ``seat`` when its decision's time runs out, for the decisions
    that have one (else None: the game's absence policy applies). RULES.md §3 ``moon``: with no
    answer by the deadline ``safety`` decides (a team's slam too, §6.1)."""
    if state.phase == MOON and state.shooter and state.shooter[0] == seat:
        return ChooseMoon(seat, "safety")
    if state.phase == DISCARD and state.kitty_taker == seat:
        # RULES.md §6.2: with no answer by the deadline, the kitty cards themselves are discarded
        # (always legal: they are in the taker's hand).
        return DiscardKitty(seat, tuple(state.kitty))
    if state.phase == CALL and state.next_dealer == seat:
        # RULES.md §6.3 dealer_calls_pass: with no call by the deadline, the cycle's direction for
        # the hand (hold included).
        return CallPass(seat, state.default_call())
    if state.phase == PASS and state.may_decline and seat in state.seats_to_pass():
        # RULES.md §6.3 pass_optional: with no pass by the deadline, the seat declines.
        return DeclinePass(seat)
    if state.phase == CHARGE and seat in state.seats_to_charge():
        # RULES.md §6.4 Turbo: with no answer by the deadline, nothing is charged.
        return ChargeCards(seat, ())
    return None


def default_decision(move: EngineMove) -> str:
    """What a :func:`deadline_default` move decided, as the mails name it: ``moon``, ``discard``,
    ``call``, ``charge`` or ``decline``."""
    if isinstance(move, ChooseMoon):
        return "moon"
    if isinstance(move, ChargeCards):
        return "charge"
    if isinstance(move, DiscardKitty):
        return "discard"
    if isinstance(move, CallPass):
        return "call"
    return "decline"


def card_ahead(session: Session, turn: Turn, seat: int, stand_in_bot: str) -> str | None:
    """The card to play now for ``seat`` (a person, to play) by what they asked ahead (README,
    "Playing ahead"; :mod:`pbem.services.playahead`): the autopilot's choice, or the queue's first
    card when it is legal; None when the person must be asked."""
    row = turn.seat_row(seat)
    state = turn.state
    if autopilot_on(row, state):
        move = _bot_move(session, turn, seat, stand_in_bot)
        return str(move.card)  # type: ignore[attr-defined]
    queue = queued_cards(row, state)
    if queue != list((row.queued or {}).get("cards", ())):
        store_queue(row, state, queue)  # cards played by hand or passed away leave the queue
    if queue and queue[0] in state.legal_cards():
        store_queue(row, state, queue[1:])
        return queue[0]
    return None


def run_automation(session: Session, turn: Turn, *, rng: random.Random, stand_in_bot: str,
                   autoplay_single: dict[int, bool], moves: int = AUTOMATIC_MOVES_PER_STEP,
                   cpu_seconds: float = AUTOMATIC_STEP_CPU_SECONDS) -> bool:
    """Apply every move that needs nobody's decision, until a person must decide or the game ends;
    whether it stopped at the bound of a step with more to play.

    ``autoplay_single[seat]`` says whether that seat's player wants a single legal card played
    for them.  After ``moves`` moves (``AUTOMATIC_MOVES_PER_STEP``), or the move that passes
    ``cpu_seconds`` of CPU (``AUTOMATIC_STEP_CPU_SECONDS``), the turn stops with more to play: the
    game is marked to be continued (``game.continue_at``; :func:`games_to_continue`).
    """
    game = turn.game
    if game.continue_at is not None:
        game.continue_at = None
    cpu_budget_end = time.thread_time() + cpu_seconds
    for _ in range(moves):
        if time.thread_time() > cpu_budget_end:
            break
        state = turn.state
        phase = state.phase
        if phase == OVER:
            return False
        if phase == DEAL:
            deck, turn.first_deck = turn.first_deck, None
            apply_move(session, turn, Deal(deck) if deck is not None else chosen(
                turn, "deal", lambda: Deal(next_deck(game, state, rng))))
            continue
        if phase == MIX:  # a mix hand's passed cards shuffled and dealt back (RULES.md §6.3)
            apply_move(session, turn, chosen(turn, "mix", lambda: MixCards(next_mix(game, state, rng))))
            continue
        if phase == CALL:  # dealer_calls_pass: the coming hand's dealer calls (RULES.md §6.3)
            dealer = state.next_dealer
            if not is_computer(turn.seat_row(dealer)):
                return False
            apply_move(session, turn, _bot_move(session, turn, dealer, stand_in_bot))
            continue
        if phase == PASS:
            bots = [s for s in state.seats_to_pass() if is_computer(turn.seat_row(s))]
            if not bots:
                return False
            apply_move(session, turn, _bot_move(session, turn, bots[0], stand_in_bot))
            continue
        if phase == CHARGE:  # Turbo: every seat holding a chargeable card charges (RULES.md §6.4)
            bots = [s for s in state.seats_to_charge() if is_computer(turn.seat_row(s))]
            if not bots:
                return False
            apply_move(session, turn, _bot_move(session, turn, bots[0], stand_in_bot))
            continue
        if phase == MOON:
            shooter = state.shooter[0]
            if not is_computer(turn.seat_row(shooter)):
                return False
            apply_move(session, turn, _bot_move(session, turn, shooter, stand_in_bot))
            continue
        if phase == DISCARD:  # kitty_exchange: the kitty's taker discards (RULES.md §6.2)
            taker = state.seats_to_act()[0]
            row = turn.seat_row(taker)
            # The autopilot plays the rest of the hand for its player, the discard included (their
            # next mail shows what was discarded: the kitty line).
            if not is_computer(row) and not autopilot_on(row, state):
                return False
            apply_move(session, turn, _bot_move(session, turn, taker, stand_in_bot))
            continue
        # PLAY
        seat = state.to_move
        if is_computer(turn.seat_row(seat)):
            apply_move(session, turn, _bot_move(session, turn, seat, stand_in_bot))
            continue
        if not state.unplayed_can_change_score():  # the rest of the hand cannot change any score
            legal = state.legal_cards()
            apply_move(session, turn, PlayCard(seat, legal[0]))
            # Only a card that was the seat's only legal one is told as such in its next turn mail.
            if len(legal) == 1:
                turn.autoplayed.setdefault(seat, []).append((state.hand_no, legal[0]))
            else:
                turn.played_out.setdefault(seat, []).append(legal[0])
            continue
        ahead = card_ahead(session, turn, seat, stand_in_bot)
        if ahead is not None:
            apply_move(session, turn, PlayCard(seat, ahead))
            turn.played_ahead.setdefault(seat, []).append((state.hand_no, ahead))
            continue
        card = state.only_legal_card() if autoplay_single.get(seat, True) else None
        if card is None:
            return False
        apply_move(session, turn, PlayCard(seat, card))
        turn.autoplayed.setdefault(seat, []).append((state.hand_no, card))
    if turn.state.phase == OVER:
        return False
    game.continue_at = turn.now
    session.info.setdefault(_CONTINUE, {})[game.id] = continue_mark(game)
    return True


def continue_mark(game: Game) -> int:
    """What names the step a marked game is waiting for: the sequence number its next move will
    take (a step queued for another, by a duplicate task or by a sweep that raced the game's own
    follow-up, finds a different one and does nothing)."""
    return game.next_seq


def games_to_continue(session: Session) -> list[tuple[int, int]]:
    """The games whose turn in this transaction stopped at ``AUTOMATIC_MOVES_PER_STEP`` with
    automatic moves still to play, with their marks: continue each once the transaction has
    committed."""
    return sorted(session.info.get(_CONTINUE, {}).items())


def end_turn(turn: Turn) -> None:
    """Write the new snapshot and the game's status."""
    save_state(turn.game, turn.state, turn.now)
    if turn.state.phase == OVER and turn.game.status == GameStatus.ACTIVE:
        turn.game.status = GameStatus.FINISHED
