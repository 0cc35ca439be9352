"""Cancellation Hearts (RULES.md §6.6, §6.8) by mail, composed by the real composer in English, Portuguese and
Romanian: a card held twice shown once as ``Q♠ ×2`` (``Q ×2`` in a hand row; named twice in the machine
headers), identical cards said to cancel, a trick left on the table and the carried pile, a trick taken with
it, the last trick with no winner given to the previous trick's winner, the leftover kitty, ten players'
tables and summaries; the pass that names a card twice, read back; and, driven through the engine and
``pbem.services.mailing.game_context`` at a table of ten, what each seat's context says of a cancelled trick,
the carried pile and the kitty.
"""

from __future__ import annotations

from email import message_from_bytes, policy
from types import SimpleNamespace

import pytest

from pbem.engine import PlayCard, Rules, TrickCancelled, TrickWon, apply
from pbem.mail.compose import MailComposer
from pbem.mail.context import MailContext, Recipient, TrickDone, YourTurn
from pbem.mail.reading.commands import Pass, Unreadable, parse_command
from pbem.mail.samples import NAMES10, sample_contexts
from pbem.services.mailing import game_context
from pbem.services.notify import finished_trick
from tests.engine.helpers import two_deck_start
from tests.mail.test_variant_mails import SVC, TEMPLATES

LANGUAGES = ("en", "pt", "ro")
R10 = Rules.make("cancellation", players=10)
TOP = "AS KS QS JS TS 9S 8S 7S 6S 5S"
#: Seats 0 and 1 hold ten spades each, seats 2 and 3 one 2♠ each, the kitty the four others: a spade lead
#: answered A♠, A♠, 2♠, 2♠ cancels every spade of the trick.
HANDS = {0: TOP, 1: TOP, 2: "2S", 3: "2S"}
KITTY = "3S 3S 4S 4S"


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain="hearts.test")


def flat(text: str) -> str:
    return " ".join(text.split())


def compose(composer: MailComposer, ctx: MailContext):
    message = message_from_bytes(composer.compose(ctx.kind, ctx).raw, policy=policy.default)
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")  # type: ignore[union-attr]
    html = message.get_body(("html",)).get_content()  # type: ignore[union-attr]
    return message, text, html


def samples(language: str) -> dict[str, list[MailContext]]:
    """The two-deck samples (a table of ten) of each kind."""
    return {kind: [c for c in ctxs if c.game is not None and c.game.decks == 2]
            for kind, ctxs in sample_contexts(language).items()}


# -- the samples at a table of ten, in three languages --------------------------------------------------


def test_the_turn_mail_shows_copies_the_cancelled_trick_the_pile_and_the_twins(composer) -> None:
    ctx = samples("en")["your_turn"][0]
    message, text, html = compose(composer, ctx)
    assert message["X-Hearts-Hand"] == "9C AD KH KH QS QS AS"  # the machine form names a copy each
    assert message["X-Hearts-Legal"] == "QS AS"  # each playable card once
    assert "  ♠  Q\u00a0×2  A\n  ♥  K\u00a0×2\n" in text
    said = flat(text)
    assert "Your hand (7 cards):" in said
    assert ("Every card of the suit led (spades) was cancelled by its twin: the trick stays on the table and Émile "
            "Noël leads again; its cards (1 point) go to the next trick's winner.") in said
    assert "5♠ and K♠ were each played" not in said  # the trick's end says it
    assert "6♠ was played twice: the two cancel each other, and neither can take the trick." in said
    assert ("On the table from a cancelled trick: 5♠ ×2, K♠ ×2, 7♥, 3♣, 9♣, 2♦, 4♦, and 6♦; they go to the winner "
            "of the next trick.") in said
    assert "Naming a card you hold twice plays one of its copies." in said
    assert "Dana took the kitty at trick 1." in said
    assert "Jürgen" in said and "Ioana Pop 0 8" in said  # ten players' scores
    assert "Q&nbsp;×2" in html and "On the table from a cancelled trick:" in html


def test_a_trick_taken_with_the_pile_and_the_last_trick_given_to_the_previous_winner(composer) -> None:
    _, text, _ = compose(composer, samples("en")["trick_done"][1])
    said = flat(text)
    assert said.startswith("Gheorghe Ionescu took trick 4")
    assert ("Gheorghe Ionescu took it, and with it the cards of the cancelled tricks left on the table: 5♠ ×2, K♠ ×2, "
            "7♥, 3♣, 9♣, 2♦, 4♦, and 6♦ (1 point in all).") in said
    _, text, _ = compose(composer, samples("en")["trick_done"][0])
    assert flat(text).startswith("Trick 3 cancelled: it stays on the table")
    _, text, html = compose(composer, samples("en")["hand_summary"][0])
    said = flat(text)
    assert ("Every card of the suit led (spades) was cancelled by its twin: as the hand's last trick it goes to the "
            "winner of the trick before it, Hélène (4 points).") in said
    assert "9♠ and A♠ were each played twice" in said
    assert "The kitty held 2♠, 7♥ ×2, and J♣; Dana took it at trick 1." in said
    assert "João Brandão (you) Q♠ ×2" in said and "Hélène Q♠, 1 heart" in said
    assert "10 João Brandão (you) 13 43" in said  # ten places
    assert "Q♠ ×2" in flat(html.replace("&nbsp;", " ")) or "Q♠</span> ×2" in html


def test_the_pass_mail_says_a_card_held_twice_may_be_named_twice(composer) -> None:
    ctx = samples("en")["your_turn"][1]
    message, text, _ = compose(composer, ctx)
    assert message["X-Hearts-Legal"] == "2C 2C 9C AD AD KH 4S QS QS AS"
    said = flat(text)
    assert "A card you hold twice may be named twice, to pass both copies." in said
    assert "Reply with the 3 cards you pass, for example: 9♣ A♦ A♦" in said
    assert "Two decks are played: 104 cards, every card twice." in said
    assert "The 4 cards left over after the deal form a kitty, face down; it goes to the winner of the first trick." in said
    assert parse_command("9♣ A♦ A♦", expected="pass") == Pass(("9C", "AD", "AD"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_two_deck_sample_renders_in_three_languages(composer, language) -> None:
    phrases = {
        "en": ("Q ×2", "cancelled by its twin", "On the table from a cancelled trick"),
        "pt": ("Q ×2", "foram anuladas pela sua gémea", "Na mesa, de uma vaza anulada"),
        "ro": ("Q ×2", "au fost anulate de perechea lor", "Pe masă, dintr-o levată anulată"),
    }[language]
    texts = []
    for kind, ctxs in samples(language).items():
        for ctx in ctxs:
            _, text, html = compose(composer, ctx)
            assert "#-1" not in text and "#-1" not in html, kind
            texts.append(flat(text))
    joined = "\n".join(texts)
    for phrase in phrases:
        assert phrase in joined, (language, phrase)


# -- reading a pass that names a card twice -----------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("pass QS QS 2C", Pass(("QS", "QS", "2C"))),
    ("Q♠ Q♠ 2♣", Pass(("QS", "QS", "2C"))),
    ("passo QS QS 2C", Pass(("QS", "QS", "2C"))),
    ("pasez Q♠ Q♠ 2♣", Pass(("QS", "QS", "2C"))),
    ("QS QS QS", Pass(("QS", "QS", "QS"))),  # more than held: the engine's DUPLICATE_CARD
    ("QS KS AS\nQS KS AS", Pass(("QS", "KS", "AS"))),  # the same pass written twice
])
def test_a_pass_naming_a_card_twice_keeps_both(text: str, expected: object) -> None:
    assert parse_command(text, expected="pass") == expected


def test_a_card_named_again_in_other_words_counts_once() -> None:
    read = parse_command("pass QS (queen of spades) KS", expected="pass")
    assert isinstance(read, Unreadable) and read.reason == "WRONG_CARD_COUNT"


# -- from the engine, at a table of ten ----------------------------------------------------------------


def rows(state):
    game = SimpleNamespace(id=7, title="Ten", seats=[])
    for k in range(state.players):
        player = SimpleNamespace(display_name=NAMES10[k], address=f"p{k}@players.test")
        game.seats.append(SimpleNamespace(seat=k, player=player, player_id=k + 1, bot=None, game=game, game_id=7,
                                          deadline_at=None, waiting_since=None, decisions=0))
    return game, game.seats


def context(state, seat: int):
    game, seats = rows(state)
    return game_context(SVC, game, seats, state, seat)  # type: ignore[arg-type]


def play(state, cards: dict[int, str]):
    """Play one trick: the seats in ``cards`` play those, the others their first legal card."""
    events = []
    for _ in range(state.players):
        seat = state.to_move
        state, out = apply(state, PlayCard(seat, cards.get(seat) or state.legal_cards()[0]))
        events += out
    return state, events


def test_a_cancelled_trick_its_pile_and_the_kitty_in_each_seats_context(composer) -> None:
    state = two_deck_start(R10, HANDS, KITTY)
    assert state.hand(0).count("AS") == 1 and context(state, 0).hand == state.hand(0)
    state, events = play(state, {0: "AS", 1: "AS", 2: "2S", 3: "2S"})
    (cancelled,) = [e for e in events if isinstance(e, TrickCancelled)]
    ctx = context(state, 5)
    assert ctx.decks == 2 and ctx.carried == state.carried and ctx.carried_tricks == 1
    assert ctx.last_trick is not None and ctx.last_trick.stays and ctx.last_trick.winner == -1
    assert ctx.kitty_form == "first_trick" and ctx.kitty_size == 4 and ctx.kitty_taker is None
    trick = finished_trick(cancelled, 10)
    mail = MailContext(recipient=Recipient(NAMES10[5], "p5@players.test"), detail=TrickDone(tricks=(trick,)), game=ctx)
    _, text, _ = compose(composer, mail)
    said = flat(text)
    assert said.startswith("Trick 1 cancelled: it stays on the table")
    assert "the trick stays on the table and Zoë Ávila leads again" in said
    assert "A♠ and 2♠ were each played twice" not in said
    assert "The kitty (4 cards) still lies face down on the table." in said

    # Trick 2: K♠ led, Q♠ follows, the others discard: the pile and the kitty go to seat 0.
    pile = state.carried
    state, events = play(state, {0: "KS", 1: "QS"})
    (won,) = [e for e in events if isinstance(e, TrickWon)]
    assert won.winner == 0 and won.carried == pile and state.kitty_taker == 0
    trick = finished_trick(won, 10)
    assert trick.carried == pile and not trick.cancelled
    other, taker = context(state, 5), context(state, 0)
    assert other.last_trick is not None and other.last_trick.carried == pile  # from state.last_carried
    assert other.kitty == () and taker.kitty == ("3S", "3S", "4S", "4S")
    assert other.hand_points[0] == state.public_points()[0] == taker.hand_points[0]  # the kitty scores nothing here
    for seat, ctx in ((5, other), (0, taker)):
        mail = MailContext(recipient=Recipient(NAMES10[seat], f"p{seat}@players.test"),
                           detail=YourTurn("play") if ctx.to_move == seat else TrickDone(tricks=(trick,)), game=ctx)
        message, text, _ = compose(composer, mail)
        said = flat(text)
        assert "took it, and with it the cards of the cancelled tricks left on the table: 2♠ ×2, A♠ ×2, " in said
        if seat == 0:
            assert "You took the kitty at trick 2: 3♠ ×2 and 4♠ ×2. Its cards count among your tricks." in said
        else:
            assert "Zoë Ávila took the kitty at trick 2." in said and "3♠" not in said and "4♠" not in said
            assert "3S" not in message["X-Hearts-Hand"]


def test_the_last_trick_with_no_winner_as_the_hand_summary_shows_it(composer) -> None:
    event = TrickWon(10, 2, ("AS", "AS", "9S", "9S", "2H", "3H", "4D", "6H", "TC", "8H"), 7, 4, False, ("5C", "5C"),
                     True)
    trick = finished_trick(event, 10)
    assert trick.cancelled and not trick.stays and trick.winner == 7 and trick.carried == ("5C", "5C")
    ctx = samples("en")["trick_done"][0]
    mail = MailContext(recipient=ctx.recipient, detail=TrickDone(tricks=(trick,)), game=ctx.game)
    _, text, _ = compose(composer, mail)
    assert ("Every card of the suit led (spades) was cancelled by its twin: as the hand's last trick it goes, with the "
            "cards left on the table (5♣ ×2), to the winner of the trick before it, Hélène (4 points).") in flat(text)
