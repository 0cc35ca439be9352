"""parse_command: the new text of a reply to a command, or a refusal with a reason code."""

from __future__ import annotations

import pytest

from pbem.mail.reading.commands import (
    COMMAND_WORDS, Abort, Accept, Ambiguous, Autopilot, Decline, Games, Help, History, MoonChoice,
    NewGame, Pass, Pause, Play, Queue, Resign, Resume, Rules, Say, Status, Unreadable, Vacation,
    parse_command, table_talk,
)


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("QS", Play("QS")),
        ("qs", Play("QS")),
        ("queen of spades", Play("QS")),
        ("QS. Yes, QS", Play("QS")),  # the same card twice is one card
        ("Q♠ (the queen of spades)", Play("QS")),
        ("as", Play("AS")),
        ("10h", Play("TH")),
        ("as you wish, QS", Play("QS")),
        ("Hi all,\n\nQS\n\nBob", Play("QS")),
        ("Thanks, QS please", Play("QS")),
        ("rules are silly, QS", Play("QS")),  # "rules" is a command only alone on its line
        ("Jogo a dama de espadas", Play("QS")),
        ("às 10h jogo o ás de copas", Play("AH")),
        ("damă de pică", Play("QS")),
        ("QS\nstatus", Play("QS")),  # the first thing said wins
        ("QS and AS", Ambiguous("TWO_CARDS", {"cards": "QS AS"})),
        ("Ah, QS", Ambiguous("TWO_CARDS", {"cards": "AH QS"})),  # a line of only cards
        ("QS\nAS", Ambiguous("TWO_CARDS", {"cards": "QS AS"})),
        ("see you at 10h", Unreadable("NO_COMMAND", {"expected": "play"})),
        ("hepl", Unreadable("UNKNOWN_WORD", {"word": "hepl"})),
        ("QX", Unreadable("UNKNOWN_WORD", {"word": "QX"})),
        ("", Unreadable("EMPTY")),
        ("  \n\n ", Unreadable("EMPTY")),
        ("Hi,\n\nI'm not sure what to do.\n\nBob", Unreadable("NO_COMMAND", {"expected": "play"})),
    ],
)
def test_play(text: str, command: object) -> None:
    assert parse_command(text, expected="play") == command


@pytest.mark.parametrize(
    ("text", "count", "command"),
    [
        ("2C 3C 4C", 3, Pass(("2C", "3C", "4C"))),
        ("pass: 4c, 3c and 2c", 3, Pass(("4C", "3C", "2C"))),  # in the order written
        ("- 2C\n- 3C\n- 4C", 3, Pass(("2C", "3C", "4C"))),
        ("as, ks, qs", 3, Pass(("AS", "KS", "QS"))),
        ("Passo o dois de paus, o três de paus e o valete de ouros", 3, Pass(("2C", "3C", "JD"))),
        ("dau: 2♣ 3♣ 4♣", 3, Pass(("2C", "3C", "4C"))),
        ("2C 3C 3C 4C", 3, Pass(("2C", "3C", "4C"))),  # a repeat is not a fourth card
        ("QS AS", 2, Pass(("QS", "AS"))),
        ("QS", 1, Pass(("QS",))),
        ("2C 3C", 3, Unreadable("WRONG_CARD_COUNT", {"expected": "3", "found": "2", "cards": "2C 3C"})),
        ("2C 3C 4C 5C", 3, Unreadable("WRONG_CARD_COUNT", {"expected": "3", "found": "4", "cards": "2C 3C 4C 5C"})),
        ("QS", 3, Unreadable("WRONG_CARD_COUNT", {"expected": "3", "found": "1", "cards": "QS"})),
        ("help", 3, Help()),
    ],
)
def test_pass(text: str, count: int, command: object) -> None:
    assert parse_command(text, expected="pass", pass_count=count) == command


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("QS", Play("QS")),
        ("2C 3C 4C", Pass(("2C", "3C", "4C"))),
        ("2C 3C", Ambiguous("TWO_CARDS", {"cards": "2C 3C"})),
        ("old moon", MoonChoice("old")),
        ("lua nova", MoonChoice("new")),
        ("old", Unreadable("UNKNOWN_WORD", {"word": "old"})),  # only when the moon was asked
    ],
)
def test_nothing_expected(text: str, command: object) -> None:
    assert parse_command(text) == command


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("old", MoonChoice("old")),
        ("New moon, please!", MoonChoice("new")),
        ("nova", MoonChoice("new")),
        ("lua velha", MoonChoice("old")),
        ("veche", MoonChoice("old")),
        ("nouă", MoonChoice("new")),
        ("old\nnew", Ambiguous("BOTH_MOON_CHOICES")),
        ("QS", Unreadable("NO_COMMAND", {"expected": "moon"})),
        ("status", Status()),
    ],
)
def test_moon(text: str, command: object) -> None:
    assert parse_command(text, expected="moon") == command


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("yes", Accept()), ("Yes!", Accept()), ("sim", Accept()), ("da", Accept()), ("accept", Accept()),
        ("Count me in!", Accept()), ("aceito", Accept()), ("no", Decline()), ("Não.", Decline()),
        ("nu", Decline()), ("no thanks", Decline()), ("decline", Decline()), ("recuso", Decline()),
        ("yes\nno", Ambiguous("CONFLICTING_COMMANDS", {"commands": "accept decline"})),
    ],
)
def test_invitation(text: str, command: object) -> None:
    assert parse_command(text, expected="invitation") == command


def test_yes_and_no_mean_nothing_outside_invitations() -> None:
    assert parse_command("yes", expected="play") == Unreadable("UNKNOWN_WORD", {"word": "yes"})
    assert parse_command("accept") == Accept()


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("help", Help()), ("Help!", Help()), ("?", Help()), ("help me please", Help()),
        ("ajuda", Help()), ("Ajutor!", Help()),
        ("status", Status()), ("status?", Status()), ("please send my hand again", Status()),
        ("estado, por favor", Status()), ("stare", Status()), ("Situação", Status()),
        ("games", Games()), ("my games", Games()), ("jogos", Games()), ("jocurile mele", Games()),
        ("rules", Rules()), ("what are the rules?", Rules()), ("quais são as regras?", Rules()),
        ("reguli, te rog", Rules()),
        ("resign", Resign()), ("I resign.", Resign()), ("give up", Resign()), ("Desisto.", Resign()),
        ("renunț", Resign()), ("Renunt", Resign()), ("mă retrag", Resign()),
        ("history", History()), ("histórico", History()), ("autopilot", Autopilot()),
        ("piloto automático", Autopilot()), ("pause", Pause()), ("resume", Resume()),
        ("abort", Abort()), ("anulează jocul", Abort()),
        ("HELP", Help()), ("hElP", Help()),
    ],
)
def test_command_words(text: str, command: object) -> None:
    assert parse_command(text, expected="play") == command


@pytest.mark.parametrize(
    "text",
    ["I need help with the rules of this stupid game", "resign? never!", "my status is great",
     "Help is on the way"],
)
def test_command_words_in_a_sentence_are_not_commands(text: str) -> None:
    assert isinstance(parse_command(text, expected="play"), Unreadable)


def test_irreversible_commands_never_share_a_reply() -> None:
    assert parse_command("QS\nresign", expected="play") == Ambiguous(
        "CONFLICTING_COMMANDS", {"commands": "resign", "cards": "QS"}
    )
    assert parse_command("help\nresign") == Ambiguous("CONFLICTING_COMMANDS", {"commands": "help resign"})
    # harmless ones: the first wins
    assert parse_command("help\nQS AS", expected="play") == Help()
    assert parse_command("status\nhelp") == Status()


def test_table_talk_is_never_a_card() -> None:
    assert parse_command("say nice QS, Bob!", expected="play") == Say("nice QS, Bob!")
    assert parse_command("say good luck!\nQS", expected="play") == Play("QS")
    assert parse_command("QS\ndiz: boa sorte a todos", expected="play") == Play("QS")
    assert table_talk("say good luck!\nQS\nspune: noroc") == "good luck!\nnoroc"
    assert table_talk("QS") is None


def test_later_commands() -> None:
    assert parse_command("vacation until 2024-07-01") == Vacation("2024-07-01")
    assert parse_command("férias até 10 de julho") == Vacation("10 de julho")
    assert parse_command("concediu până la 1 iulie") == Vacation("1 iulie")
    # planned ahead: from a date until another
    assert parse_command("vacation from 20 December until 3 January") == Vacation("3 January", "20 December")
    assert parse_command("férias de 20 de dezembro até 3 de janeiro") == Vacation("3 de janeiro", "20 de dezembro")
    assert parse_command("concediu de la 20 decembrie până la 3 ianuarie") == Vacation("3 ianuarie", "20 decembrie")
    assert parse_command("holiday from July 1st to July 15th") == Vacation("July 15th", "July 1st")
    assert parse_command("vacation for 2 weeks") == Vacation("for 2 weeks")  # no "from": it starts now
    assert parse_command("queue QS, AS, then 2C") == Queue(("QS", "AS", "2C"))
    assert parse_command("fila: dama de espadas, ás de copas") == Queue(("QS", "AH"))


def test_new_game() -> None:
    text = (
        "Let's play!\n\nplayers: carol@example.org, Dave <Dave@Example.NET>\nrules: omnibus\n"
        "target: 50\nbots: 1\n"
    )
    assert parse_command(text, expected="new_game") == NewGame(
        ("carol@example.org", "dave@example.net"), {"rules": "omnibus", "target": "50", "bots": "1"}
    )
    assert parse_command("new game with a@x.org and b@y.org\nmoon: new") == NewGame(
        ("a@x.org", "b@y.org"), {"moon": "new"}
    )
    assert parse_command("jogadores: a@x.pt\nregras: omnibus\nalvo: 50", expected="new_game") == NewGame(
        ("a@x.pt",), {"rules": "omnibus", "target": "50"}
    )
    assert parse_command("joc nou cu a@x.ro\nreguli: classic\nroboți: 2") == NewGame(
        ("a@x.ro",), {"rules": "classic", "bots": "2"}
    )
    assert parse_command("rules: omnibus", expected="new_game") == Unreadable("NO_PLAYERS")
    # the sender alone against computer players: nobody else is named
    assert parse_command("new game\nbots: 3\ntarget: 20", expected="new_game") == NewGame(
        (), {"bots": "3", "target": "20"}
    )


def test_language_hint_changes_nothing() -> None:
    for hint in (None, "en", "pt", "ro"):
        assert parse_command("as", hint, expected="play") == Play("AS")
        assert parse_command("ajuda", hint) == Help()


def test_command_word_table_has_no_clashes_between_commands() -> None:
    seen: dict[str, str] = {}
    for command, by_language in COMMAND_WORDS.items():
        assert set(by_language) == {"en", "pt", "ro"}, command
        for phrases in by_language.values():
            for phrase in phrases:
                assert seen.setdefault(phrase.lower(), command) == command, phrase
