"""The hand and game summaries (templates/email/hand_summary.*, game_summary.*): what each seat took
that scores (Q♠ by name, hearts counted), the moon told to its shooter in the second person and to
the others in the third, the totals ranked best first with shared places, the recipient marked; the
chart shown at half its pixel size and never wider than the screen."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from pbem.engine import HandScored, Rules, TrickWon, apply, new_game
from pbem.engine.moves import ChooseMoon, Deal, PassCards, PlayCard
from pbem.mail.context import GameStats, GameSummary, HandResult, HandSummary, MailContext, Moon, Taken, standings
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts
from tests.mail.long_names import long_name_contexts
from pbem.services import bot_names, summaries
from pbem.services.summaries import SummaryParts, hands_taken, scored_cards

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def renderer() -> MailRenderer:
    return MailRenderer(ROOT / "templates")


def hand_summary(language: str = "en", **changes: object) -> MailContext:
    base = sample_contexts(language)["hand_summary"][0]  # seen by seat 1, João Brandão
    return replace(base, detail=replace(base.detail, **changes))


def section(text: str, heading: str, lines: int) -> list[str]:
    return text[text.index(heading):].splitlines()[1 : 1 + lines]


def test_the_hand_summary_names_who_took_the_queen_and_the_hearts(renderer: MailRenderer) -> None:
    taken = (Taken(0, hearts=4), Taken(1), Taken(2, hearts=9), Taken(3, cards=("QS",)))
    mail = renderer.render(hand_summary(taken=taken))
    rows = section(mail.text, "Taken this hand:", 4)
    assert re.fullmatch(r"  Zoë Ávila\s+4 hearts", rows[0])
    assert re.fullmatch(r"  João Brandão \(you\)\s+nothing", rows[1])
    assert re.fullmatch(r"  Dana\s+Q♠", rows[3])
    assert "Dana" in mail.html and "4 hearts" in mail.html and "Q♠" in mail.html
    one = renderer.render(hand_summary(taken=(Taken(0, hearts=1, cards=("QS", "JD")), Taken(1), Taken(2), Taken(3))))
    assert re.search(r"Zoë Ávila\s+Q♠, J♦, 1 heart\n", one.text)


@pytest.mark.parametrize(("kind", "scoring", "you", "other"), [
    ("moon", "old", "You shot the moon: everyone else scores 26 points.",
     "João Brandão shot the moon: everyone else scores 26 points."),
    ("moon", "new", "You shot the moon and subtract 26 points.", "João Brandão shot the moon and subtracts 26 points."),
    ("moon", "none", "You took every penalty card and score 26 points.",
     "João Brandão took every penalty card and scores 26 points."),
    ("sun", "old", "You took every trick (the sun): everyone else scores 26 points.",
     "João Brandão took every trick (the sun): everyone else scores 26 points."),
    ("sun", "new", "You took every trick (the sun) and subtract 26 points.",
     "João Brandão took every trick (the sun) and subtracts 26 points."),
    ("sun", "none", "You took every trick and score 26 points.", "João Brandão took every trick and scores 26 points."),
])
def test_the_shooter_reads_you_and_the_others_read_the_name(renderer: MailRenderer, kind: str, scoring: str,
                                                            you: str, other: str) -> None:
    base = hand_summary()
    result = HandResult(2, (26, 0, 26, 26), (30, 13, 35, 26), Moon(shooter=1, kind=kind, scoring=scoring))
    shooter = renderer.render(replace(base, detail=replace(base.detail, result=result)))
    assert you in shooter.text and you in shooter.html
    assert "João Brandão shot" not in shooter.text and "João Brandão took every" not in shooter.text
    other_seat = replace(base, game=replace(base.game, seat=0))
    watcher = renderer.render(replace(other_seat, detail=replace(base.detail, result=result)))
    assert other in watcher.text and "You shot" not in watcher.text


@pytest.mark.parametrize("language", ["pt", "ro"])
def test_the_shooter_is_addressed_in_every_language(renderer: MailRenderer, language: str) -> None:
    base = hand_summary(language)
    result = HandResult(2, (26, 0, 26, 26), (30, 13, 35, 26), Moon(shooter=1))
    mail = renderer.render(replace(base, detail=replace(base.detail, result=result)))
    # After the inbox preview line and the greeting: no third person.
    assert "João Brandão" not in mail.text.split("\n\n", 3)[2]
    assert {"pt": "Você fez a lua", "ro": "Ați luat luna"}[language] in mail.text


def test_hand_totals_are_ranked_with_places(renderer: MailRenderer) -> None:
    result = HandResult(2, (0, 26, 26, 0), (20, 13, 35, 13))
    mail = renderer.render(hand_summary(result=result))
    rows = section(mail.text, "Standings after hand 2:", 5)
    assert rows[0].split() == ["Player", "This", "hand", "Total"]
    assert [r.split()[0] for r in rows[1:]] == ["1=", "1=", "3", "4"]
    assert "João Brandão (you)" in rows[1] and "Dana" in rows[2]  # equal totals: seat order
    assert [int(r.split()[-1]) for r in rows[1:]] == [13, 13, 20, 35]
    html = mail.html[mail.html.index("Standings after hand 2:"):]
    assert html.index("João Brandão (you)") < html.index("Dana") < html.index("Zoë Ávila") < html.index("Ștefan")


def test_the_highest_total_ranks_first_when_the_rules_say_so() -> None:
    assert [s.seat for s in standings((20, 13, 35, 13), lowest_wins=False)] == [2, 0, 1, 3]
    assert [(s.place, s.shared) for s in standings((5, 5, 5))] == [(1, True)] * 3
    assert [s.place for s in standings((1, 2, 2, 3))] == [1, 2, 2, 4]


def test_the_final_totals_are_a_ranking(renderer: MailRenderer) -> None:
    base = sample_contexts("en")["game_summary"][0]  # totals (30, 101, 77, 44), seat 1 reads it
    mail = renderer.render(base)
    rows = section(mail.text, "Final totals:", 5)
    assert [r.split()[0] for r in rows[1:]] == ["1", "2", "3", "4"]
    assert [int(r.split()[-1]) for r in rows[1:]] == [30, 44, 77, 101]
    assert "João Brandão (you)" in rows[4]
    shared = renderer.render(replace(base, detail=GameSummary(winners=(1, 3), totals=(31, 30, 101, 30))))
    rows = section(shared.text, "Final totals:", 5)
    assert [r.split()[0] for r in rows[1:]] == ["1=", "1=", "3", "4"]


def test_the_chart_is_shown_at_half_its_pixels_and_fits_a_phone(renderer: MailRenderer) -> None:
    context = next(c for c in sample_contexts("en")["game_summary"] if c.detail.chart is not None)
    chart = context.detail.chart
    html = renderer.render(context).html
    tag = re.search(r'<img src="cid:' + re.escape(chart.cid) + r'"[^>]*>', html).group(0)
    assert f'width="{chart.width}"' in tag and f'height="{chart.height}"' in tag
    assert "width:100%" in tag and f"max-width:{chart.width}px" in tag and "height:auto" in tag
    image = Image.open(BytesIO(chart.data))
    assert image.format == "PNG" and image.size == (2 * chart.width, 2 * chart.height)


def test_hands_taken_follows_the_engine() -> None:
    """What `hands_taken` reports for a hand played through the engine, against its own events."""
    rules = Rules.make("omnibus")
    assert scored_cards(rules) == ("QS", "JD")
    assert scored_cards(Rules.make("black-maria")) == ("QS", "KS", "AS")
    assert scored_cards(Rules.make("original-1880")) == ()
    rng = random.Random(5)
    deck = [r + s for s in "CDHS" for r in "23456789TJQKA"]
    rng.shuffle(deck)
    state = new_game(rules)
    before = state
    events: list = []
    state, ev = apply(state, Deal(tuple(deck)))
    events += ev
    for seat in range(4):
        state, ev = apply(state, PassCards(seat, tuple(state.hand(seat)[:3])))
        events += ev
    while state.phase == "play":
        state, ev = apply(state, PlayCard(state.to_move, rng.choice(state.legal_cards())))
        events += ev
    if state.phase == "moon":
        state, ev = apply(state, ChooseMoon(state.shooter[0], "old"))
        events += ev
    scored = next(e for e in events if isinstance(e, HandScored))
    taken = hands_taken(before, events)[scored.hand_no]
    tricks = [e for e in events if isinstance(e, TrickWon)]
    for t in taken:
        won = [c for e in tricks if e.winner == t.seat for c in e.cards]
        assert t.hearts == sum(c.endswith("H") for c in won)
        assert t.cards == tuple(c for c in ("QS", "JD") if c in won)
    # Mid-hand: the cards taken before the turn count too.
    half = new_game(rules)
    half, _ = apply(half, Deal(tuple(deck)))
    for seat in range(4):
        half, _ = apply(half, PassCards(seat, tuple(half.hand(seat)[:3])))
    rng2 = random.Random(5)
    rest: list = []
    k = 0
    while half.phase == "play":
        half_before = half if k == 30 else None
        half, ev = apply(half, PlayCard(half.to_move, rng2.choice(half.legal_cards())))
        if k >= 30:
            rest += ev
        if half_before is not None:
            start = half_before
        k += 1
    if half.phase == "moon":
        half, ev = apply(half, ChooseMoon(half.shooter[0], "old"))
        rest += ev
    whole = hands_taken(start, rest)
    assert sum(t.hearts for t in next(iter(whole.values()))) == 13
    assert sum(len([c for c in t.cards if c == "QS"]) for t in next(iter(whole.values()))) == 1


@pytest.mark.parametrize("language", ["en", "pt", "ro"])
def test_the_summary_tables_fit_72_columns_with_long_names(renderer: MailRenderer, language: str) -> None:
    """Every table line (indented) of the summaries' text parts, with names of forty characters
    (table talk, quoted as the players wrote it, aside)."""
    for kind in ("hand_summary", "game_summary"):
        for context in long_name_contexts(language)[kind]:
            text = renderer.render(context).text
            talk = tuple(line.text for line in context.game.table_talk)
            for line in text[:text.index("\n-- \n")].splitlines():
                if line.startswith("  ") and not line.endswith(talk):
                    assert len(line) <= 72, (language, kind, line)


def test_the_chart_is_drawn_once_per_language_with_its_words_translated() -> None:
    parts = SummaryParts(winners=(0,), totals=(30, 101, 77, 44), colours=(), stats=GameStats((0,) * 4, (0,) * 4,
                         (0,) * 4), series=((4, 4, 30), (13, 39, 101), (9, 35, 77), (0, 26, 44)),
                         names=("Zoë Ávila", "João Brandão", "Ștefan Țurcanu", "Dana"), target=100)
    svc = SimpleNamespace(settings=SimpleNamespace(mail_domain="hearts.test"))
    game = SimpleNamespace(id=7)
    english = parts.chart(svc, game, "en")
    assert parts.chart(svc, game, "en_GB") is english  # drawn once per language
    portuguese = parts.chart(svc, game, "pt")
    assert portuguese.data != english.data and portuguese.cid != english.cid
    assert english.cid.endswith("@hearts.test") and english.mime_type == "image/png"
    image = Image.open(BytesIO(portuguese.data))
    assert image.size == (2 * portuguese.width, 2 * portuguese.height)
    assert SummaryParts(winners=(0,), totals=(0,), colours=(), stats=parts.stats).chart(svc, game, "en") is None


def test_history_and_digest_tell_the_shooter_you_too(renderer: MailRenderer) -> None:
    history = sample_contexts("en")["history"][0]  # hand 2: Zoë Ávila (seat 0) shot the moon
    assert "Zoë Ávila shot the moon" in renderer.render(history).text
    as_zoe = renderer.render(replace(history, game=replace(history.game, seat=0)))
    assert "You shot the moon: everyone else scores 26 points." in as_zoe.text
    assert "You shot the moon" in as_zoe.html and "Zoë Ávila shot the moon" not in as_zoe.text
    digest = sample_contexts("en")["digest"][0]
    game = digest.detail.games[0]
    moon = HandResult(5, (26, 0, 26, 26), (40, 20, 60, 50), Moon(shooter=game.seat))
    mine = replace(digest, detail=replace(digest.detail, games=(replace(game, hands=(moon,)),)))
    assert "You shot the moon" in renderer.render(mine).text and "You shot the moon" in renderer.render(mine).html


def test_the_chart_legend_names_the_computers_in_the_reader_s_language(monkeypatch: pytest.MonkeyPatch) -> None:
    """README, "Summaries": a legend in the reader's language; the computer players' labels are
    translated there too (a Portuguese chart said "(computer, strong)"), a team's names as well."""
    marta, kenji = bot_names.label(7, 1, "strong"), bot_names.label(7, 3, "random")
    parts = SummaryParts(winners=(0,), totals=(30, 101, 77), colours=(), stats=GameStats((0,) * 3, (0,) * 3,
                         (0,) * 3), series=((4, 30), (13, 101), (9, 77)),
                         names=("Zoë Ávila", marta, (kenji, "Dana")), target=100)
    first, third = marta.first, kenji.first
    assert parts.legend("pt") == ("Zoë Ávila", f"{first} (computador, forte)", f"{third} (computador, fácil) & Dana")
    assert parts.legend("ro")[1] == f"{first} (calculator, puternic)"
    drawn: list[tuple[str, ...]] = []
    real = summaries.score_chart
    monkeypatch.setattr(summaries, "score_chart", lambda series, names, **kw: drawn.append(names) or real(
        series, names, **kw))
    parts.chart(SimpleNamespace(settings=SimpleNamespace(mail_domain="hearts.test")), SimpleNamespace(id=7), "pt")
    assert drawn == [parts.legend("pt")]
