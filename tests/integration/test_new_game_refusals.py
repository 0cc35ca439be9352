"""A refused new game says why, with the details, in the player's language (README, "Starting a
game"): a sentence for every code the engine's rules raise (``InvalidRules``, read from
pbem/engine's sources, so a code added there without a sentence fails here), for the option reader's
(pbem.services.game_options) and for the timing's (pbem.services.deadlines). No raw code reaches the
player; for an unknown preset, the presets and the closest one. The command line prints the same
sentence in English (test_cli_game_new_options). A new-game mail for Cancellation Hearts (RULES.md §6.6)
keeps its ``players: N`` and makes a two-deck game of that many seats; the combinations two decks
refuse come back as sentences.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.db.models import Player
from pbem.db.session import transaction
from pbem.engine import InvalidRules, Rules
from pbem.mail.context import MailContext, Recipient, RequestRejected
from pbem.mail.i18n import LANGUAGES
from pbem.mail.render import MailRenderer
from pbem.services.app import Services
from pbem.services.games import get_or_create_player
from pbem.services.operator import explain
from tests.integration.mailplay import answer, last_outcome, state_of, text_of
from tests.integration.test_new_game_options import created, refusal, request

ROOT = Path(__file__).resolve().parents[2]

#: problem -> (details, the English sentence's words, the details each language's sentence names).
REFUSALS: dict[str, tuple[dict, str, tuple[str, ...]]] = {
    # the engine's (pbem/engine/rules.py), RULES.md §3-§6
    "BAD_PLAYERS": ({"players": 9}, "A game cannot be played by 9 players", ("9", "3", "7", "6", "10", "cancellation")),
    "UNKNOWN_PRESET": ({"preset": "omnibsu", "presets": ["black-maria", "omnibus", "standard"],
                        "suggestion": "omnibus"},
                       "There is no rule set called “omnibsu”. Did you mean “omnibus”? The rule sets are: "
                       "black-maria, omnibus, standard.", ("omnibsu", "omnibus", "black-maria", "standard")),
    "UNKNOWN_OPTION": ({"options": ["taget"], "suggestions": {"taget": "target"}},
                       "There is no option called “taget”. Did you mean “target”?", ("taget", "target")),
    "BAD_CARD": ({"option": "removed_cards", "card": "ZZ"}, "“ZZ” in “removed_cards” is not a card",
                 ("ZZ", "removed_cards")),
    "BAD_CHOICE": ({"option": "moon", "value": "maybe", "choices": ["old", "new", "choice"]},
                   "“maybe” is not a choice for “moon”: write one of old, new, choice.",
                   ("maybe", "moon", "old, new, choice")),
    "NOT_A_BOOL": ({"option": "sun", "value": "perhaps"}, "“sun” is “yes” or “no”, not “perhaps”.",
                   ("sun", "perhaps")),
    "NOT_AN_INT": ({"option": "target", "value": "fifty"}, "“target” needs a whole number", ("target", "fifty")),
    "DECK_DOES_NOT_DIVIDE": ({"cards": 52, "players": 5}, "52 cards do not divide among 5 players", ("52", "5")),
    "EMPTY_PASS_CYCLE": ({}, "“pass_cycle” needs at least one direction", ("pass_cycle", "pass_count: 0")),
    "BAD_PASS_COUNT": ({"pass_count": 6}, "“pass_count: 6” cannot be played: a pass is 0 to 4 cards",
                       ("pass_count: 6", "4")),
    "ACROSS_NEEDS_EVEN_PLAYERS": ({"players": 5}, "With 5 players nobody sits across the table", ("5", "across")),
    "SCATTER_DOES_NOT_DIVIDE": ({"pass_count": 3, "players": 5},
                                "A “scatter” pass gives each of the 4 other players the same number of cards, "
                                "so with 5 players it cannot be 3 cards.", ("4", "5", "3", "scatter")),
    "NEGATIVE_PENALTY": ({"option": "qs_penalty", "value": -13}, "“qs_penalty” is a number of penalty points, "
                         "0 or more, not -13.", ("qs_penalty", "-13")),
    "BAD_EXTRA_PENALTY": ({"card": "KS", "value": 0}, "K♠ cannot count “0”", ("K♠", "0")),
    "BONUS_MUST_NOT_BE_POSITIVE": ({"value": 5}, "“avoid_all_tricks_bonus” is taken off a score, so it is 0 or "
                                   "less (such as -5), not 5.", ("avoid_all_tricks_bonus", "5")),
    "BAD_TARGET": ({"target": 0}, "“target: 0” cannot be played", ("target: 0",)),
    "BAD_END_AFTER_HANDS": ({"value": -2}, "“end_after_hands” is a number of hands, 1 or more, not “-2”.",
                            ("end_after_hands", "-2")),
    "SUN_NEEDS_MOON": ({}, "The sun (taking every trick) is scored like the moon, so it cannot be played with "
                       "“moon: none”.", ("moon: none",)),
    "NO_CLUB_TO_LEAD": ({"first_lead": "two_of_clubs"}, "“first_lead: two_of_clubs” needs a club in the deck",
                        ("first_lead: two_of_clubs", "left_of_dealer")),
    "BONUS_CARD_IS_PENALTY": ({"card": "QS"}, "Q♠ counts penalty points in these rules, so it cannot be the "
                              "bonus card as well", ("Q♠", "bonus_card")),
    "BONUS_CARD_REMOVED": ({"card": "JD"}, "The bonus card, J♦, is taken out of the deck", ("J♦", "bonus_card")),
    "NO_PENALTY_CARDS": ({}, "No card counts penalty points in these rules, so nobody can shoot the moon",
                         ("moon: none",)),
    # §6.1 partnership, §6.2 kitty
    "PARTNERSHIP_NEEDS_FOUR_PLAYERS": ({"players": 5}, "a partnership game is played by 4 players, not 5.",
                                       ("4", "5")),
    "PASS_TO_PARTNER_NEEDS_PARTNERSHIP": ({}, "“pass_to_partner” passes your cards to your partner, so it needs "
                                          "partners", ("pass_to_partner", "partnership: team",
                                                       "partnership: individual")),
    "KITTY_NEEDS_PLAYERS": ({"kitty": "first_trick", "players": 4, "allowed": [3, 5]},
                            "“kitty: first_trick” is played by 3 or 5 players, not 4.", ("first_trick", "3", "5", "4")),
    "KITTY_WITH_REMOVED_CARDS": ({"kitty": "penalty"}, "With a kitty (“kitty: penalty”) no cards are taken out "
                                 "of the deck", ("kitty: penalty", "removed_cards")),
    "KITTY_EXCHANGE_NEEDS_KITTY": ({}, "“kitty_exchange” exchanges cards with the kitty, so it needs one",
                                   ("kitty_exchange", "kitty: penalty", "kitty: first_trick", "kitty: first_penalty")),
    # §6.3 passing variants
    "CALL_NEEDS_PASSING": ({}, "“dealer_calls_pass” lets the dealer call each hand's pass, so it needs passing",
                           ("dealer_calls_pass", "pass_count: 0")),
    "CALL_WITH_PASS_TO_PARTNER": ({}, "With “pass_to_partner” every pass goes to your partner, so there is nothing "
                                  "for the dealer to call", ("dealer_calls_pass", "pass_to_partner")),
    # §6.4 Turbo
    "BAD_CHARGE_LIMIT": ({"value": 7}, "“charge_limit: 7” cannot be played: a player charges 1 to 4 cards",
                         ("charge_limit: 7", "1", "4")),
    "CHARGE_LIMIT_NEEDS_TURBO": ({"value": 1}, "“charge_limit: 1” is the most cards a player may charge, so it "
                                 "needs charges", ("charge_limit: 1", "turbo")),
    "TURBO_NEEDS_TEN_OF_CLUBS": ({}, "Turbo Hearts needs 10♣ in the deck", ("10♣", "removed_cards")),
    # §6.6 Cancellation (two decks)
    "TWO_DECKS_NEED_PLAYERS": ({"players": 5, "allowed": [6, 10]},
                               "two decks (“decks: 2”) are played by 6 to 10 players, not 5.",
                               ("decks: 2", "6", "10", "5")),
    "NOT_WITH_TWO_DECKS": ({"option": "turbo", "value": True}, "“turbo” cannot be played with two decks",
                           ("turbo", "decks: 2")),
    # the option reader's and the timing's
    "NOT_A_MAP": ({"option": "extra_penalties", "value": "KS ten"}, "“extra_penalties” takes cards with their "
                  "points, such as “extra_penalties: KS 10, AS 7”, not “KS ten”.", ("extra_penalties", "KS ten")),
    "BAD_BOT_STRENGTH": ({"value": "brutal", "strengths": ["random", "heuristic", "strong"]},
                         "“brutal” is not a kind of computer player: write random (easy), heuristic (medium), "
                         "or strong", ("brutal", "random", "heuristic", "strong")),
    "PRESET_AS_OPTION": ({"option": "preset"}, "The rule set is named once", ("preset",)),
    "BAD_DEADLINE": ({"value": "forever"}, "“deadline: forever” cannot be used", ("deadline: forever",)),
    "BAD_GRACE": ({"value": "lots"}, "“grace: lots” cannot be used", ("grace: lots",)),
    "BAD_REMINDER": ({"value": "often"}, "“reminder: often” cannot be used", ("reminder: often",)),
    "BAD_WEEKENDS": ({"value": "maybe"}, "“weekends: maybe” is not a choice", ("weekends: maybe",)),
    "BAD_POLICY": ({"value": "wait"}, "“policy: wait” is not a choice", ("policy: wait",)),
}
FALLBACK = "Those options cannot be used together"


def engine_codes() -> set[str]:
    """Every code the engine's rules raise, read from its sources."""
    text = "\n".join(path.read_text() for path in (ROOT / "pbem" / "engine").glob("*.py"))
    return set(re.findall(r'InvalidRules\(\s*"([A-Z_]+)"', text))


@pytest.fixture(scope="module")
def renderer() -> MailRenderer:
    return MailRenderer(ROOT / "templates")


def rendered(renderer: MailRenderer, language: str, problem: str, details: dict) -> tuple[str, str]:
    """The refusal's text (on one line) and HTML, in ``language``."""
    me = Recipient("João", "joao@example.pt", language)
    detail = RequestRejected("BAD_RULES", {"problem": problem, **details}, new_game_address="new@hearts.test")
    mail = renderer.render(MailContext(me, detail, None))
    return " ".join(mail.text.split()), mail.html


def test_every_code_the_engine_raises_has_a_sentence() -> None:
    assert {"DECK_DOES_NOT_DIVIDE", "UNKNOWN_PRESET", "SUN_NEEDS_MOON"} <= engine_codes()
    assert engine_codes() <= set(REFUSALS), sorted(engine_codes() - set(REFUSALS))


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_refusal_names_its_details_in_every_language(renderer: MailRenderer, language: str) -> None:
    fallback, _ = rendered(renderer, language, "NO_SUCH_PROBLEM", {})
    sentences = set()
    for problem, (details, english, named) in REFUSALS.items():
        text, html = rendered(renderer, language, problem, details)
        if language == "en":
            assert english in text, (problem, text)
        assert FALLBACK not in text or problem == "NO_SUCH_PROBLEM"
        for part in (text, html):
            assert problem not in part and "BAD_RULES" not in part, (problem, language)  # no raw code
        for value in named:
            assert value in text, (problem, language, value, text)
        sentences.add(text)
    assert len(sentences) == len(REFUSALS)  # each its own sentence
    assert fallback not in sentences


def test_the_command_line_gives_the_english_sentence() -> None:
    for problem, (details, english, _) in REFUSALS.items():
        assert english in explain(problem, details), problem


def test_real_refusals_from_the_engine_are_explained_in_the_player_s_language(svc: Services) -> None:
    """The engine's own details (not the samples above) make the sentence, in pt and ro too."""
    with pytest.raises(InvalidRules) as raised:
        Rules.make("standard", players=5, removed_cards=())
    assert (raised.value.code, raised.value.details) == ("DECK_DOES_NOT_DIVIDE", {"cards": 52, "players": 5})
    with transaction(svc.session_factory) as session:
        get_or_create_player(session, "ana@players.test", "Ana", language="pt")
    text = refusal(svc, "jogo novo\njogadores: 5\ncartas removidas: nenhuma\nrobôs: 4")
    assert "52 cartas não se dividem por 5 jogadores" in text and "DECK_DOES_NOT_DIVIDE" not in text
    text = refusal(svc, "jogo novo\nregras: omnibsu\nrobôs: 3")
    assert "Não existe um conjunto de regras chamado “omnibsu”." in text and "black-maria" in text
    with transaction(svc.session_factory) as session:
        session.scalars(select(Player).where(Player.address == "ana@players.test")).one().language = "ro"
    text = refusal(svc, "joc nou\nroboți: 2 brutali, 1 random")
    assert "„brutali” nu este un tip de jucător calculator" in text and "random (ușor)" in text
    text = refusal(svc, "joc nou\njucători: 5\nciclu de pasare: stanga vizavi\nroboți: 4")
    assert "Cu 5 jucători nu stă nimeni vizavi" in text


@pytest.mark.parametrize("players, hand, kitty", [(6, 17, 2), (10, 10, 4)])
def test_a_cancellation_game_by_mail_keeps_its_players(svc: Services, players: int, hand: int, kitty: int) -> None:
    """``rules: cancellation`` with ``players: N``: N seats, two decks, the hand and kitty sizes of RULES.md
    §6.6 (the 104 cards dealt as far as they go, equally) once the person accepts their seat, and the
    person asked to pass from such a hand."""
    mails = request(svc, f"new game\nrules: cancellation\nplayers: {players}\nbots: {players - 1}")
    rules, seats = created(svc)
    assert (rules.preset, rules.decks, rules.players, len(seats)) == ("cancellation", 2, players, players)
    assert (rules.first_lead, rules.pass_cycle, rules.removed_cards) == ("left_of_dealer", ("left", "right"), ())
    assert rules.table.kitty_size == kitty and rules.table.moon_total == 52
    assert seats == [("ana@players.test", None)] + [(None, "random")] * (players - 1)
    game = last_outcome(svc)["game"]
    (invitation,) = [m for m in mails if m.kind == "invitation"]
    started = answer(svc, invitation, "accept")  # the person's own seat: the game begins
    state = state_of(svc, game)
    # Dealt: the person's hand as dealt, the bots' as dealt or after their pass.
    assert state.decks == 2 and len(state.hand(0)) == hand
    assert all(len(state.hand(s)) in (hand, hand - rules.pass_count) for s in range(1, players)), state
    assert len(state.kitty) == kitty
    ask = [m for m in started if m.kind == "your_turn" and m.recipient == "ana@players.test"]
    assert len(ask) == 1 and f"Your hand ({hand} cards)" in " ".join(text_of(ask[0]).split())
    # In Portuguese and Romanian too.
    request(svc, f"jogo novo\nregras: cancellation\njogadores: {players}\nrobôs: {players - 1}")
    assert created(svc)[0].players == players
    request(svc, f"joc nou\nreguli: cancellation\njucători: {players}\nroboți: {players - 1}")
    assert created(svc)[0].players == players


def test_what_two_decks_refuse_is_explained_by_mail(svc: Services) -> None:
    text = refusal(svc, "new game\nrules: cancellation\nplayers: 5\nbots: 4")
    assert "two decks (“decks: 2”) are played by 6 to 10 players, not 5." in text
    text = refusal(svc, "new game\nrules: cancellation\nplayers: 11\nbots: 10")
    assert "are played by 6 to 10 players, not 11." in text
    text = refusal(svc, "new game\nplayers: 9\nbots: 8")
    assert "A game cannot be played by 9 players" in text and "6 to 10 with two decks" in text
    text = refusal(svc, "new game\nrules: cancellation\nturbo: yes\nbots: 7")
    assert "“turbo” cannot be played with two decks" in text
    text = refusal(svc, "new game\nrules: cancellation\nremoved_cards: 2C 2D\nbots: 7")
    assert "“removed_cards” cannot be played with two decks" in text
    text = refusal(svc, "new game\nrules: cancellation\npass_cycle: left mix\nbots: 7")
    assert "“pass_cycle” cannot be played with two decks" in text and "mix" in text
    # Two decks on the standard rules keep its 2♣ lead, which two decks refuse (two players hold one).
    text = refusal(svc, "new game\ndecks: 2\nplayers: 6\nbots: 5")
    assert "“first_lead” cannot be played with two decks" in text
    text = refusal(svc, "new game\nrules: cancellation\ndecks: 3\nbots: 7")
    assert "“3” is not a choice for “decks”" in text
