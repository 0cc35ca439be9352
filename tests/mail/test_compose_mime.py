"""The composer's bytes, parsed back with the standard library's strict parser."""

from __future__ import annotations

import email
import re
from datetime import datetime, timezone
from email import policy
from email.header import decode_header, make_header
from email.utils import parseaddr, parsedate_to_datetime
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from pbem.mail.addresses import make_reply_address, parse_reply_address
from pbem.mail.compose import ComposedMail, MailComposer, bench, canonical_cards
from pbem.mail.context import MailContext, Recipient, Status, TrickDone, YourTurn
from pbem.mail.i18n import LANGUAGES
from pbem.mail.samples import sample_contexts, sample_game

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
DOMAIN = "hearts.example.org"
ROOT_ID = "<game-42-root@hearts.example.org>"
FIXED = datetime(2024, 5, 17, 18, 30, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain=DOMAIN, clock=lambda: FIXED)


def _parse(mail: ComposedMail):
    return email.message_from_bytes(mail.raw, policy=policy.default)


def _parts(message):
    """The text and HTML parts; an HTML part with inline images sits in multipart/related."""
    assert message.get_content_type() == "multipart/alternative"
    parts = list(message.iter_parts())
    if parts[-1].get_content_type() == "multipart/related":
        related = list(parts[-1].iter_parts())
        assert related[0].get_content_type() == "text/html"
        assert all(p.get_content_type().startswith("image/") and p["Content-ID"] for p in related[1:])
        parts[-1] = related[0]
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    return parts


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n")


def test_headers_and_parts_round_trip(composer) -> None:
    context = sample_contexts("ro")["your_turn"][0]
    rendered = composer.render(context)
    mail = composer.compose("your_turn", context, thread=ROOT_ID)
    message = _parse(mail)

    assert message["Subject"] == rendered.subject == "[Inimi #42] Friday table"
    assert message["From"].addresses[0].display_name == "Inimi"
    assert message["From"].addresses[0].addr_spec == f"hearts@{DOMAIN}"
    assert message["To"].addresses[0].display_name == "João Brandão"
    assert message["To"].addresses[0].addr_spec == "joao@example.pt"
    assert mail.recipient == "joao@example.pt"
    assert message["Reply-To"] == context.game.reply_address
    assert parsedate_to_datetime(message["Date"]) == FIXED
    assert message["Message-ID"] == mail.message_id
    assert mail.message_id.endswith(f"@{DOMAIN}>")
    assert message["In-Reply-To"] == ROOT_ID
    assert message["References"] == ROOT_ID
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["X-Auto-Response-Suppress"] == "All"
    assert message["Content-Language"] == "ro"
    assert message["X-Hearts-Kind"] == "your_turn"
    assert message["X-Hearts-Game"] == "42"
    assert message["X-Hearts-Seat"] == "1"
    assert message["X-Hearts-Phase"] == "play"
    assert message["X-Hearts-Hand"] == "3C 9C AD 2H TH JH 4S KS AS"
    assert message["X-Hearts-Decision"] == "play"
    assert message["X-Hearts-Legal"] == "4S KS AS"
    assert message["MIME-Version"] == "1.0"

    text, html = _parts(message)
    assert text.get_content_charset() == "utf-8" and html.get_content_charset() == "utf-8"
    assert text["Content-Transfer-Encoding"] == "quoted-printable"
    assert _normalise(text.get_content()) == rendered.text
    assert _normalise(html.get_content()) == rendered.html
    body = text.get_content()
    for needle in ("Mâna dumneavoastră", "Ștefan Țurcanu", "Puteți juca", "4♠", "10", "♥", "♦"):
        assert needle in body
    assert "Ștefan Țurcanu" in html.get_content() and "#c0182b" in html.get_content()


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_kind_composes_and_parses(composer, language) -> None:
    for kind, contexts in sample_contexts(language).items():
        for context in contexts:
            mail = composer.compose(kind, context, thread=ROOT_ID)
            assert mail.raw.isascii(), kind  # 7-bit clean: any relay carries it
            lines = mail.raw.split(b"\r\n")
            assert max(len(line) for line in lines) <= 78, kind
            assert b"\n" not in mail.raw.replace(b"\r\n", b""), "bare LF"
            message = _parse(mail)
            assert message.defects == [] and all(p.defects == [] for p in message.walk())
            assert message["X-Hearts-Kind"] == kind
            text, html = _parts(message)
            rendered = composer.render(context)
            assert message["Subject"] == rendered.subject
            assert _normalise(text.get_content()) == rendered.text
            assert _normalise(html.get_content()) == rendered.html
            if context.game is not None:
                assert message["X-Hearts-Game"] == str(context.game.game_id)
                assert message["X-Hearts-Seat"] == str(context.game.seat)
                assert message["X-Hearts-Phase"] == context.game.phase
                assert message["X-Hearts-Hand"] == canonical_cards(context.game.hand)
            elif context.game_id is not None:
                assert message["X-Hearts-Game"] == str(context.game_id)
                assert message["X-Hearts-Seat"] is None
            # The reading side parses with compat32: the same bytes must read the same there.
            old = email.message_from_bytes(mail.raw, policy=policy.compat32)
            plain = old.get_payload()[0].get_payload(decode=True).decode("utf-8")
            assert _normalise(plain) == rendered.text


def test_only_the_decision_mail_carries_the_decision_headers(composer) -> None:
    """One decision, one mail (README, "Playing by mail"): X-Hearts-Decision and X-Hearts-Legal are
    on every ``your_turn`` (a pass and a moon choice too) and on no other mail, not even one shown
    on the recipient's turn (``status``, a reminder, a trick done before the turn mail)."""
    me = Recipient("João", "joao@example.pt")
    mine = sample_game()
    for kind, detail in (("trick_done", TrickDone()), ("status", Status())):
        message = _parse(composer.compose(kind, MailContext(me, detail, mine)))
        assert message["X-Hearts-Legal"] is None and message["X-Hearts-Decision"] is None, kind
    message = _parse(composer.compose("your_turn", MailContext(me, YourTurn("play"), mine)))
    assert (message["X-Hearts-Decision"], message["X-Hearts-Legal"]) == ("play", "4S KS AS")
    passing = sample_game(phase="pass", to_move=None, legal=(), waiting_for=(1,), trick=(),
                          hand=("AS", "TC", "2D", "QH"))
    message = _parse(composer.compose("your_turn", MailContext(me, YourTurn("pass"), passing)))
    assert (message["X-Hearts-Decision"], message["X-Hearts-Legal"]) == ("pass", "TC 2D QH AS")
    moon = sample_game(phase="moon", to_move=None, legal=(), waiting_for=(1,), trick=())
    message = _parse(composer.compose("your_turn", MailContext(me, YourTurn("moon"), moon)))
    assert (message["X-Hearts-Decision"], message["X-Hearts-Legal"]) == ("moon", "old new")
    for kind, contexts in sample_contexts("en").items():
        for context in contexts:
            message = _parse(composer.compose(kind, context))
            assert (message["X-Hearts-Decision"] is not None) == (kind == "your_turn"), kind
            assert (message["X-Hearts-Legal"] is not None) == (kind == "your_turn"), kind


def test_message_ids_are_unique(composer) -> None:
    context = sample_contexts("en")["trick_done"][0]
    ids = {composer.compose("trick_done", context).message_id for _ in range(200)}
    assert len(ids) == 200
    other = MailComposer(TEMPLATES, domain=DOMAIN, renderer=composer.renderer)
    assert other.compose("trick_done", context).message_id not in ids


def test_thread_headers(composer) -> None:
    context = sample_contexts("en")["trick_done"][0]
    message = _parse(composer.compose("trick_done", context, thread=[ROOT_ID, "<b@x>"]))
    assert message["In-Reply-To"] == "<b@x>"
    assert message["References"].split() == [ROOT_ID, "<b@x>"]
    root = _parse(composer.compose("trick_done", context, message_id=ROOT_ID, thread=ROOT_ID))
    assert root["Message-ID"] == ROOT_ID and root["In-Reply-To"] is None
    unthreaded = _parse(composer.compose("trick_done", context))
    assert unthreaded["References"] is None


def test_reply_to_is_the_signed_address(composer) -> None:
    address = make_reply_address("secret", DOMAIN, 42, 1, 17)
    game = sample_game(reply_address=address)
    message = _parse(composer.compose(
        "your_turn", MailContext(Recipient("J", "j@example.pt"), YourTurn("play"), game)))
    token = parse_reply_address("secret", DOMAIN, parseaddr(message["Reply-To"])[1])
    assert (token.game_id, token.seat, token.decision) == (42, 1, 17)
    override = _parse(composer.compose(
        "your_turn", MailContext(Recipient("J", "j@example.pt"), YourTurn("play"), game),
        reply_to="other@x.org"))
    assert override["Reply-To"] == "other@x.org"


def test_extra_headers_and_injection(composer) -> None:
    context = sample_contexts("en")["trick_done"][0]
    message = _parse(composer.compose(
        "trick_done", context,
        headers={"List-Unsubscribe": "<https://hearts.example.org/u/abc>",
                 "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}))
    assert message["List-Unsubscribe"] == "<https://hearts.example.org/u/abc>"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    with pytest.raises(ValueError):
        composer.compose("trick_done", context, headers={"X-Evil": "a\r\nBcc: victim@x.org"})
    with pytest.raises(ValueError):
        composer.compose("trick_done", context, headers={"Bad Name": "x"})
    # A line break in a subject is folded away by the renderer: no header can be injected.
    sneaky = _parse(composer.compose("trick_done", context, subject_tail="hi\nBcc: victim@x.org"))
    assert sneaky["Bcc"] is None and sneaky["Subject"] == "[Hearts #42] hi Bcc: victim@x.org"
    with pytest.raises(ValueError):
        composer.compose("trick_done", context, recipient=("Eve", "eve@x.org\r\nBcc: v@x.org"))


def test_kind_must_match_the_context(composer) -> None:
    with pytest.raises(ValueError):
        composer.compose("your_turn", sample_contexts("en")["trick_done"][0])


def test_sender_and_recipient_overrides(composer) -> None:
    context = sample_contexts("en")["trick_done"][0]
    message = _parse(composer.compose(
        "trick_done", context, sender=("Copas, the \"Game\"", "game@hearts.example.org"),
        recipient="plain@example.com"))
    assert message["From"].addresses[0].display_name == 'Copas, the "Game"'
    assert message["To"].addresses[0].addr_spec == "plain@example.com"


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                 max_size=80).filter(lambda s: s.strip()),
    tail=st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                 max_size=150).filter(lambda s: s.strip()),
)
def test_any_display_name_and_subject_survive(composer, name: str, tail: str) -> None:
    context = sample_contexts("pt")["trick_done"][0]
    context = MailContext(Recipient(name, "x@example.org", "pt"), context.detail, context.game)
    mail = composer.compose("trick_done", context, subject_tail=tail)
    message = _parse(mail)
    assert message["Subject"] == " ".join(f"[Copas #42] {tail}".split())
    expected_name = " ".join(name.split())
    # RFC 2047 readers join adjacent encoded-words; compat32 + make_header does exactly that.
    old = email.message_from_bytes(mail.raw, policy=policy.compat32)
    if expected_name.isascii():
        assert parseaddr(old["To"])[0] == expected_name
    else:
        assert str(make_header(decode_header(old["To"]))) == f"{expected_name} <x@example.org>"
    decoded = message["To"].addresses[0].display_name
    if len(expected_name.encode()) <= 45:  # one encoded-word
        assert decoded == expected_name
    else:  # policy.default puts a space between the words of a phrase (a CPython quirk)
        assert decoded.replace(" ", "") == expected_name.replace(" ", "")
    assert max(len(line) for line in mail.raw.split(b"\r\n")) <= 78


def test_long_ascii_subject_is_folded(composer) -> None:
    context = sample_contexts("en")["trick_done"][0]
    tail = "a very long title " * 10
    mail = composer.compose("trick_done", context, subject_tail=tail)
    head = mail.raw.split(b"\r\n\r\n", 1)[0].decode()
    assert all(len(line) <= 78 for line in head.split("\r\n"))
    assert _parse(mail)["Subject"] == " ".join(f"[Hearts #42] {tail}".split())


def test_bench_prints_rates(capsys) -> None:
    results = bench(20, templates_dir=TEMPLATES)
    out = capsys.readouterr().out
    assert "msgs/s" in out and "EmailMessage" in out
    assert set(results) >= {"compose (render + direct bytes)",
                            "assemble, EmailMessage (policy.default)"}
    assert all(rate > 0 for rate in results.values())


def test_boundary_cannot_occur_in_bodies(composer) -> None:
    context = sample_contexts("en")["help"][0]
    mail = composer.compose("help", context)
    boundary = re.search(rb'boundary="([^"]+)"', mail.raw).group(1)
    assert mail.raw.count(b"--" + boundary) == 3  # two parts and the close
