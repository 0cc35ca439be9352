"""Reading the commands of playing ahead and notification choices (README, "Playing ahead" and "Notifications")."""

from __future__ import annotations

import pytest

from pbem.mail.reading.commands import Autopilot, Notify, Play, Queue, Say, parse_command, table_talk


@pytest.mark.parametrize(("text", "command"), [
    ("queue QS AH 2C", Queue(("QS", "AH", "2C"))),
    ("queue clear", Queue((), clear=True)),
    ("fila: limpar", Queue((), clear=True)),
    ("coadă goleste", Queue((), clear=True)),
    ("queue the moon", Queue(())),
    ("autopilot", Autopilot()),
    ("autopilot on", Autopilot()),
    ("autopilot off", Autopilot(on=False)),
    ("please autopilot off", Autopilot(on=False)),
    ("piloto automático desligado", Autopilot(on=False)),
    ("pilot automat oprit", Autopilot(on=False)),
    ("notify every card", Notify("every_card")),
    ("notify turn and trick", Notify("turn_and_trick")),
    ("notify digest", Notify("digest")),
    ("notify turn only", Notify("turn_only")),
    ("notify off", Notify("turn_only")),
    ("notify digest everywhere", Notify("digest", everywhere=True)),
    ("notify digest in every game", Notify("digest", everywhere=True)),
    ("notificações: resumo diário", Notify("digest")),
    ("notificar cada carta em todos os jogos", Notify("every_card", everywhere=True)),
    ("notificări zilnic peste tot", Notify("digest", everywhere=True)),
    ("notificări doar rândul meu", Notify("turn_only")),
    ("notify", Notify(None)),
    ("notify whenever", Notify(None)),
])
def test_commands(text: str, command: object) -> None:
    assert parse_command(text, expected="play") == command


def test_a_say_line_rides_along_with_a_card() -> None:
    reply = "say well played, Ana\nQS"
    assert parse_command(reply, expected="play") == Play("QS")
    assert table_talk(reply) == "well played, Ana"
    assert parse_command("say hello all", expected=None) == Say("hello all")
