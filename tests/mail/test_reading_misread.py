"""What players write that was misread: a card with a typo (echoed, with the card it is close to),
cards written apart ("q s", "10 h"), and a card written in the Subject of an empty reply."""

from __future__ import annotations

import dataclasses
import html

import pytest

from pbem.mail.reading import Help, Pass, Play, Queue, Say, Unreadable, Vacation, parse_command
from pbem.mail.reading.commands import suggest_card
from pbem.mail.reading.subject import subject_text
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts
from pbem.resources import templates_dir


# -- typos: echoed, with a suggestion -----------------------------------------------------------------
@pytest.mark.parametrize(("text", "language", "card"), [
    ("jak of hearts", "en", "JH"),
    ("qeen of spdes", "en", "QS"),
    ("the kinf of harts please", "en", "KH"),
    ("dama de espdas", "pt", "QS"),
    ("valete de cpas", "pt", "JH"),
    ("popa de pcia", "ro", "KS"),
    ("jak of hearts", None, "JH"),     # the player's language unknown: every language's words
    ("valete de cpas", "en", "JH"),    # a word of another language than the player's
])
def test_a_card_name_with_a_typo_is_echoed_with_the_card_it_is_close_to(text: str, language: str | None,
                                                                         card: str) -> None:
    command = parse_command(text, language, expected="play")
    assert command == Unreadable("DID_YOU_MEAN", {"word": text, "suggestion": card})


@pytest.mark.parametrize("text", [
    "jak",                        # no suit: no card to suggest
    "I am not sure",
    "see you at 10h",
    "nice one",
    "good game everyone",
    "hepl",
])
def test_no_suggestion_for_words_that_are_no_card_name(text: str) -> None:
    command = parse_command(text, "en", expected="play")
    assert isinstance(command, Unreadable) and command.reason in ("UNKNOWN_WORD", "NO_COMMAND")


def test_no_suggestion_where_cards_mean_nothing() -> None:
    assert parse_command("jak of hearts", "en", expected="moon").reason == "NO_COMMAND"
    assert parse_command("jak of hearts", "en", expected="invitation").reason != "DID_YOU_MEAN"


def test_a_suggestion_is_read_only_from_short_first_lines() -> None:
    assert suggest_card(["hello", "jak of hearts"], "en") == ("jak of hearts", "JH")
    assert suggest_card(["a", "b", "c", "jak of hearts"], "en") is None
    assert suggest_card(["jak of hearts " + "x " * 40], "en") is None


def test_a_suggestion_names_only_a_card_the_reply_may_name() -> None:
    """README, "Playing by mail": the hint names a card of the decision's X-Hearts-Legal (to pass,
    the hand), never one the player does not hold or may not play."""
    assert parse_command("qeen of spades", "en", expected="play", suggest_from=("QS", "2C")) == Unreadable(
        "DID_YOU_MEAN", {"word": "qeen of spades", "suggestion": "QS"})
    command = parse_command("qeen of spades", "en", expected="play", suggest_from=("2C", "JH"))
    assert isinstance(command, Unreadable) and command.reason != "DID_YOU_MEAN", command
    command = parse_command("dama de espdas", "pt", expected="pass", suggest_from=())
    assert isinstance(command, Unreadable) and command.reason != "DID_YOU_MEAN", command
    assert suggest_card(["jak of hearts"], "en", among=("JS",)) is None


# -- cards written apart ----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected", "command"), [
    ("q s", "play", Play("QS")),
    ("Q S", "play", Play("QS")),
    ("10 h", "play", Play("TH")),
    ("k d please", "play", Play("KD")),
    ("play a s", "play", Play("AS")),
    ("pass 2 c 3 c 4 c", "pass", Pass(("2C", "3C", "4C"))),
    ("queue q s a h", "play", Queue(("QS", "AH"))),
])
def test_a_rank_and_suit_written_apart_are_a_card_on_a_card_line(text: str, expected: str, command: object) -> None:
    assert parse_command(text, expected=expected) == command


@pytest.mark.parametrize(("text", "command"), [
    ("see you at 10 h", Unreadable("NO_COMMAND", {"expected": "play"})),   # ten hours, in a sentence
    ("I think Q S is best", Unreadable("NO_COMMAND", {"expected": "play"})),
    ("help", Help()),
    ("say q s", Say("q s")),                # talk stays talk
    ("vacation 2 d", Vacation("2 d")),      # a command's argument is not a card
    ("QS\nsee you at 10 h", Play("QS")),
])
def test_spaced_forms_do_not_steal_other_words_or_commands(text: str, command: object) -> None:
    assert parse_command(text, expected="play") == command


# -- the subject --------------------------------------------------------------------------------------
OURS = ("[Hearts #42] Friday table", "Friday table")


@pytest.mark.parametrize(("subject", "text"), [
    ("QS", "QS"),
    ("Re: QS", "QS"),
    ("Re: [Hearts #42] Friday table QS", "QS"),
    ("AW: [Hearts #42] Friday table - q s", "q s"),
    ("Re[2]: RE: SV: [Hearts #42] Friday table", ""),
    ("RES: Re: [Copas #42] Mesa de sexta 10 h", "Mesa de sexta 10 h"),  # a title not ours is kept
    ("Odp: R: Antw: TR: WG: Fwd: KD", "KD"),
    ("Re : KD", "KD"),
    ("RE (3): [Inimi #7] damă de pică", "damă de pică"),
    ("回复: QS", "QS"),
    ("QS Re: [Hearts #42] Friday table", "QS"),
])
def test_the_players_words_in_a_subject(subject: str, text: str) -> None:
    assert subject_text(subject, OURS) == text


@pytest.mark.parametrize(("language", "sentence"), [
    ("en", "Your last mail had no new text, so I read your move from its subject: “q s”."),
    ("pt", "A sua última mensagem não tinha texto novo, por isso li a sua jogada no assunto: “q s”."),
    ("ro", "Ultimul dumneavoastră mesaj nu avea text nou, așa că am citit mutarea din subiectul lui: „q s”."),
])
def test_a_mail_after_a_move_read_from_the_subject_says_so(language: str, sentence: str) -> None:
    """``GameContext.read_from_subject`` (set by the services for the first mail to that player)."""
    renderer = MailRenderer(templates_dir())
    for ctx in sample_contexts(language)["your_turn"][:1]:
        plain = renderer.render(dataclasses.replace(ctx, game=dataclasses.replace(ctx.game, read_from_subject="q s")))
        assert sentence in " ".join(plain.text.split())
        assert html.escape(sentence, quote=False) in " ".join(plain.html.split())
        assert sentence not in " ".join(renderer.render(ctx).text.split())


def test_a_typo_rejection_echoes_the_words_and_shows_how_to_write_a_card() -> None:
    renderer = MailRenderer(templates_dir())
    ctx = next(c for c in sample_contexts("en")["request_rejected"] if c.detail.code == "DID_YOU_MEAN")
    text = " ".join(renderer.render(ctx).text.split())
    assert "You wrote “jak of hearts”. Did you mean J♥?" in text
    assert "To name a card, write its rank and suit, for example “10H”, “10♥” or “ten of hearts”." in text
