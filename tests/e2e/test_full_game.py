"""Four scripted players play a complete game to 100 points by mail, on the production pipeline:
SMTP to the running front, a real Redis and Celery worker, PostgreSQL, mail out through an SMTP
relay (the sink) where the players read it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from pbem.db.models import Game, GameStatus, OutboundMessage, OutboundStatus
from pbem.services.gamestore import snapshot_agrees
from tests.e2e.pipeline import Pipeline, Table, redis_db
from tests.harness.smtp_sink import SmtpSink
from tests.harness.waiting import WaitTimeout

pytestmark = pytest.mark.slow

PLAYERS = [f"player{i}@players.test" for i in range(4)]


@pytest.fixture
def arrived(smtp_sink: SmtpSink) -> Iterator[threading.Event]:
    """Set by the relay sink for every mail it receives, during the test."""
    event = threading.Event()
    smtp_sink.on_message = lambda _message: event.set()
    yield event
    smtp_sink.on_message = None


def play_to_the_end(table: Table, arrived: threading.Event, timeout: float) -> None:
    """The players answer each mail as soon as the relay has it, until every player has the game's
    summary (instead of looking at the relay's mail at intervals: a move takes a few milliseconds,
    so an interval would be most of the game's time)."""
    deadline = time.monotonic() + timeout
    while True:
        arrived.clear()  # before looking: a mail that comes after the look sets it again
        table.step()
        if table.kinds.get("game_summary", 0) == 4:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise WaitTimeout(f"timed out after {timeout}s waiting for the game to reach its end "
                              f"({table.answered} replies, {table.kinds})")
        arrived.wait(left)


def test_four_players_play_a_whole_game_to_100_by_mail(pg_migrated_url, redis_url, smtp_sink, arrived, tmp_path,
                                                       capsys):
    smtp_sink.clear()
    with Pipeline(pg_migrated_url, redis_db(redis_url, 1), smtp_sink, tmp_path) as pipeline:
        started = time.monotonic()
        out = pipeline.cli("game", "new", *[f"--player={p}" for p in PLAYERS], "--seed=e2e-full-game",
                           "--title=End to end")
        assert "started" in out
        table = Table(pipeline, PLAYERS)
        play_to_the_end(table, arrived, timeout=900)
        elapsed = time.monotonic() - started
        with pipeline.session_factory() as session:
            game = session.scalars(select(Game)).one()
            assert game.status == GameStatus.FINISHED
            assert game.snapshot["phase"] == "over"
            assert max(game.snapshot["totals"]) >= 100
            assert snapshot_agrees(session, game)
            hands = game.snapshot["hand_no"]
            unsent = session.scalars(select(OutboundMessage).where(OutboundMessage.status != OutboundStatus.SENT)).all()
            assert not unsent
        statuses = pipeline.inbound_statuses()
        assert statuses and set(statuses) == {"done"}, statuses
        assert len(statuses) == table.answered
        assert table.kinds.get("move_rejected", 0) == 0 and table.kinds.get("request_rejected", 0) == 0
        assert table.kinds["hand_summary"] == 4 * hands
        # One decision, one mail (README, "Playing by mail"), read from the bytes the relay got: the
        # game began in each first decision mail, only decision mails carry the decision headers,
        # every one of them both, and each decision (its signed reply address) had one mail.
        assert table.kinds.get("game_started", 0) == 0
        heads = [re.split(rb"\r?\n\r?\n", bytes(m.raw), maxsplit=1)[0] for m in smtp_sink.messages]
        decisions = [h for h in heads if re.search(rb"^X-Hearts-(?:Decision|Legal):", h, re.M)]
        assert all(re.search(rb"^X-Hearts-Kind: your_turn\r?$", h, re.M) for h in decisions)
        assert all(re.search(rb"^X-Hearts-Decision:", h, re.M) and re.search(rb"^X-Hearts-Legal:", h, re.M)
                   for h in decisions)
        assert len(decisions) == table.kinds["your_turn"] == table.answered
        reply_tos = [re.search(rb"^Reply-To: (.*?)\r?$", h, re.M).group(1) for h in decisions]
        assert len(set(reply_tos)) == len(reply_tos)
    with capsys.disabled():
        print(f"\n[e2e] a whole game to 100 by mail: {hands} hands, {table.answered} replies, "
              f"{len(smtp_sink.messages)} mails out, {elapsed:.1f} s")
