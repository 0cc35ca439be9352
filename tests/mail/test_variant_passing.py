"""Hand-built positions of the passing variants (RULES.md §6.3), driven through the engine, turned
into mail contexts by ``pbem.services.mailing.game_context`` and composed by the real composer in
English, Portuguese and Romanian: the dealer's call decision and its headers, the call told with the
deal, a split call's and a mix hand's pass, the pass that may be declined, a decliner's exchange;
and the replies that make those decisions, in the three languages.
"""

from __future__ import annotations

import random
from email import message_from_bytes, policy

import pytest

from pbem.engine import CallPass, Deal, DeclinePass, PassCards, Rules, apply, new_game, shuffled_deck
from pbem.mail.compose import MailComposer
from pbem.mail.context import MailContext, PassDone, Recipient, YourTurn
from pbem.mail.reading.commands import CallPass as CallCommand
from pbem.mail.reading.commands import NoPass, Pass, parse_command
from pbem.services.mailing import game_context
from tests.mail.test_variant_mails import NAMES, SVC, TEMPLATES, rows


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain="hearts.test")


def mail(composer: MailComposer, state, seat: int, detail: object, language: str = "en"):
    game, seats = rows(state)
    ctx = MailContext(recipient=Recipient(NAMES[seat], f"p{seat}@players.test", language=language),  # type: ignore[arg-type]
                      detail=detail, game=game_context(SVC, game, seats, state, seat))  # type: ignore[arg-type]
    composed = composer.compose(ctx.kind, ctx)
    message = message_from_bytes(composed.raw, policy=policy.default)
    text = " ".join(message.get_body(("plain",)).get_content().split())  # type: ignore[union-attr]
    return ctx, message, text


def header(message, name: str) -> str | None:
    value = message.get(name)
    return None if value is None else " ".join(str(value).split())


CALLING = Rules.make("standard", dealer_calls_pass=True, pass_optional=True)


def test_the_call_decision_mail_lists_the_calls_in_its_headers_and_its_text(composer) -> None:
    state = new_game(CALLING)
    assert state.phase == "call" and state.next_dealer == 3
    ctx, message, text = mail(composer, state, 3, YourTurn("call"))
    assert header(message, "X-Hearts-Decision") == "call_pass"
    assert header(message, "X-Hearts-Phase") == "call"
    legal = header(message, "X-Hearts-Legal")
    calls = [", ".join(" ".join(f"{n} {d}" if d != "mix" else d for d, n in c) for c in state.call_choices())]
    assert legal == calls[0]
    assert legal.startswith("3 left, 2 left 1 right") and legal.endswith("mix")
    assert all(len(line) <= 78 for line in message.as_string().split("\n"))
    assert "You deal hand 1: before the deal, call how the cards are passed." in text
    assert "Reply with your call, for example: 2 left 1 right" in text
    _, _, pt = mail(composer, state, 3, YourTurn("call"), "pt")
    assert "Responda com a sua escolha, por exemplo: 2 esquerda 1 direita" in pt
    assert "“misturar”" in pt and "“3 frente”" in pt
    _, _, ro = mail(composer, state, 3, YourTurn("call"), "ro")
    assert "de exemplu: 2 stânga 1 dreapta" in ro
    assert "„amestec”" in ro and "„3 în față”" in ro
    # Only the dealer is asked: another seat's context has no calls.
    assert mail(composer, state, 0, PassDone())[0].game.call_choices == ()


def test_the_call_is_told_with_the_deal_and_a_split_pass_says_which_cards_go_where(composer) -> None:
    state, _ = apply(new_game(CALLING), CallPass(3, (("left", 2), ("right", 1))))
    state, _ = apply(state, Deal(shuffled_deck(CALLING, random.Random(2))))
    assert state.pass_direction == "split"
    ctx, message, text = mail(composer, state, 0, YourTurn("pass"))
    assert "Dinu called “2 left 1 right” for this hand." in text
    assert ("Pass 3 cards, in the order you write them: the first 2 to the left, to Bruno; "
            "the last 1 to the right, to Dinu.") in text
    assert header(message, "X-Hearts-Decline") == "no pass"
    assert "Or reply “no pass” to keep your hand" in text
    _, _, own = mail(composer, state, 3, YourTurn("pass"))
    assert "You called “2 left 1 right” for this hand." in own
    _, pt_message, pt = mail(composer, state, 0, YourTurn("pass"), "pt")
    assert "Dinu escolheu “2 esquerda 1 direita” para esta mão." in pt
    assert "Ou responda “não passo” para ficar com a sua mão" in pt
    assert header(pt_message, "X-Hearts-Decline") == "no pass"  # headers stay in English
    _, _, ro = mail(composer, state, 0, YourTurn("pass"), "ro")
    assert "Dinu a ales „2 stânga 1 dreapta” pentru această mână." in ro
    assert "Sau răspundeți „nu dau”" in ro


def test_a_decliner_is_told_they_kept_their_hand_and_never_named_a_forwarded_card(composer) -> None:
    rules = Rules.make("standard", pass_optional=True)
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(5)))
    hand = state.hand(1)
    passed_to_1 = state.hand(0)[:3]
    state, _ = apply(state, PassCards(0, tuple(passed_to_1)))  # to the left: seat 1, who declines
    state, _ = apply(state, DeclinePass(1))
    _, _, noted = mail(composer, state, 1, PassDone())
    assert "You declined the pass: you keep your hand, and you will receive no cards." in noted
    state, _ = apply(state, PassCards(2, tuple(state.hand(2)[:3])))
    state, _ = apply(state, PassCards(3, tuple(state.hand(3)[:3])))
    assert state.phase == "play" and sorted(state.hand(1)) == sorted(hand)
    ctx, message, text = mail(composer, state, 1, YourTurn("play", exchange=True))
    assert ctx.game.declined and ctx.game.received == ()
    assert "You declined the pass: you kept your hand and received no cards." in text
    assert "You received" not in text
    assert not any(c in header(message, "X-Hearts-Hand").split() for c in passed_to_1)
    # The packet went on to seat 2, who is told what they received (not from whom).
    _, _, other = mail(composer, state, 2, YourTurn("play", exchange=True) if state.to_move == 2 else PassDone())
    assert "declined" not in other
    _, _, pt = mail(composer, state, 1, YourTurn("play", exchange=True), "pt")
    assert "Recusou passar: ficou com a sua mão e não recebeu cartas." in pt


def test_a_mix_hand_pass(composer) -> None:
    rules = Rules.make("standard", pass_cycle=["mix"], pass_optional=True)
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(6)))
    ctx, message, text = mail(composer, state, 0, YourTurn("pass"))
    assert not ctx.game.may_decline and header(message, "X-Hearts-Decline") is None
    assert text.startswith("Pass 3 cards to the middle (mix)")
    assert "Hand 1, a mix hand." in text
    assert "every player's cards in the middle are shuffled and dealt back, 3 to each player." in text
    _, _, ro = mail(composer, state, 0, YourTurn("pass"), "ro")
    assert "sunt amestecate și împărțite din nou, câte 3 fiecăruia." in ro


@pytest.mark.parametrize(("reply", "call"), [
    ("2 left 1 right", (("left", 2), ("right", 1))),
    ("3 across", (("across", 3),)),
    ("mix", (("mix", 3),)),
    ("Mix, please", (("mix", 3),)),
    ("2 to the left and 1 to the right", (("left", 2), ("right", 1))),
    ("2 esquerda 1 direita", (("left", 2), ("right", 1))),
    ("3 frente", (("across", 3),)),
    ("misturar", (("mix", 3),)),
    ("2 stânga 1 dreapta", (("left", 2), ("right", 1))),
    ("3 în față", (("across", 3),)),
    ("amestec", (("mix", 3),)),
    ("left", (("left", 3),)),
])
def test_call_replies_in_three_languages(reply: str, call) -> None:
    assert parse_command(reply, expected="call") == CallCommand(call)


def test_a_call_word_means_nothing_when_no_call_is_asked() -> None:
    assert not isinstance(parse_command("2 left 1 right", expected="play"), CallCommand)
    assert not isinstance(parse_command("status", expected="call"), CallCommand)


@pytest.mark.parametrize("reply", ["no pass", "No pass, thanks", "não passo", "nao passo", "nu dau", "Nu dau nimic"])
def test_declining_replies_in_three_languages(reply: str) -> None:
    assert parse_command(reply, expected="pass") == NoPass()


def test_cards_are_still_a_pass_when_declining_is_allowed() -> None:
    assert parse_command("QS AH KH", expected="pass") == Pass(("QS", "AH", "KH"))


def test_the_help_mail_says_how_to_call_and_how_to_decline(composer) -> None:
    from pbem.mail.samples import sample_contexts

    for language, call, decline in (("en", "2 left 1 right, 3 across, mix.", "reply “no pass”"),
                                    ("pt", "2 esquerda 1 direita, 3 frente, misturar.", "responda “não passo”"),
                                    ("ro", "2 stânga 1 dreapta, 3 în față, amestec.", "răspundeți „nu dau”")):
        ctx = sample_contexts(language)["help"][0]
        message = message_from_bytes(composer.compose(ctx.kind, ctx).raw, policy=policy.default)
        text = " ".join(message.get_body(("plain",)).get_content().split())  # type: ignore[union-attr]
        assert call in text and decline in text
        for reply in (call.rstrip(".").split(", ")):
            assert isinstance(parse_command(reply, expected="call"), CallCommand)
