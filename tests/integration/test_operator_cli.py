"""The operator's view (README, "Operating pbem"): ``pbem game list``, ``pbem mail list|show|retry`` and
``pbem player export|forget``, run through click's runner against the test's database (SQLite and
PostgreSQL); a retried mail is processed again by the real pipeline: the worker's own services in
this process, and a real Celery worker on Redis sending to an SMTP sink."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner, Result
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from pbem.cli import main
from pbem.db.models import (Base, InboundMessage, InboundStatus, MailRetry, OutboundMessage, OutboundStatus, Player,
                            TableTalk)
from pbem.db.session import transaction
from pbem.services import inbound
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.game_views import build_replay, seat_page
from pbem.services.inbound import MAX_ATTEMPTS, apply_inbound, begin_attempt, process_inbound
from pbem.services.intake import store_inbound
from pbem.services.outbox import RetryPolicy, send_outbound
from pbem.services.privacy import FORGOTTEN_RECIPIENT
from tests.harness.celery_worker import CeleryWorker
from tests.harness.ports import free_port
from tests.harness.smtp_sink import SmtpSink
from tests.harness.waiting import wait_for
from tests.integration.mailplay import DOMAIN, address, answer, make_services, new_game

SECRET = "test-secret-key"
REDIS_DB = 6  # this module's own database on the shared test Redis
NOW = datetime.now(UTC)
HOSTILE_SUBJECT = "\x1b[2J\x1b]0;owned\x07Hello \u202eevil"
HOSTILE_BODY = "new game\nbots: 3\n\x1b[31mred\x1b[0m \x9b6n and \u202etxt\n"


def cli_env(tmp_path: Path, db_url: str, broker: str = "memory://", **extra: str) -> dict[str, str]:
    return {"PBEM_DATA_DIR": str(tmp_path), "PBEM_DATABASE_URL": db_url, "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SECRET_KEY": SECRET, "PBEM_BASE_URL": "https://hearts.test", "PBEM_BROKER_URL": broker,
            "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random", **extra}


def pbem(env: dict[str, str], *args: str, ok: bool = True) -> Result:
    result = CliRunner().invoke(main, list(args), env=env)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def services_at(db_url: str, tmp_path: Path, when: datetime) -> Services:
    svc = make_services(db_url, tmp_path)
    svc.clock = ManualClock(when)
    return svc


@pytest.fixture
def svc(db_url: str, tmp_path: Path) -> Iterator[Services]:
    services = services_at(db_url, tmp_path, NOW)
    yield services
    services.close()


def raw_mail(sender: str, to: str, body: str, message_id: str, subject: str = "Hearts?") -> bytes:
    return (f"From: Someone <{sender}>\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
            + body.replace("\n", "\r\n")).encode()


def stored(svc: Services, raw: bytes, sender: str, recipient: str) -> int:
    with transaction(svc.session_factory) as session:
        (inbound_id,) = store_inbound(session, raw=raw, mail_from=sender, recipients=[recipient], source="inject",
                                      received_at=svc.clock.now())
    return inbound_id


def set_aside(svc: Services, inbound_id: int) -> None:
    """Every attempt at the mail "dies" mid-mail (counted, never finished): the next is refused and the
    mail set aside, as the worker does."""
    for _ in range(MAX_ATTEMPTS):
        assert begin_attempt(svc, inbound_id, svc.clock.now()) is not None
    assert apply_inbound(svc, inbound_id).mails == []
    assert row_of(svc, InboundMessage, inbound_id).status is InboundStatus.FAILED


def row_of(svc: Services, model: type, row_id: int):
    with transaction(svc.session_factory) as session:
        found = session.get(model, row_id)
        session.expunge(found)
        return found


def retries_of(svc: Services, inbound_id: int) -> list[MailRetry]:
    with transaction(svc.session_factory) as session:
        found = list(session.scalars(select(MailRetry).where(MailRetry.inbound_id == inbound_id)
                                     .order_by(MailRetry.id)))
        session.expunge_all()
        return found


# -- pbem game list ----------------------------------------------------------------------------------


def test_game_list_by_status_player_and_idle_time(db_url: str, tmp_path: Path) -> None:
    old = services_at(db_url, tmp_path, NOW - timedelta(days=3))
    fresh = services_at(db_url, tmp_path, NOW)
    try:
        idle_game, _ = new_game(old, people=1, seed="idle")  # p0 and three bots, three days ago
        busy_game, _ = new_game(fresh, people=2, seed="busy")
    finally:
        old.close()
        fresh.close()
    env = cli_env(tmp_path, db_url)
    pbem(env, "game", "abort", str(busy_game))

    table = pbem(env, "game", "list").output
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["ID", "RULES", "PLAYERS", "STATUS"]
    assert [line.split()[0] for line in lines[1:]] == [str(idle_game), str(busy_game)]
    assert f"{address(0)}, bot:random" in lines[1] and "active/pass" in lines[1] and "3d" in lines[1]

    listed = json.loads(pbem(env, "game", "list", "--json").output)
    idle = listed[0]
    assert (idle["id"], idle["preset"], idle["status"], idle["phase"], idle["hand"]) == (
        idle_game, "standard", "active", "pass", 1)
    assert idle["players"] == [address(0), "bot:random", "bot:random", "bot:random"]
    assert idle["waiting_for"] == [address(0)]  # the pass waits for the person only
    assert idle["idle_seconds"] >= 3 * 86400 - 60
    assert listed[1]["status"] == "aborted" and listed[1]["waiting_for"] == []

    def ids(*args: str) -> list[int]:
        return [g["id"] for g in json.loads(pbem(env, "game", "list", "--json", *args).output)]

    assert ids("--status", "active") == [idle_game]
    assert ids("--status", "aborted", "--status", "active") == [idle_game, busy_game]
    assert ids("--player", address(1).upper()) == [busy_game]
    assert ids("--idle", "2d") == [idle_game]
    assert ids("--idle", "4d") == []
    assert ids("--idle", "1w", "--status", "active") == []
    refused = pbem(env, "game", "list", "--idle", "soon", ok=False)
    assert refused.exit_code == 2 and "--idle" in refused.output


# -- pbem mail list / show -----------------------------------------------------------------------------


def test_mail_list_puts_set_aside_mail_first_and_show_prints_nothing_raw(svc: Services, db_url: str,
                                                                         tmp_path: Path) -> None:
    to = f"new@{DOMAIN}"
    hostile = stored(svc, raw_mail("eve@e.test", to, HOSTILE_BODY, "<hostile@e.test>", HOSTILE_SUBJECT),
                     "eve@e.test", to)
    answers = process_inbound(svc, hostile)  # a stranger's new game: the invitation to her own seat
    assert row_of(svc, InboundMessage, hostile).status is InboundStatus.DONE and len(answers) == 1
    svc.clock.advance(minutes=5)
    stuck = stored(svc, raw_mail("zoe@z.test", to, "new game\nbots: 3\n", "<stuck@z.test>"), "zoe@z.test", to)
    set_aside(svc, stuck)
    env = cli_env(tmp_path, db_url)

    listing = pbem(env, "mail", "list").output
    rows = [line.split()[0] for line in listing.splitlines()[1:]]
    assert rows[0] == f"in:{stuck}"  # set aside first, then pending, then settled
    assert rows[1] == f"out:{answers[0]}" and rows[2] == f"in:{hostile}"
    assert "PROCESSING_FAILED" in listing.splitlines()[1]
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in listing
    assert "\\x1b[2J\\x1b]0;owned\\x07Hello \\u202eevil" in listing

    listed = json.loads(pbem(env, "mail", "list", "--json", "--status", "failed").output)
    assert [(m["id"], m["status"], m["attempts"], m["outcome"]) for m in listed] == [
        (f"in:{stuck}", "failed", MAX_ATTEMPTS, "PROCESSING_FAILED")]
    assert [m["id"] for m in json.loads(pbem(env, "mail", "list", "--json", "--out").output)] == [f"out:{answers[0]}"]
    assert [m["id"] for m in json.loads(pbem(env, "mail", "list", "--json", "--address", "eve@e.test").output)] \
        == [f"out:{answers[0]}", f"in:{hostile}"]
    assert json.loads(pbem(env, "mail", "list", "--json", "--status", "sent").output) == []

    shown = pbem(env, "mail", "show", f"in:{hostile}").output
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in shown
    assert "  status: done" in shown and "GAME_CREATED" in shown and f"out:{answers[0]}" in shown
    assert "Subject: \\x1b[2J\\x1b]0;owned\\x07Hello \\u202eevil" in shown
    assert "| \\x1b[31mred\\x1b[0m \\x9b6n and \\u202etxt" in shown
    detail = json.loads(pbem(env, "mail", "show", "--json", f"in:{hostile}").output)
    assert ["Message-ID", "<hostile@e.test>"] in detail["headers"] and detail["excerpt"].startswith("new game")

    failed = pbem(env, "mail", "show", f"in{stuck}").output
    assert "status: failed" in failed and f"attempts: {MAX_ATTEMPTS}" in failed and "WORKER_LOST" in failed
    sent = pbem(env, "mail", "show", f"out:{answers[0]}").output
    assert "kind: invitation" in sent and "to: eve@e.test" in sent and "X-Hearts-Kind: invitation" in sent

    missing = pbem(env, "mail", "show", "in:999999", ok=False)
    assert missing.exit_code == 1 and "no mail in:999999" in missing.output
    unnamed = pbem(env, "mail", "show", "12", ok=False)
    assert unnamed.exit_code == 2 and "in:N" in unnamed.output


def test_a_retry_record_names_exactly_one_mail(svc: Services) -> None:
    """Migration 0008's check: a ``mail_retries`` row is of a received mail or of a sent one."""
    inbound_id = stored(svc, raw_mail("zoe@z.test", f"new@{DOMAIN}", "help\n", "<one@z.test>"), "zoe@z.test",
                        f"new@{DOMAIN}")
    _game, mails = new_game(svc, people=1, seed="check")
    for ids in ({}, {"inbound_id": inbound_id, "outbound_id": mails[0].id}):
        with pytest.raises(IntegrityError), transaction(svc.session_factory) as session:
            session.add(MailRetry(retried_at=svc.clock.now(), attempts=1, **ids))
    with transaction(svc.session_factory) as session:
        session.add(MailRetry(inbound_id=inbound_id, retried_at=svc.clock.now(), attempts=5))
        session.add(MailRetry(outbound_id=mails[0].id, retried_at=svc.clock.now(), attempts=10))
    assert [r.attempts for r in retries_of(svc, inbound_id)] == [5]


# -- pbem mail retry -----------------------------------------------------------------------------------


def verified_player(svc: Services) -> tuple[int, list[OutboundMessage]]:
    """p0 plays a game with three computer players (seated by the operator: verified)."""
    return new_game(svc, people=1, seed="retry")


def test_a_retried_mail_gets_a_fresh_bounded_set_of_attempts_each_time_and_is_recorded(
        svc: Services, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verified_player(svc)
    games = stored(svc, raw_mail(address(0), f"games@{DOMAIN}", "games\n", "<games@players.test>"), address(0),
                   f"games@{DOMAIN}")

    def broken(*_args: object) -> None:
        raise LookupError("a defect in a handler")

    monkeypatch.setattr(inbound, "handle", broken)  # fault injection: the handler has a bug
    for _ in range(MAX_ATTEMPTS):
        with pytest.raises(LookupError):
            apply_inbound(svc, games)
    assert row_of(svc, InboundMessage, games).status is InboundStatus.FAILED
    env = cli_env(tmp_path, db_url)

    said = pbem(env, "mail", "retry", f"in:{games}").output
    assert f"in:{games}: retry 1 recorded ({MAX_ATTEMPTS} attempts before); up to {MAX_ATTEMPTS} more" in said
    again = row_of(svc, InboundMessage, games)
    assert (again.status, again.attempts, again.attempted_at, again.processed_at) == (
        InboundStatus.PENDING, 0, None, None)
    assert again.outcome == {"code": "RETRIED", "retries": 1, "before": "PROCESSING_FAILED"}
    [first] = retries_of(svc, games)
    assert (first.attempts, first.before) == (
        MAX_ATTEMPTS, {"code": "PROCESSING_FAILED", "attempts": MAX_ATTEMPTS, "last_error": "LookupError"})
    # Still broken: the fresh set is bounded like the first, then the mail is set aside again.
    for _ in range(MAX_ATTEMPTS):
        with pytest.raises(LookupError):
            apply_inbound(svc, games)
    assert apply_inbound(svc, games).mails == []
    aside = row_of(svc, InboundMessage, games)
    assert (aside.status, aside.attempts, aside.outcome["code"]) == (InboundStatus.FAILED, MAX_ATTEMPTS,
                                                                     "PROCESSING_FAILED")

    monkeypatch.undo()  # the defect fixed: retried once more, the mail is answered
    assert "retry 2 recorded" in pbem(env, "mail", "retry", f"in:{games}").output
    answers = process_inbound(svc, games)
    done = row_of(svc, InboundMessage, games)
    assert (done.status, done.attempts, done.outcome["code"]) == (InboundStatus.DONE, 1, "GAMES")
    assert [row_of(svc, OutboundMessage, i).kind for i in answers] == ["games"]
    assert [r.attempts for r in retries_of(svc, games)] == [MAX_ATTEMPTS, MAX_ATTEMPTS]
    shown = pbem(env, "mail", "show", f"in:{games}").output
    assert shown.count("  retried: ") == 2 and "status: done" in shown
    assert "r2" in pbem(env, "mail", "list", "--in").output.splitlines()[1]

    refused = pbem(env, "mail", "retry", f"in:{games}", ok=False)
    assert refused.exit_code == 1 and "it is done, not set aside" in refused.output
    assert "no such mail" in pbem(env, "mail", "retry", "out:999999", ok=False).output
    assert len(retries_of(svc, games)) == 2


@pytest.mark.redis
def test_retried_mail_in_and_out_goes_through_a_real_worker(db_url: str, tmp_path: Path, redis_url: str,
                                                            smtp_sink: SmtpSink) -> None:
    broker = redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    client = redis.Redis.from_url(broker)
    client.flushdb()
    client.close()
    smtp_sink.clear()
    env = cli_env(tmp_path, db_url, broker, PBEM_RELAY_HOST="127.0.0.1", PBEM_RELAY_PORT=str(smtp_sink.port))
    svc = make_services(db_url, tmp_path, PBEM_RELAY_HOST="127.0.0.1", PBEM_RELAY_PORT=str(smtp_sink.port))
    svc.clock = ManualClock(datetime.now(UTC))
    try:
        _game, first_mails = verified_player(svc)
        games = stored(svc, raw_mail(address(0), f"games@{DOMAIN}", "games\n", "<games2@players.test>"),
                       address(0), f"games@{DOMAIN}")
        set_aside(svc, games)  # its worker died on every attempt
        # A mail the relay could not take (nothing listened), given up after its one attempt.
        dead = make_services(db_url, tmp_path, PBEM_RELAY_HOST="127.0.0.1", PBEM_RELAY_PORT=str(free_port()))
        dead.clock = svc.clock
        try:
            assert str(send_outbound(dead, first_mails[0].id, policy=RetryPolicy(max_attempts=1))) == "failed"
        finally:
            dead.close()
        given_up = row_of(svc, OutboundMessage, first_mails[0].id)
        assert given_up.status is OutboundStatus.FAILED and given_up.attempts == 1

        with CeleryWorker(env) as worker:
            assert "queued" in pbem(env, "mail", "retry", f"in:{games}").output
            assert "queued" in pbem(env, "mail", "retry", f"out:{first_mails[0].id}").output
            done = wait_for(lambda: (r := row_of(svc, InboundMessage, games)).status is not InboundStatus.PENDING
                            and r, timeout=60, message="the retried mail processed by the worker")
            assert (done.status, done.attempts, done.outcome["code"]) == (InboundStatus.DONE, 1, "GAMES")
            wait_for(lambda: row_of(svc, OutboundMessage, first_mails[0].id).status is OutboundStatus.SENT,
                     timeout=60, message="the retried mail to send sent")
            smtp_sink.wait_for_message(lambda m: b"X-Hearts-Kind: games\r" in m.raw, timeout=60)
            worker_log = worker.log_text()
        assert "Traceback" not in worker_log
        sent = row_of(svc, OutboundMessage, first_mails[0].id)
        assert sent.attempts == 1  # a fresh count: the first of RetryPolicy.max_attempts
        kinds = [m.raw for m in smtp_sink.messages if address(0) in m.rcpt_tos]
        assert sum(b"X-Hearts-Kind: games\r" in d for d in kinds) == 1
        assert sum(f"Message-ID: {first_mails[0].message_id}".encode() in d for d in kinds) == 1
    finally:
        svc.close()


# -- pbem player export / forget ------------------------------------------------------------------------


def finished_game(svc: Services) -> int:
    """A one-hand game of p0 and three computer players, no pass; p0 hands over to the autopilot, who
    plays the hand out: the game is over."""
    game_id, mails = new_game(svc, people=1, seed="finished", pass_cycle=["hold"], end_after_hands=1)
    turn = [m for m in mails if m.recipient == address(0)][-1]
    answer(svc, turn, "say good luck everyone\nautopilot")
    listed = json.loads(pbem(cli_env(Path(svc.settings.data_dir), svc.settings.database_url), "game", "list",
                             "--json").output)
    assert [g["status"] for g in listed if g["id"] == game_id] == ["finished"]
    return game_id


def everything_stored(svc: Services) -> str:
    """Every row of every table, as text (bytes decoded), for looking for an address or a name."""
    with transaction(svc.session_factory) as session:
        texts = []
        for table in Base.metadata.sorted_tables:
            for row in session.execute(select(table)):
                texts += [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row]
        return "\n".join(texts).lower()


def test_export_then_forget_a_player_keeps_the_finished_game_replayable(svc: Services, db_url: str,
                                                                        tmp_path: Path) -> None:
    game_id = finished_game(svc)
    current, _ = new_game(svc, people=1, seed="current")  # p0 in a game still going on
    env = cli_env(tmp_path, db_url)
    with transaction(svc.session_factory) as session:
        player_id = session.scalars(select(Player.id).where(Player.address == address(0))).one()
    before = seat_page_names(svc, game_id)
    assert before[0] == "Player 0"

    target = tmp_path / "export.json"
    pbem(env, "player", "export", address(0).upper(), "--output", str(target))
    exported = json.loads(target.read_text(encoding="ascii"))
    assert exported["player"]["display_name"] == "Player 0" and exported["address"] == address(0)
    assert [g["id"] for g in exported["games"]] == [game_id, current]
    finished = exported["games"][0]
    assert finished["seat"] == 0 and finished["status"] == "finished"
    assert [t["text"] for t in finished["table_talk"]] == ["good luck everyone"]
    assert {m["kind"] for m in finished["moves"]} >= {"play"}
    assert any("autopilot" in m["raw"] for m in exported["mails_received_from_them"])
    assert {m["kind"] for m in exported["mails_sent_to_them"]} >= {"your_turn", "game_summary"}
    assert json.loads(pbem(env, "player", "export", address(0)).output) == exported  # stdout alike
    assert "nothing is stored" in pbem(env, "player", "export", "nobody@else.test", ok=False).output

    refused = pbem(env, "player", "forget", "--yes", address(0), ok=False)
    assert refused.exit_code == 1
    assert f"still has games in progress: {current} (active)" in refused.output and "pbem game abort" in refused.output
    assert "player 0" in everything_stored(svc)  # nothing was changed
    assert pbem(env, "player", "forget", address(0), ok=False).exit_code == 1  # asked first, answered no

    pbem(env, "game", "abort", str(current))  # its game_aborted mail to p0 is not sent yet
    said = pbem(env, "player", "forget", "--yes", address(0)).output
    anonymous = f"player-{player_id}@anonymised.invalid"
    assert f"forgot {address(0)}: now {anonymous}; games kept replayable: {game_id}, {current}" in said

    stored_now = everything_stored(svc)
    assert address(0) not in stored_now and "player 0" not in stored_now and "good luck" not in stored_now
    assert anonymous in stored_now
    with transaction(svc.session_factory) as session:
        assert session.scalars(select(TableTalk)).all() == []
        to_them = session.scalars(select(OutboundMessage).where(OutboundMessage.player_id == player_id)).all()
        assert to_them and {m.recipient for m in to_them} == {anonymous} and all(m.raw == b"" for m in to_them)
        assert all(m.quoted is None for m in to_them)  # the lines kept for quote removal go with the bytes
        aborted = [m for m in to_them if m.kind == "game_aborted"]
        assert [(m.status, m.last_error) for m in aborted] == [(OutboundStatus.FAILED, FORGOTTEN_RECIPIENT)]
    # The game replays from its log, and its pages name the seat by the placeholder.
    assert "snapshot agrees" in pbem(env, "game", "check", str(game_id)).output
    assert seat_page_names(svc, game_id) == ("player-" + str(player_id), *before[1:])
    assert [g["players"][0] for g in json.loads(pbem(env, "game", "list", "--json", "--player", anonymous).output)] \
        == [anonymous, anonymous]
    assert "nothing is stored" in pbem(env, "player", "forget", "--yes", address(0), ok=False).output


def seat_page_names(svc: Services, game_id: int) -> tuple[str, ...]:
    with transaction(svc.session_factory) as session:
        page = seat_page(session, game_id=game_id, seat=1, build=build_replay)
    assert page is not None and page.page.over
    assert len(page.page.hands) == 1
    return page.page.names


def test_a_stranger_who_only_mailed_us_is_forgotten_too(svc: Services, db_url: str, tmp_path: Path) -> None:
    to = f"new@{DOMAIN}"
    inbound_id = stored(svc, raw_mail("Eve@E.test", to, "new game\nbots: three\n", "<bad@e.test>"), "Eve@E.test", to)
    answers = process_inbound(svc, inbound_id)  # answered: what was wrong (a stranger's one answer)
    assert len(answers) == 1
    waiting = stored(svc, raw_mail("eve@e.test", to, "new game\nbots: 3\n", "<later@e.test>"), "eve@e.test", to)
    env = cli_env(tmp_path, db_url)
    exported = json.loads(pbem(env, "player", "export", "eve@e.test").output)
    assert exported["player"] is None and len(exported["mails_received_from_them"]) == 2
    assert len(exported["stranger_answers"]) == 1
    said = pbem(env, "player", "forget", "--yes", "eve@e.test").output
    assert "now forgotten@anonymised.invalid" in said and "2 received and 1 sent mails emptied" in said
    assert "eve@e.test" not in everything_stored(svc)
    # The mail still waiting to be processed is not: nobody is left to answer.
    ignored = row_of(svc, InboundMessage, waiting)
    assert (ignored.status, ignored.outcome, ignored.raw) == (InboundStatus.IGNORED, {"code": "SENDER_FORGOTTEN"}, b"")
    assert process_inbound(svc, waiting) == []
