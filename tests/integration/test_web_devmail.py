"""The dev mailbox pages read what ``pbem.mail.relay.DevMailbox`` wrote, and exist only
while no relay is configured (and never in production)."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.config import Settings
from pbem.mail.relay import make_relay
from pbem.web import create_app
from pbem.web.runtime import runtime


def settings_for(tmp_path: Path, **extra: str) -> Settings:
    return Settings.from_env({
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_SECRET_KEY": "dev-mailbox-secret",
        "PBEM_MAIL_DOMAIN": "hearts.test",
        **extra,
    })


def a_mail(n: int) -> bytes:
    message = EmailMessage()
    message["From"] = "Hearts <hearts@hearts.test>"
    message["To"] = "Alice <alice@example.com>"
    message["Subject"] = f"[Hearts #{n}] Your turn — Dama de espadas"
    message["Message-ID"] = f"<m{n}@hearts.test>"
    message["X-Hearts-Hand"] = "2C QS TH"
    message.set_content(f"Mail number {n}.\nYour hand: 2♣ Q♠ 10♥\n")
    message.add_alternative(
        f"<p>Mail number {n}.</p><script>alert('x')</script>"
        '<p style="color:#c0182b">10♥</p>',
        subtype="html",
    )
    return message.as_bytes()


def deliver(settings: Settings, key: int) -> None:
    make_relay(settings).deliver(a_mail(key), recipients=["alice@example.com"], key=key)


def test_dev_mailbox_lists_and_shows_mail(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    for key in (3, 12):
        deliver(settings, key)
    app = create_app(settings)
    try:
        client = app.test_client()
        listing = client.get("/dev/mail")
        assert listing.status_code == 200
        html = listing.get_data(as_text=True)
        assert "[Hearts #12] Your turn — Dama de espadas" in html
        assert "alice@example.com" in html
        assert html.index("/dev/mail/12") < html.index("/dev/mail/3")  # newest first

        page = client.get("/dev/mail/12")
        assert page.status_code == 200
        shown = page.get_data(as_text=True)
        assert "Your hand: 2♣ Q♠ 10♥" in shown  # the text part, decoded
        assert "2C QS TH" in shown  # the X-Hearts-Hand header
        assert "<iframe sandbox srcdoc=" in shown
        assert "<script>" not in shown  # the HTML part only inside the sandboxed frame
        assert "&lt;script&gt;alert(" in shown

        raw = client.get("/dev/mail/12/raw")
        assert raw.status_code == 200
        assert raw.data.startswith(b"Return-Path: <bounces@hearts.test>\r\nDelivered-To: alice@example.com\r\n")
        assert b"Message-ID: <m12@hearts.test>" in raw.data

        assert client.get("/dev/mail/99").status_code == 404
        assert client.get("/dev/mail/99/raw").status_code == 404
    finally:
        runtime(app).dispose()


def test_dev_mailbox_is_empty_before_any_mail(tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path))
    try:
        response = app.test_client().get("/dev/mail")
        assert response.status_code == 200
        assert "No mail yet." in response.get_data(as_text=True)
    finally:
        runtime(app).dispose()


@pytest.mark.parametrize(
    "extra",
    [{"PBEM_RELAY_HOST": "smtp.example.org"}, {"PBEM_ENV": "production"}],
    ids=["relay configured", "production"],
)
def test_dev_mailbox_is_hidden_when_mail_really_goes_out(tmp_path: Path, extra: dict[str, str]) -> None:
    settings = settings_for(tmp_path)
    deliver(settings, 1)  # a file is there, written earlier
    app = create_app(settings_for(tmp_path, **extra))
    try:
        client = app.test_client()
        for path in ("/dev/mail", "/dev/mail/1", "/dev/mail/1/raw"):
            assert client.get(path).status_code == 404, path
    finally:
        runtime(app).dispose()


def a_game_mail(n: int, game: int, kind: str, first_line: str) -> bytes:
    message = EmailMessage()
    message["From"] = "Hearts <hearts@hearts.test>"
    message["To"] = "Alice <alice@example.com>"
    message["Subject"] = f"[Hearts #{game}] mail {n}"
    message["Message-ID"] = f"<g{n}@hearts.test>"
    message["X-Hearts-Kind"] = kind
    message["X-Hearts-Game"] = str(game)
    message.set_content(f"\n{first_line}\nThe rest of mail {n}.\n")
    return message.as_bytes()


def test_dev_mailbox_filters_by_game_and_kind_and_shows_kind_and_first_line(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    relay = make_relay(settings)
    mails = [(1, 7, "your_turn", "Alice, it is your turn to play."), (2, 7, "hand_summary", "Hand 1 is over."),
             (3, 8, "your_turn", "Bob, it is your turn to pass.")]
    for key, game, kind, line in mails:
        relay.deliver(a_game_mail(key, game, kind, line), recipients=["alice@example.com"], key=key)
    app = create_app(settings)
    try:
        client = app.test_client()
        html = client.get("/dev/mail").get_data(as_text=True)
        for _key, _game, kind, line in mails:
            assert kind in html and line in html
        assert "/dev/mail?game=7" in html and "/dev/mail?kind=your_turn" in html

        def listed(query: str) -> list[int]:
            page = client.get(f"/dev/mail?{query}").get_data(as_text=True)
            return [key for key, *_ in mails if f"/dev/mail/{key}\"" in page]

        assert listed("game=7") == [1, 2]
        assert listed("kind=your_turn") == [1, 3]
        assert listed("game=7&kind=your_turn") == [1]
        assert listed("game=9") == []
        assert "No mail of this game and kind." in client.get("/dev/mail?game=9").get_data(as_text=True)
    finally:
        runtime(app).dispose()
