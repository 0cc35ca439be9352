"""Games for ``pbem bench e2e``: played tables through the services, and ballast in bulk.

*Played* tables are created exactly as ``pbem game new`` does (``create_game`` + ``start_game``:
the first deal, the first ``your_turn`` mails in the outbox, queued after the
commit), with four load players each (``<group>-<n>@load.test``), whose notification choice
is set first (``every_card``: the heavy case).

*Ballast* tables only make the database big (the flat-cost measurement: 10, 1,000, 10,000
active games).  They are written by a fast path that produces the same rows the services
write for a game in progress (the game with its snapshot, its seats, its move log: a deal
and some random legal passes and plays, applied by the engine), through multi-row INSERTs,
without rendering mails nobody would read.  ``pbem game check`` agrees with them like with
any game.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, Move, Player, Seat, SeatStatus
from pbem.db.session import transaction
from pbem.engine import (
    DEAL,
    MOON,
    PASS,
    PLAY,
    ChooseMoon,
    Deal,
    GameState,
    PassCards,
    PlayCard,
    Rules,
    apply,
    move_to_dict,
    shuffled_deck,
)
from pbem.engine import Move as EngineMove
from pbem.services.app import Services
from pbem.services.games import SeatSpec, create_game, get_or_create_player, start_game

__all__ = ["LOAD_DOMAIN", "add_ballast", "create_tables", "player_address"]

LOAD_DOMAIN = "load.test"
BALLAST_PLAYERS = 4000
"""Ballast seats are filled from this many players (each sits at many tables)."""


def player_address(group: str, number: int) -> str:
    return f"{group}-{number}@{LOAD_DOMAIN}"


@dataclass(frozen=True)
class Created:
    game_ids: list[int]
    outbound_ids: list[int]


def create_tables(svc: Services, group: str, count: int, *, notify: str | None, seed: str,
                  per_transaction: int = 25) -> Created:
    """``count`` started games of four load players of ``group``; returns their outbox ids
    (committed, to be queued by the caller)."""
    rules = Rules.make("standard")
    game_ids: list[int] = []
    outbound_ids: list[int] = []
    for first in range(0, count, per_transaction):
        with transaction(svc.session_factory) as session:
            for number in range(first, min(first + per_transaction, count)):
                addresses = [player_address(group, 4 * number + k) for k in range(4)]
                for address in addresses:
                    player = get_or_create_player(session, address, None, svc.clock.now())
                    player.prefs = {"notify": notify} if notify else {}
                game = create_game(session, svc, rules=rules, seats=[SeatSpec(address=a) for a in addresses],
                                   seed=f"{seed}:{group}:{number}", title=f"Bench {group} {number}")
                mails = start_game(session, svc, game)
                session.flush()
                game_ids.append(game.id)
                outbound_ids.extend(m.id for m in mails)
    return Created(game_ids, outbound_ids)


def _random_moves(rules: Rules, rng: random.Random, count: int) -> tuple[GameState, list[EngineMove]]:
    """A game dealt and then ``count`` random legal decisions further (never past its end)."""
    state = GameState.new(rules)
    moves: list[EngineMove] = []

    def do(move: EngineMove) -> None:
        nonlocal state
        state, _ = apply(state, move)
        moves.append(move)

    do(Deal(shuffled_deck(rules, rng)))
    for _ in range(count):
        if state.phase == PASS:
            seat = state.seats_to_pass()[0]
            do(PassCards(seat, tuple(rng.sample(state.hand(seat), rules.pass_count))))
        elif state.phase == PLAY:
            do(PlayCard(state.to_move, rng.choice(state.legal_cards())))
        elif state.phase == MOON:
            do(ChooseMoon(state.shooter[0], "old"))
        elif state.phase == DEAL:
            do(Deal(shuffled_deck(rules, rng)))
        else:
            break
    return state, moves


def _ballast_players(session: Session) -> list[int]:
    addresses = [player_address("ballast", k) for k in range(BALLAST_PLAYERS)]
    known = dict(session.execute(select(Player.address, Player.id).where(Player.address.like("ballast-%"))).all())
    missing = [{"address": a, "display_name": "", "prefs": {}} for a in addresses if a not in known]
    if missing:
        for row in session.execute(insert(Player).returning(Player.address, Player.id), missing):
            known[row.address] = row.id
    return [known[a] for a in addresses]


def add_ballast(svc: Services, count: int, *, seed: str, start: int = 0, per_transaction: int = 500,
                decisions: Sequence[int] = (0, 40)) -> int:
    """Write ``count`` games in progress (numbered from ``start``); returns how many."""
    rules = Rules.make("standard")
    rules_dict = rules.to_dict()
    now = svc.clock.now()
    domain = svc.settings.mail_domain
    written = 0
    with transaction(svc.session_factory) as session:
        players = _ballast_players(session)
    for first in range(start, start + count, per_transaction):
        numbers = range(first, min(first + per_transaction, start + count))
        games = []
        logs = []
        for number in numbers:
            rng = random.Random(f"{seed}:ballast:{number}")
            state, moves = _random_moves(rules, rng, rng.randint(*decisions))
            logs.append(moves)
            games.append({
                "rules": rules_dict, "status": GameStatus.ACTIVE, "version": 1, "snapshot": state.to_dict(),
                "next_seq": len(moves) + 1, "created_at": now, "updated_at": now, "seed": None,
                "title": f"Ballast {number}",
                "thread_id": f"<hearts-ballast-{number}.{secrets.token_hex(4)}@{domain}>",
            })
        with transaction(svc.session_factory) as session:
            ids = list(session.scalars(insert(Game).returning(Game.id, sort_by_parameter_order=True), games))
            seats = []
            move_rows = []
            for number, game_id, moves in zip(numbers, ids, logs):
                made = [0] * rules.players
                for seq, move in enumerate(moves, start=1):
                    payload = move_to_dict(move)
                    seat = payload.get("seat")
                    if seat is not None:
                        made[seat] += 1
                    move_rows.append({"game_id": game_id, "seq": seq, "kind": payload["type"], "seat": seat,
                                      "payload": payload, "inbound_id": None, "created_at": now})
                seats += [{"game_id": game_id, "seat": k, "player_id": players[(4 * number + k) % len(players)],
                           "status": SeatStatus.JOINED, "decisions": made[k]} for k in range(rules.players)]
            session.execute(insert(Seat), seats)
            session.execute(insert(Move), move_rows)
        written += len(numbers)
    return written
