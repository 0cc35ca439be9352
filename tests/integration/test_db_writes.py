"""``pbem.db.writes`` on SQLite and PostgreSQL: buffered rows are inserted in one statement and
seen by the transaction's queries, changed games and seats are written by Core UPDATEs that
check the game's version, and nothing buffered survives a rollback."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import event, func, select, update
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.models import Game, GameStatus, Move, OutboundMessage, OutboundStatus, Seat, SeatStatus
from pbem.db.session import make_engine, make_session_factory, transaction
from pbem.db.writes import add_row, add_update, insert_rows, write_all
from pbem.services.gamestore import load_game

NOW = datetime(2024, 5, 17, 12, 0, tzinfo=UTC)
MOVES = Move.__table__
OUTBOX = OutboundMessage.__table__


@pytest.fixture
def factory(db_url: str):  # type: ignore[no-untyped-def]
    engine = make_engine(db_url)
    yield make_session_factory(engine)
    engine.dispose()


def statements(factory) -> list[str]:  # type: ignore[no-untyped-def]
    seen: list[str] = []
    event.listen(factory.kw["bind"], "before_cursor_execute",
                 lambda conn, cursor, sql, params, context, many: seen.append(" ".join(sql.split()[:3])))
    return seen


def new_game(factory) -> int:  # type: ignore[no-untyped-def]
    with transaction(factory) as session:
        game = Game(rules={"preset": "standard"}, status=GameStatus.ACTIVE, snapshot={"n": 0}, next_seq=1,
                    created_at=NOW, updated_at=NOW, title="t")
        session.add(game)
        session.flush()
        for number in range(4):
            session.add(Seat(game_id=game.id, seat=number, bot="random", status=SeatStatus.BOT))
        return game.id


def outbox_values(k: int) -> dict:
    return {"recipient": f"p{k}@example.com", "kind": "your_turn", "message_id": f"<m{k}@hearts.test>",
            "raw": b"raw \x00\xff" + bytes([k]), "status": OutboundStatus.PENDING, "attempts": 0,
            "created_at": NOW, "next_attempt_at": NOW}


def test_buffered_rows_go_in_with_one_insert_and_ids_in_their_order(factory) -> None:  # type: ignore[no-untyped-def]
    game_id = new_game(factory)
    seen = statements(factory)
    with transaction(factory) as session:
        rows = [add_row(session, OUTBOX, outbox_values(k) | {"game_id": game_id}, returning=True) for k in range(5)]
        moves = [add_row(session, MOVES, {"game_id": game_id, "seq": seq, "kind": "play", "seat": seq % 4,
                                          "payload": {"type": "play", "card": "QS", "seat": seq % 4},
                                          "created_at": NOW}) for seq in (1, 2)]
        assert seen == []  # nothing written yet
        ids = [row.id for row in rows]  # reading an id writes every waiting row
        if session.get_bind().dialect.name == "postgresql":  # one statement for both tables
            assert seen == ["WITH w0 AS"]
        else:  # SQLite returns ids in order only row by row (in process: no round trips)
            assert set(seen) - {"BEGIN IMMEDIATE"} == {"INSERT INTO outbound_messages", "INSERT INTO moves"}
        assert moves[0].id is None  # its id was not asked for
    with transaction(factory) as session:
        stored = dict(session.execute(select(OutboundMessage.id, OutboundMessage.message_id)).all())
        assert [stored[i] for i in ids] == [f"<m{k}@hearts.test>" for k in range(5)]
        assert session.get(OutboundMessage, ids[3]).raw == b"raw \x00\xff\x03"
        assert [tuple(r) for r in session.execute(select(Move.seq, Move.payload).order_by(Move.seq))] == [
            (1, {"type": "play", "card": "QS", "seat": 1}), (2, {"type": "play", "card": "QS", "seat": 2})]


def test_a_query_in_the_transaction_sees_the_buffered_rows(factory) -> None:  # type: ignore[no-untyped-def]
    game_id = new_game(factory)
    with transaction(factory) as session:
        add_row(session, MOVES, {"game_id": game_id, "seq": 1, "kind": "deal", "payload": {"type": "deal"},
                                 "created_at": NOW})
        with session.no_autoflush:
            assert session.scalar(select(func.count()).select_from(Move)) == 1


def test_a_rollback_drops_the_buffered_rows(factory) -> None:  # type: ignore[no-untyped-def]
    game_id = new_game(factory)
    with pytest.raises(RuntimeError):
        with transaction(factory) as session:
            row = add_row(session, OUTBOX, outbox_values(1) | {"game_id": game_id}, returning=True)
            raise RuntimeError("the move failed")
    assert row.id is None
    with transaction(factory) as session:
        assert session.scalar(select(func.count()).select_from(OutboundMessage)) == 0


def test_insert_rows_on_its_own(factory) -> None:  # type: ignore[no-untyped-def]
    with factory() as session, session.begin():
        ids = insert_rows(session.connection(), OUTBOX, [outbox_values(k) for k in range(60)], returning=True)
    assert len(set(ids)) == 60 and ids == sorted(ids)
    with transaction(factory) as session:
        assert session.get(OutboundMessage, ids[59]).recipient == "p59@example.com"


def test_changed_games_and_seats_are_written_by_core_with_the_version_checked(factory) -> None:  # type: ignore[no-untyped-def]
    game_id = new_game(factory)
    seen = statements(factory)
    with transaction(factory) as session:
        game = session.get(Game, game_id)
        seats = sorted(game.seats, key=lambda s: s.seat)
        seen.clear()
        version = game.version
        game.snapshot = {"n": 1}
        game.next_seq = 2
        seats[1].decisions = 1
        seats[1].waiting_since = NOW
        seats[2].waiting_since = NOW
        seats[3].waiting_since = NOW
    writes = [s for s in seen if s.startswith(("UPDATE", "WITH"))]
    if factory.kw["bind"].dialect.name == "postgresql":
        assert writes == ["WITH w0 AS"]  # the game and its seats in one statement
    else:
        assert sorted(writes) == ["UPDATE games SET", "UPDATE seats SET"]  # the seats together
    assert game.version == version + 1
    with transaction(factory) as session:
        again = session.get(Game, game_id)
        assert (again.snapshot, again.next_seq, again.version) == ({"n": 1}, 2, version + 1)
        assert [(s.decisions, s.waiting_since) for s in sorted(again.seats, key=lambda s: s.seat)] == [
            (0, None), (1, NOW), (0, NOW), (0, NOW)]


def test_a_game_loaded_for_a_move_leaves_the_orm_no_flush_at_commit(factory) -> None:  # type: ignore[no-untyped-def]
    """A move's game, loaded locked with its seats (``load_game``), changed and committed: the
    one write statement takes everything, and SQLAlchemy's flush never runs (it used to walk the
    game at every commit, for nothing)."""
    game_id = new_game(factory)
    with transaction(factory) as session:
        flushes: list[object] = []
        event.listen(session, "before_flush", lambda *args: flushes.append(args))
        game = load_game(session, game_id)
        game.snapshot = {"n": 1}
        game.seats[1].decisions = 1
    assert flushes == []
    with transaction(factory) as session:
        again = load_game(session, game_id, lock=False)
        assert (again.snapshot, again.seats[1].decisions) == ({"n": 1}, 1)


def test_a_game_changed_meanwhile_is_refused(factory) -> None:  # type: ignore[no-untyped-def]
    game_id = new_game(factory)
    with pytest.raises(StaleDataError):
        with transaction(factory) as session:
            game = session.get(Game, game_id)
            # The row changes behind the loaded object's back (as another writer would).
            session.connection().execute(update(Game.__table__).where(Game.__table__.c.id == game_id)
                                         .values(version=Game.__table__.c.version + 1))
            game.snapshot = {"n": 2}
    with transaction(factory) as session:
        assert session.get(Game, game_id).snapshot == {"n": 0}


def test_rows_updates_and_objects_go_together_and_a_stale_version_undoes_them(factory) -> None:  # type: ignore[no-untyped-def]
    game_id = new_game(factory)
    with transaction(factory) as session:
        row_id = add_row(session, OUTBOX, outbox_values(1) | {"game_id": game_id}, returning=True).id
    seen = statements(factory)
    with transaction(factory) as session:
        game = session.get(Game, game_id)
        seen.clear()
        add_update(session, OUTBOX, {"id": row_id}, {"status": OutboundStatus.SENT, "attempts": 3})
        mail = add_row(session, OUTBOX, outbox_values(2) | {"game_id": game_id}, returning=True)
        game.next_seq = 7
        write_all(session)
        assert mail.id is not None
        if factory.kw["bind"].dialect.name == "postgresql":
            assert seen == ["WITH w0 AS"]
    with transaction(factory) as session:
        assert session.get(OutboundMessage, row_id).status is OutboundStatus.SENT
        assert session.get(OutboundMessage, row_id).attempts == 3
        assert session.get(Game, game_id).next_seq == 7
    with pytest.raises(StaleDataError):
        with transaction(factory) as session:
            game = session.get(Game, game_id)
            session.connection().execute(update(Game.__table__).where(Game.__table__.c.id == game_id)
                                         .values(version=Game.__table__.c.version + 1))
            add_update(session, OUTBOX, {"id": row_id}, {"attempts": 9})
            add_row(session, OUTBOX, outbox_values(3) | {"game_id": game_id})
            game.next_seq = 8
    with transaction(factory) as session:  # nothing of the refused transaction stayed
        assert session.get(OutboundMessage, row_id).attempts == 3
        assert session.scalar(select(func.count()).select_from(OutboundMessage)) == 2
        assert session.get(Game, game_id).next_seq == 7
