"""Card notation: every reasonable way of writing a card, and the words that only look like one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.mail.notation import ALL_CARDS, STYLES, find_cards, find_mentions, fold, format_card, parse_card


@pytest.mark.parametrize(
    ("token", "card"),
    [
        ("QS", "QS"), ("qs", "QS"), ("Qs", "QS"), ("Q♠", "QS"), ("♠Q", "QS"), ("q♤", "QS"),
        ("Q ♠", "QS"), ("♠ Q", "QS"), ("Q♠\ufe0f", "QS"), ("10h", "TH"), ("10H", "TH"), ("TH", "TH"),
        ("th", "TH"), ("10♥", "TH"), ("♥10", "TH"), ("10❤", "TH"), ("2c", "2C"), ("A♦", "AD"),
        ("j♧", "JC"), ("K♡", "KH"), ("9♢", "9D"), ("QS.", "QS"), (" QS! ", "QS"),
        # English names
        ("queen of spades", "QS"), ("Queen of Spades", "QS"), ("ten of hearts", "TH"),
        ("the 2 of clubs", "2C"), ("2 of clubs", "2C"), ("10 of diamonds", "TD"),
        ("ace of spades", "AS"), ("jack of diamonds", "JD"), ("knave of hearts", "JH"),
        ("deuce of clubs", "2C"), ("king of hearts", "KH"), ("queen of  spades", "QS"),
        ("an ace of spades", "AS"), ("a queen of hearts", "QH"),
        # Portuguese
        ("dama de espadas", "QS"), ("rainha de espadas", "QS"), ("valete de ouros", "JD"),
        ("ás de copas", "AH"), ("as de copas", "AH"), ("Ás de Copas", "AH"), ("dez de copas", "TH"),
        ("dois de paus", "2C"), ("três de paus", "3C"), ("tres de paus", "3C"), ("rei de ouros", "KD"),
        ("o dois de paus", "2C"), ("a dama de espadas", "QS"), ("10 de copas", "TH"),
        # Romanian, with and without diacritics, cedilla or comma below
        ("damă de pică", "QS"), ("dama de pică", "QS"), ("dama de pica", "QS"),
        ("regină de pică", "QS"), ("as de inimă", "AH"), ("as de inimă roșie", "AH"),
        ("as de inimă roşie", "AH"), ("as de inima rosie", "AH"), ("valet de romb", "JD"),
        ("popă de treflă", "KC"), ("popa de trefla", "KC"), ("rege de caro", "KD"),
        ("zece de cupă", "TH"), ("șapte de pică", "7S"), ("şapte de pică", "7S"),
        ("doi de inimă neagră", "2S"), ("asul de pică", "AS"), ("valetul de treflă", "JC"),
        # Unicode playing cards
        ("🂡", "AS"), ("🂭", "QS"), ("🂮", "KS"), ("🂫", "JS"), ("🂪", "TS"), ("🂱", "AH"),
        ("🃁", "AD"), ("🃑", "AC"), ("🃒", "2C"), ("🃞", "KC"),
        # weak forms count when the token is the whole answer
        ("as", "AS"), ("AS", "AS"), ("ah", "AH"), ("ad", "AD"), ("ac", "AC"), ("2d", "2D"),
    ],
)
def test_parse_card(token: str, card: str) -> None:
    assert parse_card(token) == card


@pytest.mark.parametrize(
    "token",
    ["", "Q", "S", "1S", "11H", "QX", "QSK", "queen", "of spades", "QS KS", "queen of spades and KS",
     "🂬", "hello", "ás", "a"],
)
def test_parse_card_refuses(token: str) -> None:
    with pytest.raises(ValueError):
        parse_card(token)


@pytest.mark.parametrize(
    ("text", "cards"),
    [
        # strong forms count anywhere
        ("I'll play the QS now", ["QS"]),
        ("Jogo a dama de espadas, claro", ["QS"]),
        ("Joc dama de pică acum", ["QS"]),
        ("Q♠K♠", ["QS", "KS"]),
        ("♠Q♥K", ["QS", "KH"]),
        ("QS.KS", ["QS", "KS"]),
        ("QS. Yes, QS", ["QS", "QS"]),
        ("I have the 10H", ["TH"]),  # capitals in a lower-case sentence: deliberate
        # weak forms only on card lines
        ("as", ["AS"]),
        ("As", ["AS"]),
        ("pass: AS KS QS", ["AS", "KS", "QS"]),
        ("as, ks and qs", ["AS", "KS", "QS"]),
        ("my card: as", ["AS"]),
        ("1. as\n2. ks\n3. qs", ["AS", "KS", "QS"]),
        ("As, Ks, Qs", ["AS", "KS", "QS"]),
        ("10h", ["TH"]),
        ("jogo 10h", ["TH"]),
        # false friends
        ("as you wish, QS", ["QS"]),
        ("As cartas: QS", ["QS"]),
        ("As minhas cartas são más", []),
        ("Ah, QS then", ["QS"]),
        ("see you at 10h", []),
        ("às 10h", []),
        ("chego às 10h, jogo o 10♥", ["TH"]),
        ("voltei há 2d", []),
        ("an ad for 3d glasses", []),
        ("AS YOU WISH", []),  # shouting: capitals mean nothing on an all-capitals line
        ("I was at the office", []),
        ("ok", []),
        ("I", []),
        ("no", []),
        ("a", []),
        ("10h30", []),
        ("xQS", []),
        ("QSx", []),
        ("2 hearts left", []),  # a count, not "two of hearts"
        ("I have a heart", []),
    ],
)
def test_find_cards(text: str, cards: list[str]) -> None:
    assert [card for card, _ in find_cards(text)] == cards


def test_find_cards_spans_point_into_the_original_text() -> None:
    text = "Olá! Jogo o Ás de Copas e depois Q♠."
    found = find_cards(text)
    assert [(card, text[start:end]) for card, (start, end) in found] == [
        ("AH", "Ás de Copas"), ("QS", "Q♠"),
    ]


def test_weak_mentions_are_marked() -> None:
    mentions = [(m.card, m.weak) for m in find_mentions("as QS 10h ♠A")]
    assert mentions == [("AS", True), ("QS", False), ("TH", True), ("AS", False)]


def test_fold_keeps_length_and_strips_accents() -> None:
    for text in ("Ás de Copas", "damă de pică", "ŞAPTE", "İstanbul", "straße", "x🂡y"):
        assert len(fold(text)) == len(text)
    assert fold("Ás de Copas") == "as de copas"
    assert fold("inimă roșie") == "inima rosie"


@given(st.sampled_from(ALL_CARDS), st.sampled_from(STYLES))
def test_format_then_parse_round_trips(card: str, style: str) -> None:
    assert parse_card(format_card(card, style)) == card


def test_every_card_in_every_style_round_trips() -> None:
    for card in ALL_CARDS:
        for style in STYLES:
            assert parse_card(format_card(card, style)) == card, (card, style)
            assert parse_card(format_card(card, style).upper()) == card, (card, style)


@given(
    st.sampled_from(ALL_CARDS),
    st.sampled_from([s for s in STYLES if s not in ("lower", "digits")]),
    st.sampled_from(["I play {} now.", "{}", "Ok: {}!", "Jogo {}.", "Joc {} acum", "hi\n{}\nbye"]),
)
def test_a_strong_card_is_found_inside_a_sentence(card: str, style: str, sentence: str) -> None:
    text = sentence.format(format_card(card, style))
    assert [c for c, _ in find_cards(text)] == [card]


def test_every_style_writes_every_card_differently() -> None:
    for style in STYLES:
        written = {format_card(card, style) for card in ALL_CARDS}
        assert len(written) == 52, style


def test_format_card_refuses_unknowns() -> None:
    with pytest.raises(ValueError):
        format_card("1S")
    with pytest.raises(ValueError):
        format_card("QS", "klingon")
