"""``load_game`` under concurrency (real PostgreSQL): a worker that waited for a game's lock must
see the seats as the lock's previous holder left them, since replies are signed with a seat's
decision count.  (Loading the seats joined into the locking statement returned them as they were
when that statement started waiting: every reply to the next mail was then refused as stale.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from pbem.config import Settings
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.games import SeatSpec, create_game
from pbem.services.gamestore import load_game
from tests.harness.waiting import wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def svc(pg_migrated_url: str, tmp_path: Path) -> Iterator[Services]:
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": pg_migrated_url, "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "test",
    })
    services = Services.from_settings(settings)
    yield services
    services.close()


def test_a_game_loaded_after_waiting_for_its_lock_has_fresh_seats_and_players(svc: Services) -> None:
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=Rules.make("standard"),
                           seats=[SeatSpec(address=f"p{k}@players.test") for k in range(4)])
        game_id = game.id

    holder = svc.session_factory()
    holder.begin()
    held = load_game(holder, game_id)
    held.seats[2].decisions = 7
    held.seats[3].player.display_name = "Dora"
    held.reminder_hours = 5  # the game row itself (read by the locking statement)
    holder.flush()

    seen: dict[str, object] = {}

    def second_worker() -> None:
        with transaction(svc.session_factory) as session:
            loaded = load_game(session, game_id)
            seen["decisions"] = loaded.seats[2].decisions
            seen["name"] = loaded.seats[3].player.display_name
            seen["game"] = (loaded.reminder_hours, loaded.version)

    def someone_waits_for_a_lock() -> bool:
        # A fresh transaction each time: pg_stat_activity is a snapshot per transaction.
        with svc.engine.connect() as conn:
            return conn.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database()")).scalar_one() > 0

    waiting = threading.Thread(target=second_worker)
    waiting.start()
    try:
        wait_for(someone_waits_for_a_lock, timeout=10, message="the second worker to wait for the game's lock")
        holder.commit()
    finally:
        holder.close()
        waiting.join(timeout=10)
    assert not waiting.is_alive()
    assert seen == {"decisions": 7, "name": "Dora", "game": (5, held.version)}
