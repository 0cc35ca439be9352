"""A game started by mail to ``new@`` with any RULES.md §3/§6 option written as ``name: value``
(README, "Starting a game"): ``players: N`` kept (it used to be dropped, so every game by mail had
the preset's count), lists and maps, booleans, numbers and words in en/pt/ro, and the computer
players' strengths (``bots: 3 strong``, ``bots: 2 heuristic, 1 random``). Through the services on
the test's database; what was created is read back from it.
"""

from __future__ import annotations

import itertools

from sqlalchemy import select

from pbem.db.models import Game, OutboundMessage, SeatStatus
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from tests.integration.mailplay import DOMAIN, deliver, last_outcome, prose_of, text_of

NEW = f"new@{DOMAIN}"
_ids = itertools.count(1)


def request(svc: Services, body: str, sender: str = "ana@players.test") -> list[OutboundMessage]:
    """A mail to new@ from ``sender``; the mails it caused."""
    raw = (f"From: Ana <{sender}>\r\nTo: {NEW}\r\nSubject: Friday game\r\n"
           f"Message-ID: <ng-{next(_ids)}@players.test>\r\nMIME-Version: 1.0\r\n"
           "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n").encode()
    return deliver(svc, raw, sender, NEW)


def created(svc: Services) -> tuple[Rules, list[tuple[str | None, str | None]]]:
    """The rules and seats (address, bot) of the game the last mail created."""
    outcome = last_outcome(svc)
    assert outcome["code"] == "GAME_CREATED", outcome
    with transaction(svc.session_factory) as session:
        game = session.get(Game, outcome["game"])
        seats = [(s.player.address if s.player else None, s.bot) for s in sorted(game.seats, key=lambda s: s.seat)]
        return Rules.from_dict(game.rules), seats


def refusal(svc: Services, body: str) -> str:
    """The one mail answering a refused request, its text on one line."""
    (answer,) = request(svc, body)
    assert answer.kind == "request_rejected", answer.kind
    return prose_of(answer)


def test_players_n_by_mail_makes_that_many_seats(svc: Services) -> None:
    request(svc, "new game\nplayers: 5\nbots: 4")
    rules, seats = created(svc)
    assert rules.players == 5 and len(seats) == 5
    assert rules.removed_cards == ("2C", "2D")  # RULES.md §4 for five players
    assert seats == [("ana@players.test", None)] + [(None, "random")] * 4  # PBEM_DEFAULT_BOT
    # In Portuguese and Romanian, and with the other players' addresses named as before.
    request(svc, "jogo novo\njogadores: 3\nregras: black maria\nrobôs: 1\ncom: bob@players.test")
    rules, seats = created(svc)
    assert (rules.players, rules.preset, rules.removed_cards) == (3, "black-maria", ("2C",))
    assert seats == [("ana@players.test", None), ("bob@players.test", None), (None, "random")]
    request(svc, "joc nou\njucători: 5\ncu: bob@players.test, cid@players.test\nroboți: 2")
    rules, seats = created(svc)
    assert rules.players == 5 and [a for a, _ in seats] == ["ana@players.test", "bob@players.test",
                                                            "cid@players.test", None, None]
    request(svc, "new game\nplayers: bob@players.test, cid@players.test\nbots: 1")  # addresses, as always
    rules, seats = created(svc)
    assert rules.players == 4 and [a for a, _ in seats][:3] == ["ana@players.test", "bob@players.test",
                                                                "cid@players.test"]
    # A count that does not add up is told with the numbers; a count that is no number, too.
    text = refusal(svc, "new game\nplayers: 5\nbots: 2")
    assert "These rules need 5 players, but your mail names 1 people (you included) and 2 bots." in text
    text = refusal(svc, "new game\nplayers: five\nbots: 2")
    assert "“players” needs a whole number" in text and "“five”" in text


def test_players_with_the_variants_options(svc: Services) -> None:
    request(svc, "new game\nplayers: 3\nkitty: first trick\nkitty_exchange: yes\nbots: 2")
    rules, seats = created(svc)
    assert (rules.players, rules.kitty, rules.kitty_exchange, len(seats)) == (3, "first_trick", True, 3)
    request(svc, "new game\nplayers: 5\nkitty: first_penalty\nbots: 4")
    rules, seats = created(svc)
    assert (rules.players, rules.kitty, len(seats)) == (5, "first_penalty", 5)
    request(svc, "new game\nrules: partnership individual\npartner_moon: charged\npass_to_partner: sim\nbots: 3")
    rules, _ = created(svc)
    assert (rules.preset, rules.partnership, rules.partner_moon, rules.pass_to_partner) == (
        "partnership-individual", "individual", "charged", True)
    request(svc, "new game\nparceria: equipa\nbots: 3")
    assert created(svc)[0].partnership == "team"
    request(svc, "new game\nrules: kitty\nbots: 3")
    assert created(svc)[0].kitty == "penalty"
    # RULES.md §6.4, §6.5, §6.7
    request(svc, "new game\nrules: turbo\ncharge_limit: 1\nbots: 3 strong")
    rules, seats = created(svc)
    assert (rules.preset, rules.turbo, rules.jd_bonus, rules.charge_limit) == ("turbo", True, -10, 1)
    request(svc, "new game\nrules: turbo nines\nbots: 3")
    rules, _ = created(svc)
    assert (rules.preset, rules.turbo, rules.booster_nines) == ("turbo-nines", True, True)
    request(svc, "new game\nbooster_nines: yes\nmoon: win\nbots: 3")
    rules, _ = created(svc)
    assert (rules.preset, rules.turbo, rules.booster_nines, rules.moon) == ("standard", False, True, "win")
    request(svc, "new game\nrules: dnf\nbots: 3")
    rules, _ = created(svc)
    assert (rules.moon, rules.dealer_calls_pass, rules.qs_penalty, rules.table.moon_total) == ("win", True, 26, 77)


def test_lists_maps_booleans_numbers_and_words(svc: Services) -> None:
    request(svc, "new game\nplayers: 5\nremoved_cards: 2D 2C\npass_cycle: left right hold\n"
                 "extra_penalties: KS 10, AS 7\nsun: yes\ntarget: 50\njd_bonus: -10\nmoon: new\n"
                 "first_lead: left of dealer\nbots: 4")
    rules, _ = created(svc)
    assert rules.removed_cards == ("2C", "2D") and rules.pass_cycle == ("left", "right", "hold")
    assert rules.extra_penalties == (("KS", 10), ("AS", 7))
    assert (rules.sun, rules.target, rules.jd_bonus, rules.moon, rules.first_lead) == (
        True, 50, -10, "new", "left_of_dealer")
    # The other ways of writing a map, cards with symbols, booleans and words in pt and ro.
    for written in ("KS=10 AS=7", "K♠ 10, A♠ 7", "ks: 10; as: 7"):
        request(svc, f"new game\nextra_penalties: {written}\nbots: 3")
        assert created(svc)[0].extra_penalties == (("KS", 10), ("AS", 7)), written
    request(svc, "jogo novo\njogadores: 5\ncartas removidas: 2♦, 3♦\nlua: nova\nsol: sim\nqs_breaks_hearts: não\n"
                 "ciclo de passe: esquerda direita manter\nrobôs: 4")
    rules, _ = created(svc)
    assert (rules.removed_cards, rules.moon, rules.sun, rules.qs_breaks_hearts) == (("2D", "3D"), "new", True, False)
    assert rules.pass_cycle == ("left", "right", "hold")
    request(svc, "joc nou\nluna: veche\nsoare: da\nlowest_wins: nu\ncarti scoase: nimic\nroboți: 3")
    rules, _ = created(svc)
    assert (rules.moon, rules.sun, rules.lowest_wins, rules.removed_cards) == ("old", True, False, ())
    request(svc, "new game\nend_after_hands: 2\ncan_lead_hearts_instead_of_qs: on\nbots: 3")
    rules, _ = created(svc)
    assert (rules.end_after_hands, rules.can_lead_hearts_instead_of_qs) == (2, True)


def test_the_computer_players_strengths(svc: Services) -> None:
    request(svc, "new game\nbots: 2 heuristic, 1 random")
    assert created(svc)[1] == [("ana@players.test", None), (None, "heuristic"), (None, "heuristic"), (None, "random")]
    request(svc, "new game\nbots: 3 strong")
    assert [b for _, b in created(svc)[1]] == [None, "strong", "strong", "strong"]
    request(svc, "new game\nbots: 3")  # the server's default bot
    assert [b for _, b in created(svc)[1]] == [None, "random", "random", "random"]
    for written, kinds in (("1 easy, 1 medium and 1 hard", ["random", "heuristic", "strong"]),
                           ("2 fortes e 1 fácil", ["strong", "strong", "random"]),
                           ("1 puternic, 2 mediu", ["strong", "heuristic", "heuristic"]),
                           ("3 strong bots", ["strong"] * 3)):
        request(svc, f"new game\nbots: {written}")
        assert [b for _, b in created(svc)[1]] == [None, *kinds], written
    with transaction(svc.session_factory) as session:  # every seat of a bot is a bot's
        game = session.get(Game, last_outcome(svc)["game"])
        assert [s.status for s in game.seats if s.bot] == [SeatStatus.BOT] * 3
    # A strength there is none of: the strengths there are.
    text = refusal(svc, "new game\nbots: 2 brutal, 1 random")
    assert ("“brutal” is not a kind of computer player: write random (easy), heuristic (medium), or strong, "
            "such as “bots: 2 strong, 1 random”.") in text
    assert "BAD_BOT_STRENGTH" not in text and "BAD_RULES" not in text


def test_unknown_names_and_presets_are_answered_with_the_closest(svc: Services) -> None:
    text = refusal(svc, "new game\nremove_cards: 2D\nbots: 3")
    assert "There is no option called “remove_cards”. Did you mean “removed_cards”?" in text
    text = refusal(svc, "new game\nrules: parnership\nbots: 3")
    assert "There is no rule set called “parnership”." in text
    assert "The rule sets are: " in text and "black-maria" in text and "standard" in text
    assert "Did you mean “partnership”?" in text and "partnership-individual" in text and "kitty" in text
    assert "UNKNOWN_PRESET" not in text and "UNKNOWN_OPTION" not in text


def test_combinations_the_rules_refuse_are_explained(svc: Services) -> None:
    """Each sentence with its details (every code, in every language: test_new_game_refusals)."""
    text = refusal(svc, "new game\nplayers: 5\nremoved_cards: none\nbots: 4")
    assert "52 cards do not divide among 5 players" in text and "DECK_DOES_NOT_DIVIDE" not in text
    text = refusal(svc, "new game\nplayers: 5\npass_cycle: left across\nbots: 4")
    assert "With 5 players nobody sits across the table: passing “across” needs 4 or 6 players." in text
    text = refusal(svc, "new game\nextra_penalties: KS ten\nbots: 3")
    assert "“extra_penalties” takes cards with their points, such as “extra_penalties: KS 10, AS 7”, not “KS ten”." in text
    text = refusal(svc, "new game\nremoved_cards: 2D ZZ\nbots: 3")
    assert "“ZZ” in “removed_cards” is not a card" in text
    text = refusal(svc, "new game\nsun: yes\nmoon: none\nbots: 3")
    assert "cannot be played with “moon: none”" in text
    text = refusal(svc, "new game\nmoon: " + "x" * 300 + "\nbots: 3")  # quoted back, but not all of it
    assert f"“{'x' * 60}” is not a choice for “moon”" in text and "x" * 61 not in text
    text = refusal(svc, "new game\nplayers: 5\npartnership: team\nbots: 4")
    assert "a partnership game is played by 4 players, not 5" in text
    text = refusal(svc, "new game\nkitty: first_trick\nbots: 3")
    assert "“kitty: first_trick” is played by 3 or 5 players, not 4." in text
    text = refusal(svc, "new game\ncharge_limit: 2\nbots: 3")
    assert "“charge_limit: 2” is the most cards a player may charge, so it needs charges" in text
    text = refusal(svc, "new game\nrules: turbo\ncharge_limit: 5\nbots: 3")
    assert "“charge_limit: 5” cannot be played: a player charges 1 to 4 cards." in text


def test_the_example_a_refusal_shows_is_a_mail_that_works(svc: Services) -> None:
    """The refusal's example with friends (a strength, a preset, an option) starts that game as written."""
    (answer,) = request(svc, "new game\nrules: omnibsu\nbots: 3")
    lines = [line.strip() for line in text_of(answer).splitlines() if line.startswith("    ")]
    example = lines[lines.index("players: ana@example.org, bob@example.net") - 1:][:5]
    assert example[0] == "new game" and "bots: 1 strong" in example
    request(svc, "\n".join(example))
    rules, seats = created(svc)
    assert (rules.preset, rules.target) == ("omnibus", 50)
    assert seats == [("ana@players.test", None), ("ana@example.org", None), ("bob@example.net", None),
                     (None, "strong")]
