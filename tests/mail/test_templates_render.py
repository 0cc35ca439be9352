"""Every kind of mail renders in every language, with cards, names and sentences right."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.engine.errors import Reason
from pbem.mail.cards_display import SUIT_SYMBOLS
from pbem.mail.context import (
    KINDS,
    GameListing,
    Games,
    MailContext,
    MoveRejected,
    Recipient,
    RequestRejected,
    YourTurn,
)
from pbem.mail.i18n import LANGUAGES
from pbem.mail.render import MailRenderer, tidy_text
from pbem.mail.samples import MOVE_REJECTIONS, REQUEST_REJECTIONS, sample_contexts, sample_game

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"

#: Codes that reach players: the engine's, the reader's and the services'.
READER_CODES = {"NO_COMMAND", "TWO_CARDS", "WRONG_CARD_COUNT", "UNKNOWN_WORD"}
SERVICE_CODES = {"STALE_TURN", "FORGED_SENDER", "BAD_ADDRESS", "NOT_A_PLAYER", "GAME_NOT_ACTIVE",
                 "RATE_LIMITED"}
#: The engine's codes that are about setting a game up, never a player's move.
NOT_PLAYER_FACING = {"BAD_DECK"}


@pytest.fixture(scope="module")
def renderer() -> MailRenderer:
    return MailRenderer(TEMPLATES)


def _all_cases():
    for language in LANGUAGES:
        for kind, contexts in sample_contexts(language).items():
            for i, context in enumerate(contexts):
                yield pytest.param(language, context, id=f"{language}-{kind}-{i}")


class _TagBalance(HTMLParser):
    """Checks that every non-void element is closed, in order, and no script/style/link."""

    VOID = {"meta", "br", "img", "hr", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in {"script", "style", "link", "iframe", "form"}:
            self.errors.append(f"forbidden <{tag}>")
        for name, _ in attrs:
            if name == "class" or name.startswith("on"):
                self.errors.append(f"attribute {name} on <{tag}>")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> does not close {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize(("language", "context"), list(_all_cases()))
def test_every_kind_renders_in_every_language(renderer, language, context) -> None:
    mail = renderer.render(context)
    for part in (mail.subject, mail.from_name, mail.text, mail.html):
        assert part.strip()
        assert "{{" not in part and "{%" not in part and "%(" not in part
        assert "Undefined" not in part
    assert "\n" not in mail.subject and len(mail.subject) < 200
    assert mail.text.endswith("\n") and "\n\n\n" not in mail.text
    if context.game_id is not None:
        assert f"#{context.game_id}]" in mail.subject
    parser = _TagBalance()
    parser.feed(mail.html)
    parser.close()
    assert parser.errors == [] and parser.stack == []
    assert f'<html lang="{language}">' in mail.html
    # The recipient's hand, when shown, is there with its suit symbols in both parts.
    game = context.game
    if game is not None and game.hand and context.kind in {"your_turn", "status", "trick_done",
                                                            "card_played"}:
        for suit in {card[1] for card in game.hand}:
            assert SUIT_SYMBOLS[suit] in mail.text
            assert SUIT_SYMBOLS[suit] in mail.html
        assert "#c0182b" in mail.html  # red suits are red
    if game is not None and game.legal and game.my_turn and context.kind == "your_turn":
        for card in game.legal:
            assert card in mail.text or (card[0] + SUIT_SYMBOLS[card[1]]) in mail.text or (
                "10" + SUIT_SYMBOLS[card[1]] in mail.text
            )


@pytest.mark.parametrize("language", ["pt", "ro"])
def test_translations_are_applied(renderer, language) -> None:
    english = {k: [renderer.render(c) for c in v] for k, v in sample_contexts("en").items()}
    translated = {k: [renderer.render(c) for c in v] for k, v in sample_contexts(language).items()}
    for kind in KINDS:
        for en, tr in zip(english[kind], translated[kind]):
            assert en.text != tr.text, kind
            assert en.html != tr.html, kind
            assert en.subject != tr.subject or kind in {"your_turn"}, kind
    sample = translated["your_turn"][0].text
    expected = {"pt": ["A sua mão", "Pode jogar", "É a sua vez de jogar"],
                "ro": ["Mâna dumneavoastră", "Puteți juca", "Este rândul dumneavoastră"]}
    for phrase in expected[language]:
        assert phrase in sample


def _render_code(renderer, language, code, details, detail_cls):
    me = Recipient("João", "joao@example.pt", language)
    context = MailContext(me, detail_cls(code, details), sample_game())
    return renderer.render(context)


def _fallback_marker(renderer, language) -> str:
    """The generic sentence of a code with none of its own, in ``language``: it never shows the
    code itself (a refusal code is for the operator, never shown to a player raw)."""
    text = _render_code(renderer, language, "NO_SUCH_CODE_XYZ", {}, RequestRejected).text
    assert "NO_SUCH_CODE_XYZ" not in text
    # The line after the greeting (itself after the inbox preview line, _preheader.jinja).
    return [line for line in text.splitlines() if line.strip()][2].strip()


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_rejection_code_has_its_own_sentence(renderer, language) -> None:
    fallback = _fallback_marker(renderer, language)
    assert fallback
    engine_codes = {reason.value for reason in Reason} - NOT_PLAYER_FACING
    assert engine_codes <= set(MOVE_REJECTIONS), "a sample is missing for an engine code"
    assert READER_CODES <= set(MOVE_REJECTIONS)
    assert SERVICE_CODES <= set(REQUEST_REJECTIONS)
    sentences = set()
    for code, details in MOVE_REJECTIONS.items():
        text = _render_code(renderer, language, code, details, MoveRejected).text
        assert fallback not in text, code
        assert code not in text, code
        sentences.add(text)
    for code, details in REQUEST_REJECTIONS.items():
        text = _render_code(renderer, language, code, details, RequestRejected).text
        assert fallback not in text, code
        assert code not in text, code
        sentences.add(text)
    assert len(sentences) == len(MOVE_REJECTIONS) + len(REQUEST_REJECTIONS)


def test_must_follow_suit_sentence(renderer) -> None:
    text = _render_code(renderer, "en", "MUST_FOLLOW_SUIT",
                        {"card": "QH", "led_suit": "C", "held": ["9C", "3C"], "legal": ["3C", "9C"]},
                        MoveRejected).text
    assert "You must follow suit: you hold 3♣ and 9♣." in text
    assert "You may play 3♣ or 9♣." in text
    pt = _render_code(renderer, "pt", "MUST_FOLLOW_SUIT",
                      {"card": "QH", "led_suit": "C", "held": ["3C", "9C"]}, MoveRejected).text
    assert "Tem de seguir o naipe: tem 3♣ e 9♣." in pt
    ro = _render_code(renderer, "ro", "MUST_FOLLOW_SUIT",
                      {"card": "QH", "led_suit": "C", "held": ["3C", "9C"]}, MoveRejected).text
    assert "Trebuie să răspundeți la culoare: aveți 3♣ și 9♣." in ro


def test_rejection_without_game_context_names_no_seat(renderer) -> None:
    me = Recipient("Ann", "ann@example.org")
    mail = renderer.render(MailContext(me, RequestRejected("NOT_YOUR_TURN", {"to_move": 2})))
    assert "It is not your turn." in mail.text
    assert "#2" not in mail.text


@pytest.mark.parametrize(
    ("language", "count", "phrase"),
    [
        ("en", 1, "Your hand (1 card):"),
        ("en", 9, "Your hand (9 cards):"),
        ("pt", 1, "A sua mão (1 carta):"),
        ("pt", 13, "A sua mão (13 cartas):"),
        ("ro", 1, "Mâna dumneavoastră (1 carte):"),
        ("ro", 13, "Mâna dumneavoastră (13 cărți):"),
    ],
)
def test_plural_forms(renderer, language, count, phrase) -> None:
    deck = [r + s for s in "SHCD" for r in "23456789TJQKA"]
    game = sample_game(hand=tuple(deck[:count]), legal=tuple(deck[:1]))
    mail = renderer.render(MailContext(Recipient("A", "a@b.c", language), YourTurn("play"), game))
    assert phrase in mail.text


def test_romanian_third_plural_form() -> None:
    renderer = MailRenderer(TEMPLATES)
    env = renderer.environment("ro", False)
    template = env.from_string(
        '{{ ngettext("%(num)s player.", "%(num)s players.", n) }}'
    )
    assert template.render(n=1) == "1 jucător."
    assert template.render(n=5) == "5 jucători."
    assert template.render(n=20) == "20 de jucători."


def test_names_are_escaped_in_html_only(renderer) -> None:
    game = sample_game(names=("<b>Eve</b> & co", "Bob", "Cid", "Dee"))
    mail = renderer.render(MailContext(Recipient("Bob", "bob@x.org"), YourTurn("play"), game))
    assert "<b>Eve</b> & co" in mail.text
    assert "&lt;b&gt;Eve&lt;/b&gt; &amp; co" in mail.html
    assert "<b>Eve</b>" not in mail.html


def test_hand_is_sorted_by_suit_with_symbols(renderer) -> None:
    game = sample_game(hand=("2C", "AS", "TH", "3S", "KD", "QH"), legal=("2C",))
    text = renderer.render(MailContext(Recipient("B", "b@x.org"), YourTurn("play"), game)).text
    lines = [line.strip() for line in text.splitlines()]
    start = lines.index("Your hand (6 cards):")
    assert lines[start + 1 : start + 5] == ["♠  3  A", "♥  10  Q", "♣  2", "♦  K"]


def test_subjects_are_stable_per_game(renderer) -> None:
    subjects = {
        renderer.render(c).subject
        for kind in ("your_turn", "trick_done", "card_played", "hand_summary", "game_summary",
                     "move_rejected", "status")
        for c in sample_contexts("en")[kind]
    }
    assert subjects == {"[Hearts #42] Friday table"}
    untitled = sample_game(title="")
    subject = renderer.render(
        MailContext(Recipient("B", "b@x.org"), YourTurn("play"), untitled)
    ).subject
    assert subject == "[Hearts #42] Zoë Ávila, João Brandão, Ștefan Țurcanu, and Dana"
    tail = renderer.render(
        MailContext(Recipient("B", "b@x.org"), YourTurn("play"), untitled), subject_tail="Cup final"
    ).subject
    assert tail == "[Hearts #42] Cup final"


def test_deadline_in_the_readers_zone(renderer) -> None:
    context = sample_contexts("en")["your_turn"][0]  # 18:30 UTC on 17 May 2024, Lisbon reader
    text = renderer.render(context).text
    # CLDR puts a narrow no-break space before "PM".
    assert "Please move by Fri, May 17, 2024, 7:30\u202fPM UTC+1." in text


def test_games_list(renderer) -> None:
    me = Recipient("B", "b@x.org", "en")
    games = Games((GameListing(7, "Tuesday", "active", my_turn=True, hand_number=2, my_total=14),
                   GameListing(9, "Later", "paused")))
    text = renderer.render(MailContext(me, games)).text
    assert re.search(r"#7\s+Tuesday\s+\(in play\)", text)
    assert "Hand 2, your total 14." in text
    assert re.search(r"#9\s+Later\s+\(paused\)", text)


def test_unknown_language_falls_back_to_default(renderer) -> None:
    context = sample_contexts("en")["help"][0]
    french = MailContext(Recipient(context.recipient.name, "b@x.org", "fr_FR"), context.detail,
                         context.game)
    assert renderer.render(french).text == renderer.render(context).text
    brazilian = MailContext(Recipient("B", "b@x.org", "pt-BR"), context.detail, context.game)
    assert "Comandos (um por resposta):" in renderer.render(brazilian).text


def test_kind_needing_a_game_refuses_none() -> None:
    with pytest.raises(ValueError):
        MailContext(Recipient("B", "b@x.org"), YourTurn("play"))


def test_every_kind_has_both_templates() -> None:
    names = {p.name for p in (TEMPLATES / "email").iterdir()}
    for kind in KINDS:
        assert f"{kind}.txt" in names and f"{kind}.html" in names


def test_preload_compiles_everything() -> None:
    renderer = MailRenderer(TEMPLATES)
    renderer.preload()
    assert len(renderer._environments) == 2 * len(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_finished_games_mails_no_longer_ask_for_a_move(renderer, language) -> None:
    over = sample_contexts(language)["game_summary"][0]
    playing = sample_contexts(language)["your_turn"][0]
    assert over.game.phase == "over" and playing.game.phase != "over"
    finished, ongoing = renderer.render(over), renderer.render(playing)
    footer = {"en": ("This game is over", "Reply to it to play"), "pt": ("Este jogo terminou", "Responda-lhe para jogar"),
              "ro": ("Jocul s-a încheiat", "Răspundeți la el pentru a juca")}[language]
    for part in (finished.text, finished.html):
        assert footer[0] in part and footer[1] not in part
    for part in (ongoing.text, ongoing.html):
        assert footer[1] in part and footer[0] not in part


@given(st.text(st.sampled_from(["a", "b", " ", "\t", "\n", "\r", "é"]), max_size=60))
def test_text_parts_are_tidied_as_the_two_regexes_did(body: str) -> None:
    """``tidy_text`` is the pair of substitutions it replaced, exactly."""
    expected = re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", body)).strip("\n") + "\n"
    assert tidy_text(body) == expected
