"""Times in mails name their zone compactly, as an offset from UTC ("Fri, May 17, 2024, 7:30 PM
UTC+1"): the zone's full name ("(Coordinated Universal Time)") is never repeated after each time."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from pbem.mail.i18n import LANGUAGES
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"

#: CLDR's long names of the sample readers' zones (Lisbon, UTC) in en, pt and ro.
LONG_NAMES = (
    "Coordinated Universal Time", "European Summer Time", "European Standard Time",
    "Horário Universal Coordenado", "Horário de Verão", "Horário Padrão",
    "Timpul universal coordonat", "Ora de vară", "Ora standard",
)


@pytest.fixture(scope="module")
def renderer() -> MailRenderer:
    return MailRenderer(TEMPLATES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_mail_spells_out_a_zone_name(renderer: MailRenderer, language: str) -> None:
    timed = 0
    for kind, contexts in sample_contexts(language).items():
        for ctx in contexts:
            for zone in ("Europe/Lisbon", "UTC"):
                mail = renderer.render(replace(ctx, recipient=replace(ctx.recipient, timezone=zone)))
                for part in (mail.text, mail.html):
                    assert not [name for name in LONG_NAMES if name in part], (kind, zone)
                timed += "UTC" in mail.text
    assert timed > 10  # deadlines, reminders, vacations, absences: their times still say the zone


@pytest.mark.parametrize(
    ("language", "zone", "expected"),
    [
        ("en", "UTC", "Fri, May 17, 2024, 6:30\u202fPM UTC"),
        ("en", "Europe/Lisbon", "Fri, May 17, 2024, 7:30\u202fPM UTC+1"),
        ("en", "America/Sao_Paulo", "Fri, May 17, 2024, 3:30\u202fPM UTC-3"),
        ("en", "Asia/Kolkata", "Sat, May 18, 2024, 12:00\u202fAM UTC+5:30"),
        ("pt", "UTC", "18:30 UTC"),
        ("ro", "Europe/Bucharest", "21:30 UTC+3"),
    ],
)
def test_a_deadline_says_its_zone_once_as_an_offset(
    renderer: MailRenderer, language: str, zone: str, expected: str
) -> None:
    ctx = sample_contexts(language)["your_turn"][0]  # deadline 18:30 UTC on 17 May 2024
    text = renderer.render(replace(ctx, recipient=replace(ctx.recipient, timezone=zone))).text
    text = re.sub(r" *\r?\n *", " ", text)  # a sentence may be wrapped (the no-break spaces stay)
    assert expected in text
    assert text.count("UTC") == 1
