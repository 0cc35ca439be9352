"""Turbo Hearts (RULES.md §6.4), Booster Nines (§6.5) and moon=win (§6.7) by mail, composed by the real
composer in English, Portuguese and Romanian: the charge decision and its headers (one decision, one
mail), the charges noted and told to the table, a charged card held back, a boosted trick's two rounds,
the 10♣ multiplier in the hand summary, a moon that wins the game at once; the refusals and the deadline
default; and, driven through the engine and ``pbem.services.mailing.game_context``, that no seat learns
another's charge before the reveal.
"""

from __future__ import annotations

from dataclasses import replace
from email import message_from_bytes, policy

import pytest

from pbem.engine import ChargeCards, PlayCard, apply, new_game
from pbem.engine import Rules as EngineRules
from pbem.mail.compose import MailComposer
from pbem.mail.context import (
    CardPlayed,
    ChargeDone,
    ChargesRevealed,
    DecisionDefaulted,
    FinishedTrick,
    GameContext,
    GameSummary,
    HandResult,
    HandSummary,
    MailContext,
    Moon,
    MoveRejected,
    Play,
    Recipient,
    RequestRejected,
    Rules,
    Taken,
    TrickDone,
    YourTurn,
)
from pbem.mail.reading.commands import Charge, parse_command
from pbem.mail.samples import CHARGE_VALUES, DNF_RULES, TURBO_RULES, sample_game
from pbem.services.mailing import game_context
from tests.integration.test_variant_mails_turbo import DECK as TURBO_DECK
from tests.mail.test_variant_mails import NAMES, SVC, TEMPLATES, rows

LANGUAGES = ("en", "pt", "ro")
TURBO = dict(turbo=True, charge_limit=4, charge_values=CHARGE_VALUES, booster_nines=True)
#: João (seat 1) holds every chargeable card, after the pass, before the first lead.
CHARGING = sample_game(**TURBO, phase="charge", trick=(), last_trick=None, trick_number=1, to_move=None, legal=(),
                       waiting_for=(1,), hand_points=(0, 0, 0, 0),
                       hand=("AS", "QS", "4S", "AH", "TH", "2H", "TC", "9C", "3C", "AD", "JD", "7D", "2D"),
                       charge_choices=("TC", "JD", "AH", "QS"), passed=(), received=())
CHARGES = (("QS",), ("TC",), (), ("AH",))
BOOST = FinishedTrick(5, (Play(2, "9D"), Play(3, "KD"), Play(0, "2D"), Play(1, "AD"), Play(2, "5D"), Play(3, "QS"),
                          Play(0, "3D"), Play(1, "7D")), 1, 26, boosted=True)


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain="hearts.test")


def compose(composer: MailComposer, detail: object, game: GameContext | None, language: str = "en"):
    ctx = MailContext(recipient=Recipient("João", "joao@players.test", language=language), detail=detail,  # type: ignore[arg-type]
                      game=game)
    message = message_from_bytes(composer.compose(ctx.kind, ctx).raw, policy=policy.default)
    text = " ".join(message.get_body(("plain",)).get_content().split())  # type: ignore[union-attr]
    html = message.get_body(("html",)).get_content()  # type: ignore[union-attr]
    return message, text, html


def headers(message) -> dict[str, str]:
    return {k: " ".join(str(v).split()) for k, v in message.items() if k.startswith("X-Hearts")}


# -- the charge decision ----------------------------------------------------------------------------


def test_the_charge_mail_asks_for_the_charge_with_its_choices_effects_example_and_default(composer) -> None:
    message, text, html = compose(composer, YourTurn("charge"), CHARGING)
    x = headers(message)
    assert x["X-Hearts-Decision"] == "charge" and x["X-Hearts-Phase"] == "charge"
    assert x["X-Hearts-Legal"] == "TC JD AH QS none"  # the chargeable cards held (deck order), then none
    assert x["X-Hearts-Charge-Limit"] == "4"
    assert "Hand 3: before the first lead, you may charge cards, showing them to the table." in text
    assert "You hold Q♠, A♥, 10♣, and J♦: you may charge any of them, or none." in text
    assert "A charged Q♠ counts 26 points instead of 13." in text
    assert "A charged A♥ doubles the value of every heart." in text
    assert "Whoever takes 10♣ doubles their hand score; if it is charged, they score four times it instead." in text
    assert "A charged J♦ scores -20 instead of -10." in text
    assert "unless it is the only card of that suit you hold. Everyone learns every charge once all" in text
    assert "Reply with the cards you charge, for example: charge Q♠ 10♣; or reply “charge none”." in text
    assert "With no answer by the deadline, nothing is charged." in text
    assert text.startswith("Before the first lead: charge Q♠ A♥ 10♣ J♦, or none")
    assert "charge Q♠" in html and "charge none" in html


@pytest.mark.parametrize(("language", "example", "none"), [
    ("en", "charge Q♠ 10♣", "charge none"), ("pt", "anuncio Q♠ 10♣", "anuncio nada"),
    ("ro", "anunț Q♠ 10♣", "anunț nimic"),
])
def test_the_charge_mail_in_three_languages_and_its_example_replies_read_back(composer, language, example,
                                                                            none) -> None:
    message, text, _ = compose(composer, YourTurn("charge"), CHARGING, language)
    assert example in text and none in text
    assert headers(message)["X-Hearts-Legal"] == "TC JD AH QS none"  # headers stay in English
    assert parse_command(example, expected="charge") == Charge(("QS", "TC"))
    assert parse_command(none, expected="charge") == Charge(())
    phrases = {"pt": "Se anunciar Q♠, conta 26 pontos em vez de 13.",
               "ro": "Dacă anunțați Q♠, contează 26 de puncte în loc de 13."}
    if language in phrases:
        assert phrases[language].replace(" de puncte", " puncte") in text.replace(" de puncte", " puncte")


def test_a_charge_limit_of_one_says_so_and_its_example_names_one_card(composer) -> None:
    game = replace(CHARGING, charge_limit=1, charge_choices=("TC", "QS"))
    message, text, _ = compose(composer, YourTurn("charge"), game)
    assert headers(message)["X-Hearts-Charge-Limit"] == "1"
    assert headers(message)["X-Hearts-Legal"] == "TC QS none"
    assert "You hold Q♠ and 10♣: you may charge 1 of them at most, or none." in text
    assert "for example: charge Q♠; or reply “charge none”." in text
    assert "A charged A♥" not in text  # only the cards held are explained


def test_one_decision_one_mail_no_other_mail_carries_the_decision_headers(composer) -> None:
    decided = replace(CHARGING, waiting_for=(), charge_choices=(), own_charge=("QS", "TC"))
    revealed = replace(CHARGING, phase="play", waiting_for=(2,), to_move=2, trick=(Play(0, "2C"),), charges=CHARGES,
                       own_charge=("TC",), charge_choices=())
    for detail, game in ((ChargeDone(), decided), (ChargesRevealed(), revealed), (TrickDone(), revealed),
                         (DecisionDefaulted("charge"), decided)):
        x = headers(compose(composer, detail, game)[0])
        assert "X-Hearts-Decision" not in x and "X-Hearts-Legal" not in x and "X-Hearts-Charge-Limit" not in x


# -- the charges: noted, then told to the table -------------------------------------------------------


def test_a_charge_is_noted_to_its_player_and_the_others_are_not_named(composer) -> None:
    decided = replace(CHARGING, waiting_for=(), charge_choices=(), own_charge=("QS", "TC"))
    _, text, _ = compose(composer, ChargeDone(), decided)
    assert "You charge Q♠ and 10♣: the table learns them once everyone has decided." in text
    assert "Waiting for the others to decide what to charge." in text
    said = text.split("Hello João,")[1].split("Your hand")[0]
    assert not any(name in said for name in ("Zoë", "Ștefan", "Dana"))  # nobody is named as still charging
    _, text, _ = compose(composer, ChargeDone(), replace(decided, own_charge=()))
    assert "You charge nothing this hand." in text
    _, pt, _ = compose(composer, ChargeDone(), decided, "pt")
    assert "Anuncia Q♠ e 10♣: a mesa fica a sabê-lo quando todos tiverem decidido." in pt
    _, ro, _ = compose(composer, ChargeDone(), decided, "ro")
    assert "Anunțați Q♠ și 10♣: masa le află după ce au hotărât toți." in ro


def test_the_last_passer_with_nothing_chargeable_is_told_what_it_received_and_that_it_has_nothing_to_decide(
        composer) -> None:
    game = replace(CHARGING, waiting_for=(), charge_choices=(), own_charge=(), passed=("KH", "QH", "KS"),
                   received=("9C", "6C", "2D"),
                   hand=("AS", "4S", "TH", "2H", "9C", "3C", "AD", "7D", "2D", "KS", "KH", "QH", "6C"))
    _, text, _ = compose(composer, ChargeDone(exchange=True), game)
    assert "You passed K♠, Q♥, and K♥. You received 6♣, 9♣, and 2♦." in text
    assert "You hold none of the cards that can be charged, so you have nothing to decide." in text


@pytest.mark.parametrize(("language", "told"), [
    ("en", "Every player has decided what to charge. Charged this hand: Zoë Ávila Q♠; João Brandão (you) 10♣; "
           "Dana A♥."),
    ("pt", "Todos os jogadores decidiram o que anunciam. Anunciadas nesta mão: Zoë Ávila Q♠; João Brandão (você) "
           "10♣; Dana A♥."),
    ("ro", "Toți jucătorii au hotărât ce anunță. Anunțate în această mână: Zoë Ávila Q♠; João Brandão "
           "(dumneavoastră) 10♣; Dana A♥."),
])
def test_the_charges_are_told_to_everyone_once_all_have_decided(composer, language, told) -> None:
    revealed = replace(CHARGING, phase="play", waiting_for=(2,), to_move=2, trick=(Play(0, "2C"),), charges=CHARGES,
                       own_charge=("TC",), charge_choices=())
    message, text, html = compose(composer, ChargesRevealed(), revealed, language)
    assert told in text
    assert "Q♠" in html and "A♥" in html
    # ...and every later mail of the hand shows them.
    _, later, _ = compose(composer, TrickDone(), replace(revealed, last_trick=FinishedTrick(
        1, (Play(0, "2C"), Play(1, "9C"), Play(2, "KC"), Play(3, "5C")), 2, 0)), language)
    assert told.split(". ", 1)[1] in later
    _, nobody, _ = compose(composer, ChargesRevealed(), replace(revealed, charges=((), (), (), ()), own_charge=()))
    assert "Nobody charged a card this hand." in nobody


def test_a_charged_card_held_back_is_named_on_its_holders_turn(composer) -> None:
    held = sample_game(**TURBO, charges=CHARGES, own_charge=("TC",), suits_led="DS", trick=(Play(0, "KC"),),
                       trick_number=4, to_move=1, hand=("AS", "4S", "JH", "TH", "TC", "9C", "3C", "AD"),
                       legal=("3C", "9C"))
    message, text, _ = compose(composer, YourTurn("play"), held)
    assert headers(message)["X-Hearts-Legal"] == "3C 9C"
    assert "You may play 3♣ or 9♣." in text
    assert ("You charged 10♣, so it waits: a charged card may not be led, nor played to the first trick led in its "
            "suit, unless it is the only card of that suit you hold.") in text
    _, text, _ = compose(composer, YourTurn("play"), replace(held, legal=("3C", "9C", "TC")))
    assert "so it waits" not in text
    _, text, _ = compose(composer, MoveRejected("CHARGED_CARD_FIRST_TRICK_OF_SUIT",
                                                {"card": "TC", "suit": "C", "legal": ["3C", "9C"]}, attempted="TC"),
                         held)
    assert ("10♣ is charged: it may not be led, nor played to the first trick led in clubs, unless it is the only "
            "one of that suit you hold. You may play 3♣ or 9♣.") in text


@pytest.mark.parametrize(("code", "details", "english"), [
    ("NOT_CHARGEABLE", {"card": "KH", "choices": ["QS", "TC"]},
     "K♥ cannot be charged: only A♥, Q♠, the bonus card and 10♣ can. You may charge 1 card of Q♠ and 10♣, or "
     "reply “charge none”."),
    ("TOO_MANY_CHARGES", {"limit": 1, "given": 2}, "In this game a player charges 1 card at most. Your reply named 2 cards."),
    ("ALREADY_CHARGED", {"seat": 1}, "You have already decided what to charge this hand"),
    ("DUPLICATE_CARD", {"card": "QS"}, "You named Q♠ more than once: name each card only once."),
    ("WRONG_PHASE", {"phase": "charge", "expected": "play"}, "before the first lead, the players are deciding"),
])
def test_a_refused_charge_says_why_and_what_may_be_charged(composer, code, details, english) -> None:
    game = replace(CHARGING, charge_limit=1, charge_choices=("TC", "QS"))
    _, text, _ = compose(composer, MoveRejected(code, details, attempted="charge QS KH"), game)
    assert english in text
    assert "You may charge 1 card of Q♠ and 10♣, or reply “charge none”." in text
    for language in ("pt", "ro"):
        _, translated, _ = compose(composer, MoveRejected(code, details), game, language)
        assert code not in translated and english not in translated


def test_the_reader_refusals_of_a_charge(composer) -> None:
    _, text, _ = compose(composer, RequestRejected("CHARGE_NONE_AND_CARDS", {"cards": "QS TC"}), CHARGING)
    assert ("Your reply says both that you charge nothing and that you charge Q♠ and 10♣: reply “charge none” or "
            "the cards you charge, not both.") in text
    _, text, _ = compose(composer, MoveRejected("NO_COMMAND", {"expected": "charge"}), CHARGING, "ro")
    assert "de exemplu „anunț QS TC”, sau răspundeți „anunț nimic”." in text


def test_nothing_charged_at_the_deadline_is_said_so(composer) -> None:
    decided = replace(CHARGING, waiting_for=(), charge_choices=(), own_charge=())
    _, text, _ = compose(composer, DecisionDefaulted("charge"), decided)
    assert text.startswith("Time ran out: you charge nothing")
    assert "So nothing was charged for you this hand: your cards count as usual." in text
    _, pt, _ = compose(composer, DecisionDefaulted("charge"), decided, "pt")
    assert "Por isso nada foi anunciado por si nesta mão" in pt


# -- Booster Nines ----------------------------------------------------------------------------------


def test_a_boosted_trick_shows_its_two_rounds_and_the_nine_that_boosted_it(composer) -> None:
    game = sample_game(**TURBO, charges=CHARGES, last_trick=BOOST, trick=(), to_move=1, legal=(), trick_number=6)
    _, text, html = compose(composer, TrickDone(tricks=(BOOST,)), game)
    assert ("Trick 5: Ștefan Țurcanu 9♦ · Dana K♦ · Zoë Ávila 2♦ · João Brandão A♦ Boosted by 9♦, a second round: "
            "Ștefan Țurcanu 5♦ · Dana Q♠ · Zoë Ávila 3♦ · João Brandão 7♦ João Brandão took it (26 points).") in text
    assert "Boosted by" in html and html.count("5♦") == 1
    _, pt, _ = compose(composer, TrickDone(tricks=(BOOST,)), game, "pt")
    assert "Reforçada por 9♦, uma segunda ronda:" in pt
    _, summary, _ = compose(composer, HandSummary(HandResult(3, (0, 26, 0, 0), (4, 65, 35, 26)),
                                                  tricks=(BOOST, replace(BOOST, number=6, boosted=False,
                                                                         plays=BOOST.plays[:4]))), game)
    assert "Trick 5: Ștefan Țurcanu 9♦ · Dana K♦ · Zoë Ávila 2♦ · João Brandão A♦; Boosted by 9♦, a second round:" \
        in summary


def test_the_boost_is_announced_and_the_boost_round_is_said_in_the_turn_mail(composer) -> None:
    first = sample_game(**TURBO, trick_boosted=True, trick=(Play(3, "9C"),), to_move=0, legal=(), trick_number=6)
    _, text, _ = compose(composer, CardPlayed(seat=3, card="9C"), first)
    assert "Trick 6 so far: Dana 9♣ 9♣ boosts the trick: everyone plays one more card." in text
    boost_round = sample_game(**TURBO, trick_boosted=True, boost_round=True, trick_number=6,
                              trick=(Play(3, "9C"), Play(0, "KC"), Play(1, "3C"), Play(2, "5C"), Play(3, "4C"),
                                     Play(0, "2C")), to_move=1, legal=("9C",),
                              hand=("AS", "KS", "4S", "JH", "TH", "2H", "9C", "AD"))
    message, text, _ = compose(composer, YourTurn("play"), boost_round)
    assert text.startswith("Your turn: trick 6's boost round, you may play 9♣")
    assert ("Trick 6 so far: Dana 9♣ · Zoë Ávila K♣ · João Brandão 3♣ · Ștefan Țurcanu 5♣ Boost round: Dana 4♣ · "
            "Zoë Ávila 2♣") in text
    assert ("This is the boost round: 9♣ boosted the trick, so everyone plays one more card to it, following the "
            "suit led if they can.") in text
    assert headers(message)["X-Hearts-Legal"] == "9C"
    _, ro, _ = compose(composer, YourTurn("play"), boost_round, "ro")
    assert "Aceasta este runda în plus: 9♣ a dublat levata" in ro


# -- the hand summary, moon=win -------------------------------------------------------------------------


@pytest.mark.parametrize(("multiplier", "english"), [
    ((1, 1, 1, 2), "Dana took 10♣: their hand score is doubled."),
    ((1, 1, 1, 4), "Dana took 10♣, which was charged: their hand score is quadrupled."),
    ((1, 2, 1, 1), "You took 10♣: your hand score is doubled."),
])
def test_the_hand_summary_shows_the_charges_their_values_and_the_ten_of_clubs(composer, multiplier, english) -> None:
    summary = HandSummary(HandResult(3, (26, 0, 16, -20), (30, 39, 51, 6)), charges=(("QS",), (), (), ("AH",)),
                          multiplier=multiplier)
    summary = replace(summary, taken=(Taken(0, cards=("QS",)), Taken(2, hearts=8)))
    _, text, _ = compose(composer, summary, sample_game(**TURBO))
    assert "Charged this hand: Zoë Ávila Q♠; Dana A♥." in text
    assert english in text
    assert "Zoë Ávila Q♠ ×2" in text and "Ștefan Țurcanu 8 hearts ×2" in text
    _, pt, _ = compose(composer, summary, sample_game(**TURBO), "pt")
    assert "Anunciadas nesta mão: Zoë Ávila Q♠; Dana A♥." in pt


def test_a_moon_that_wins_the_game_at_once_in_the_hand_and_game_summaries(composer) -> None:
    moon = Moon(shooter=3, scoring="win", total=77)
    over = sample_game(phase="over", to_move=None, legal=(), trick=(), hand=(), totals=(30, 39, 35, 26))
    _, text, _ = compose(composer, HandSummary(HandResult(3, (0, 0, 0, 0), (30, 39, 35, 26), moon)), over)
    assert "Dana took every penalty card and wins the game at once." in text
    assert text.startswith("Hand 3 over: Dana took every penalty card and wins the game")
    _, text, _ = compose(composer, GameSummary(winners=(3,), totals=(30, 39, 35, 26), moon_win=moon), over)
    assert "Dana took every penalty card and wins the game at once. The game is over: Dana won." in text
    _, mine, _ = compose(composer, GameSummary(winners=(1,), totals=(30, 39, 35, 26),
                                               moon_win=replace(moon, shooter=1)), over)
    assert "You took every penalty card, and win the game at once!" in mine
    _, pt, _ = compose(composer, GameSummary(winners=(3,), totals=(30, 39, 35, 26), moon_win=moon), over, "pt")
    assert "Dana levou todas as cartas de penalização e ganha o jogo de imediato." in pt
    _, ro, _ = compose(composer, GameSummary(winners=(3,), totals=(30, 39, 35, 26), moon_win=moon), over, "ro")
    assert "Dana a luat toate cărțile de penalizare și câștigă jocul pe loc." in ro


def test_the_rules_in_words(composer) -> None:
    _, text, _ = compose(composer, Rules(TURBO_RULES), sample_game())
    assert "Whoever takes 10♣ doubles their hand score." in text
    assert "each player may charge (show to the table) any of A♥, Q♠, J♦, and 10♣ that they hold" in text
    assert "Booster Nines: a nine led, or played following suit, boosts the trick" in text
    _, one, _ = compose(composer, Rules({**TURBO_RULES, "charge_limit": 1}), sample_game())
    assert "may charge (show to the table) one of A♥, Q♠, J♦, and 10♣, if they hold it" in one
    _, two, _ = compose(composer, Rules({**TURBO_RULES, "charge_limit": 2}), sample_game(), "ro")
    assert "cel mult 2 cărți dintre A♥, Q♠, J♦ și 10♣" in two
    _, dnf, _ = compose(composer, Rules(DNF_RULES), sample_game())
    assert "Shooting the moon (taking every penalty card) wins the game at once." in dnf


@pytest.mark.parametrize("problem", ["BAD_CHARGE_LIMIT", "CHARGE_LIMIT_NEEDS_TURBO", "TURBO_NEEDS_TEN_OF_CLUBS"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_refused_turbo_rules_say_why(composer, problem, language) -> None:
    _, text, _ = compose(composer, RequestRejected("BAD_RULES", {"problem": problem, "value": 7}), None, language)
    assert "Those options cannot be used together" not in text and problem not in text
    assert ("charge_limit: 7" in text) if problem != "TURBO_NEEDS_TEN_OF_CLUBS" else ("10♣" in text)


# -- driven through the engine: what each seat's mails may know -----------------------------------------

def engine_mail(composer, state, seat: int, detail: object, language: str = "en"):
    """A mail to ``seat`` of an engine position, its context from ``game_context`` (seat 0 holds Q♠ 10♣
    J♦, seat 1 A♥ and 9♣, its only club, seats 2 and 3 nothing chargeable: the deal that
    tests/integration/test_variant_mails_turbo.py plays by mail)."""
    game, seats = rows(state)
    ctx = MailContext(recipient=Recipient(NAMES[seat], f"p{seat}@players.test", language=language),  # type: ignore[arg-type]
                      detail=detail, game=game_context(SVC, game, seats, state, seat))  # type: ignore[arg-type]
    message = message_from_bytes(composer.compose(ctx.kind, ctx).raw, policy=policy.default)
    text = " ".join(message.get_body(("plain",)).get_content().split())  # type: ignore[union-attr]
    return ctx, message, text


def charging_state():
    rules = EngineRules.make("turbo-nines", pass_cycle=["hold"])
    return new_game(rules).deal(tuple(TURBO_DECK))


def test_before_the_reveal_no_seat_learns_another_seats_charge(composer) -> None:
    state = charging_state()
    assert state.phase == "charge" and state.seats_to_charge() == (0, 1)
    state, _ = apply(state, ChargeCards(0, ("QS", "TC")))
    for seat in (1, 2, 3):
        ctx, message, text = engine_mail(composer, state, seat, YourTurn("charge") if seat == 1 else ChargeDone())
        assert ctx.game.charges == () and ctx.game.own_charge in (None, ())
        assert ctx.game.waiting_for == ((1,) if seat == 1 else ())  # nobody else named as still charging
        assert "Ana" not in text.split("Your hand")[0].split("Hello")[1]
        x = "\n".join(f"{k}: {v}" for k, v in message.items() if k.startswith("X-Hearts"))
        assert "QS" not in x.split() and "TC" not in x.split()
    own, _, text = engine_mail(composer, state, 0, ChargeDone())
    assert own.game.own_charge == ("TC", "QS") and own.game.charges == ()
    assert "You charge Q♠ and 10♣: the table learns them once everyone has decided." in text
    # The seats with nothing chargeable were never asked, and are not told who is.
    _, _, nothing = engine_mail(composer, state, 2, ChargeDone())
    assert "You hold none of the cards that can be charged" in nothing


def test_the_charge_mail_from_the_engine_and_the_reveal_to_everyone(composer) -> None:
    state = charging_state()
    ctx, message, text = engine_mail(composer, state, 0, YourTurn("charge"))
    assert ctx.game.charge_choices == ("TC", "JD", "QS")
    assert dict(ctx.game.charge_values) == {"TC": 0, "JD": -10, "AH": 1, "QS": 13}
    assert message["X-Hearts-Legal"] == "TC JD QS none" and message["X-Hearts-Charge-Limit"] == "4"
    assert "You hold Q♠, 10♣, and J♦: you may charge any of them, or none." in text
    state, _ = apply(state, ChargeCards(0, ("QS", "TC")))
    state, events = apply(state, ChargeCards(1, ("AH",)))
    assert state.charges_revealed
    for seat, mine in ((0, "Ana (you) Q♠ 10♣; Bruno A♥"), (2, "Ana Q♠ 10♣; Bruno A♥")):
        ctx, _, text = engine_mail(composer, state, seat, ChargesRevealed())
        assert ctx.game.charges == (("TC", "QS"), ("AH",), (), ())
        assert f"Charged this hand: {mine}." in text


def test_a_boosted_first_trick_from_the_engine(composer) -> None:
    state = charging_state()
    state, _ = apply(state, ChargeCards(0, ("QS", "TC")))
    state, _ = apply(state, ChargeCards(1, ()))
    for card in ("2C", "9C", "5C", "JC"):  # 9♣ follows the lead: the trick boosts
        state, _ = apply(state, PlayCard(state.to_move, card))
    assert state.trick_boosted and state.boost_round and state.to_move == 0
    ctx, message, text = engine_mail(composer, state, 0, YourTurn("play"))
    assert ctx.game.legal == ("3C", "4C") and ctx.game.held_back == ("TC",)
    assert message["X-Hearts-Legal"] == "3C 4C"
    assert "Trick 1 so far: Ana 2♣ · Bruno 9♣ · Carla 5♣ · Dinu J♣ This is the boost round: 9♣ boosted" in text
    assert "You charged 10♣, so it waits" in text
    for card in ("3C",):
        state, _ = apply(state, PlayCard(0, card))
    _, _, watching = engine_mail(composer, state, 2, TrickDone())
    state, _ = apply(state, PlayCard(1, state.legal_cards()[0]))
    state, _ = apply(state, PlayCard(2, "6C"))
    state, events = apply(state, PlayCard(3, "AC"))
    won = [e for e in events if type(e).__name__ == "TrickWon"][0]
    assert won.boosted and len(won.cards) == 8
    ctx, _, text = engine_mail(composer, state, 2, TrickDone())
    assert ctx.game.last_trick is not None and ctx.game.last_trick.boosted
    assert "Trick 1: Ana 2♣ · Bruno 9♣ · Carla 5♣ · Dinu J♣ Boosted by 9♣, a second round: Ana 3♣ · Bruno " in text
    assert "Dinu took it" in text


def test_the_pass_of_a_turbo_hand_comes_before_any_charge(composer) -> None:
    """Before the hand's charge phase there is no charge to show (the engine's charges are empty)."""
    rules = EngineRules.make("turbo")
    state = new_game(rules).deal(tuple(TURBO_DECK))
    assert state.phase == "pass"
    ctx, message, text = engine_mail(composer, state, 0, YourTurn("pass", started=True, rules=rules.to_dict()))
    assert ctx.game.turbo and ctx.game.own_charge is None and ctx.game.charges == ()
    assert message["X-Hearts-Decision"] == "pass"
    assert "Whoever takes 10♣ doubles their hand score." in text
