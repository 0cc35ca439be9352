"""Every message of the corpus (``tests/mail/corpus``) reads as its hand-written expectation says."""

from __future__ import annotations

import dataclasses
import email
import tomllib
from email.policy import compat32
from pathlib import Path

import pytest

from pbem.mail.reading import (
    Ambiguous, Command, MoonChoice, NewGame, Pass, Play, Unreadable, classify, extract_reply,
    parse_command, read_command, read_mail,
)
from pbem.mail.reading.charsets import decode_bytes
from pbem.mail.reading.html_text import html_to_text
from pbem.mail.reading.message import text_versions
from pbem.mail.reading.reply_text import answered_lines

CORPUS = Path(__file__).parent / "corpus"
CASES = tomllib.loads((CORPUS / "expectations.toml").read_text(encoding="utf-8"))["case"]


def describe(command: Command) -> str:
    """A command in the expectations' notation: "Play QS", "Pass 2C 3C JD", "Ambiguous TWO_CARDS QS AS"."""
    match command:
        case Play(card=card):
            return f"Play {card}"
        case Pass(cards=cards):
            return "Pass " + " ".join(cards)
        case MoonChoice(choice=choice):
            return f"Moon {choice}"
        case NewGame(players=players, options=options):
            opts = " ".join(f"{k}={v}" for k, v in sorted(options.items()))
            return f"NewGame {' '.join(players)}; {opts}"
        case Unreadable(reason=reason, details=details) | Ambiguous(reason=reason, details=details):
            extra = f" {details['cards']}" if "cards" in details else ""
            return f"{type(command).__name__} {reason}{extra}"
    return type(command).__name__


def _read(case: dict):
    raw = (CORPUS / case["file"]).read_bytes()
    envelope = case.get("envelope")
    mail = read_mail(raw, envelope)
    if envelope is None:
        mail = read_mail(raw, mail.from_address)
    return mail


def test_every_file_has_an_expectation() -> None:
    files = {p.name for p in CORPUS.glob("*.eml")}
    listed = [c["file"] for c in CASES]
    assert len(listed) == len(set(listed))
    assert files == set(listed)
    answered = {c["answers"] for c in CASES if "answers" in c}
    assert answered == {f"answered/{p.name}" for p in (CORPUS / "answered").glob("*.eml")}


def test_the_answered_mails_are_what_the_replies_answer() -> None:
    """A case's ``answers`` is the mail its In-Reply-To names (how the services find it)."""
    for case in (c for c in CASES if "answers" in c):
        ours = read_mail((CORPUS / case["answers"]).read_bytes())
        assert _read(case).in_reply_to == ours.message_id


def test_an_unlabelled_quote_is_read_as_the_players_words_without_the_mail_answered() -> None:
    """What the lines of the mail answered are for: without them the quote names many cards."""
    case = next(c for c in CASES if c["file"] == "webmail_fi_unlabelled_quote.eml")
    assert describe(read_command(_read(case), expected="play")).startswith("Ambiguous TWO_CARDS")


def _answered(case: dict) -> frozenset[str]:
    """The lines of the mail the case answers (``answers``), as the services give them."""
    if "answers" not in case:
        return frozenset()
    return answered_lines(*text_versions((CORPUS / case["answers"]).read_bytes()))


@pytest.mark.parametrize("case", [c for c in CASES if "command" in c], ids=lambda c: c["file"])
def test_reply_reads_as_expected(case: dict) -> None:
    mail = _read(case)
    assert classify(mail) is None, "a person's reply must not look automatic"
    answered = _answered(case)
    mail = dataclasses.replace(mail, answered=answered)
    command = read_command(mail, expected=case["expected"])
    assert describe(command) == case["command"]
    new_text = extract_reply(mail.text, answered=answered)
    for quoted in ("hearts.example", "#42", "wrote", "escreveu", "scris", "Sent from", "Enviado do", "Trimis de"):
        assert quoted not in new_text, "quoted mail or signature left in the reply"
    if "from" in case:
        assert mail.from_address == case["from"]
    if "subject" in case:
        assert mail.subject == case["subject"]


@pytest.mark.parametrize("case", [c for c in CASES if "verdict" in c], ids=lambda c: c["file"])
def test_automatic_mail_is_recognised(case: dict) -> None:
    verdict = classify(_read(case))
    assert verdict is not None
    assert verdict.reason == case["verdict"]
    if "failed" in case:
        assert verdict.bounce is not None
        assert list(verdict.bounce.failed_recipients) == case["failed"]
    for key in ("original_reply_to", "original_game", "original_message_id"):
        if key in case:
            assert verdict.bounce is not None
            assert getattr(verdict.bounce, key) == case[key]


def _html_alternatives() -> list[tuple[dict, str]]:
    """(case, html) for every reply that also carries an HTML part."""
    found = []
    for case in CASES:
        if "command" not in case:
            continue
        message = email.message_from_bytes((CORPUS / case["file"]).read_bytes(), policy=compat32)
        if not message.is_multipart():
            continue
        for part in message.walk():
            if part.get_content_type() == "text/html":
                payload = part.get_payload(decode=True)
                found.append((case, decode_bytes(payload, part.get_content_charset())))
    return found


@pytest.mark.parametrize(("case", "html"), _html_alternatives(), ids=lambda v: v["file"] if isinstance(v, dict) else "")
def test_html_alternative_reads_the_same(case: dict, html: str) -> None:
    """Clients that send both parts: the HTML alone (as some providers' webhooks deliver) agrees."""
    new_text = extract_reply(html_to_text(html), answered=_answered(case))
    assert describe(parse_command(new_text, expected=case["expected"])) == case["command"]
    assert "hearts.example" not in new_text and "#42" not in new_text
