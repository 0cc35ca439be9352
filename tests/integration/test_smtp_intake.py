"""``store_inbound``: one row per envelope recipient, stored once, on both databases."""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from pbem.db.models import InboundMessage, InboundSource
from pbem.db.session import make_engine, make_session_factory, transaction
from pbem.services import intake
from pbem.services.intake import message_key, normalise_recipients, store_inbound

RECEIVED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RAW = b"From: ana@example.com\r\nMessage-ID: <k1@client.example>\r\nSubject: hi\r\n\r\nQS\r\n"


@pytest.fixture
def engine(db_url: str):
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def store(engine: Engine, raw: bytes = RAW, recipients: list[str] | None = None,
          source: str = "smtp") -> list[int]:
    with transaction(make_session_factory(engine)) as session:
        return store_inbound(
            session,
            raw=raw,
            mail_from=" ana@example.com ",
            recipients=recipients if recipients is not None else ["new@hearts.test"],
            source=source,
            received_at=RECEIVED,
        )


def rows(engine: Engine) -> list[tuple[str, str, str, InboundSource]]:
    with make_session_factory(engine)() as session:
        return [
            (r.message_key, r.recipient, r.mail_from, r.source)
            for r in session.scalars(select(InboundMessage).order_by(InboundMessage.id))
        ]


def test_message_key_is_the_message_id_or_a_hash_of_the_bytes() -> None:
    assert message_key(RAW) == "<k1@client.example>"
    folded = b"Message-ID:\r\n <folded@client.example>\r\nSubject: x\r\n\r\nbody\r\n"
    assert message_key(folded) == "<folded@client.example>"
    bare = b"Subject: no id\r\n\r\nbody\r\n"
    assert message_key(bare) == "sha256:" + hashlib.sha256(bare).hexdigest()
    assert message_key(b"Message-ID: \r\n\r\nbody") .startswith("sha256:")
    too_long = b"Message-ID: <" + b"x" * 1200 + b"@h>\r\n\r\nbody"
    assert message_key(too_long).startswith("sha256:")


def _parsed_key(raw: bytes) -> str:
    """The key as the standard library's header parser gives it (what ``message_key`` computed
    before it scanned the lines itself): the reference that keys of stored rows were made by."""
    value = intake._message_id_parsed(intake._header_block(raw))
    if value is not None:
        key = intake._WHITESPACE.sub("", str(value))
        if key and len(key) <= intake.MESSAGE_ID_LENGTH:
            return key
    return "sha256:" + hashlib.sha256(raw).hexdigest()


_HEADER_PIECES = [
    b"Message-ID:", b"message-id:", b"MESSAGE-ID :", b"Message-Id:", b"Message-ID", b"X-Message-ID:",
    b"Subject:", b"From ", b"From:", b":", b" ", b"\t", b"\r\n", b"\n", b"\r", b"<", b">", b"@",
    b"abc", b"x.y", b"\xc3\xa9", b"\xff", b"\x00", b"\x1c", b"\x0b", b"\x0c", b"=?utf-8?q?a?=",
]


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(_HEADER_PIECES), max_size=40), st.sampled_from([b"", b"\r\n\r\nbody", b"\n\nbody"]))
@example([b"Message-ID:", b"\r\n", b" ", b"<folded@x>", b"\r\n"], b"\r\n\r\nbody")
@example([b"Subject:", b" hi", b"\r\n", b"Message-ID:", b" <a@b>", b"\r\n", b"\t", b"<c>"], b"")
@example([b":", b" x", b"\r\n", b" ", b"Message-ID:", b"\r\n", b"Message-ID:", b"<m@x>"], b"\n\nbody")
@example([b"From ", b"me", b"\r\n", b"Message-ID:", b"<m@x>", b"\r\n"], b"\r\n\r\nbody")
@example([b"Message-ID:", b"<m@x>", b"\r", b" <n>"], b"")
@example([b"Message-ID:", b"<\xc3\xa9@x>"], b"\r\n\r\nbody")
@example([b"Message-ID:", b"<a\x1cb@x>"], b"\r\n\r\nbody")
def test_the_message_id_scan_keys_every_mail_as_the_header_parser_does(
    pieces: list[bytes], rest: bytes
) -> None:
    raw = b"".join(pieces) + rest
    assert message_key(raw) == _parsed_key(raw)


def test_the_scan_leaves_what_it_is_unsure_of_to_the_parser() -> None:
    unsure = intake._UNSURE
    assert intake._message_id_scanned(b"Message-ID: <a@b>\r\n\r\n") == "<a@b>"
    assert intake._message_id_scanned(b"Subject: x\r\n\r\n") is None
    assert intake._message_id_scanned(b"A: x\rMessage-ID: <a@b>\r\n\r\n") is unsure
    assert intake._message_id_scanned(b"From me\r\nMessage-ID: <a@b>\r\n\r\n") is unsure
    assert intake._message_id_scanned("Message-ID: <é@b>\r\n\r\n".encode()) is unsure


def test_recipients_are_normalised_and_deduplicated() -> None:
    assert normalise_recipients([" B@Hearts.Test", "a@hearts.test", "b@hearts.test", ""]) == [
        "b@hearts.test",
        "a@hearts.test",
    ]


def test_one_row_per_recipient_and_a_redelivery_stores_nothing(engine: Engine) -> None:
    first = store(engine, recipients=["New@Hearts.test", "postmaster@hearts.test", "new@hearts.test"])
    assert len(first) == 2
    assert rows(engine) == [
        ("<k1@client.example>", "new@hearts.test", "ana@example.com", InboundSource.SMTP),
        ("<k1@client.example>", "postmaster@hearts.test", "ana@example.com", InboundSource.SMTP),
    ]
    # The same mail again, by the webhook this time: nothing new.
    assert store(engine, recipients=["new@hearts.test"], source="webhook") == []
    # A recipient not seen before for this message does get its row.
    third = store(engine, recipients=["new@hearts.test", "hearts+1.0.0.x@hearts.test"])
    assert len(third) == 1 and third[0] > max(first)
    assert len(rows(engine)) == 3


def test_a_mail_without_message_id_deduplicates_by_its_bytes(engine: Engine) -> None:
    bare = b"From: ana@example.com\r\nSubject: hi\r\n\r\nQS\r\n"
    assert len(store(engine, raw=bare)) == 1
    assert store(engine, raw=bare) == []
    assert len(store(engine, raw=bare + b"again\r\n")) == 1


def test_no_recipients_stores_nothing(engine: Engine) -> None:
    assert store(engine, recipients=[]) == []
    assert rows(engine) == []


def test_an_unknown_source_is_refused(engine: Engine) -> None:
    with pytest.raises(ValueError):
        store(engine, source="carrier-pigeon")


def test_two_fronts_storing_the_same_mail_at_once_store_it_once(engine: Engine) -> None:
    """Both transactions are open at the same moment; the UNIQUE constraint with
    ON CONFLICT DO NOTHING decides (on PostgreSQL the second insert waits for the
    first commit, on SQLite BEGIN IMMEDIATE queues the writers)."""
    barrier = threading.Barrier(4)
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def front() -> None:
        try:
            barrier.wait(timeout=10)
            results.append(store(engine, recipients=["new@hearts.test", "other@hearts.test"]))
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=front) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert sorted(len(ids) for ids in results) == [0, 0, 0, 2]
    assert len(rows(engine)) == 2
