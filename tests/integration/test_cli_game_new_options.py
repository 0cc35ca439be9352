"""``pbem game new`` reads options and computer players as a new-game mail does (one reader in the
services, pbem.services.game_options): ``--option "removed_cards=2D 2C"``, ``--option
"extra_penalties=KS 10, AS 7"``, ``--bots "2 heuristic, 1 random"``, ``--bot strong``, JSON values as
before; a refusal is the sentence a player would read, in English, never a raw code.
"""

from __future__ import annotations


import pytest
from pbem.db.models import Game
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from tests.integration.test_cli_game_new import env, game_new, games, started, svc  # noqa: F401 (fixtures)



def table(svc: Services, game_id: int) -> tuple[Rules, list[str | None]]:  # noqa: F811 (the fixture's name)
    with transaction(svc.session_factory) as session:
        game = session.get(Game, game_id)
        return Rules.from_dict(game.rules), [s.bot for s in sorted(game.seats, key=lambda s: s.seat)]


def test_lists_maps_and_strengths_as_in_a_mail(env: dict[str, str], svc: Services) -> None:  # noqa: F811
    game_id = started(env, "--player=ana@players.test", "--bots", "2 heuristic, 1 random", "--bot", "strong",
                      "--option", "players=5", "--option", "removed_cards=2D 2C",
                      "--option", "pass_cycle=left right hold", "--option", "extra_penalties=KS 10, AS 7",
                      "--option", "sun=yes", "--option", "moon=new", "--option", "first lead=left of dealer")
    rules, bots = table(svc, game_id)
    assert bots == [None, "strong", "heuristic", "heuristic", "random"]  # --bot first, then --bots
    assert (rules.players, rules.removed_cards, rules.pass_cycle) == (5, ("2C", "2D"), ("left", "right", "hold"))
    assert rules.extra_penalties == (("KS", 10), ("AS", 7))
    assert (rules.sun, rules.moon, rules.first_lead) == (True, "new", "left_of_dealer")
    # The same text by mail and by the command line makes the same rules; JSON values still work.
    game_id = started(env, "--player=ana@players.test", "--bots", "3 strong", "--option", "extra_penalties=KS=10 AS=7",
                      "--option", 'removed_cards=[]', "--option", "target=50")
    rules, bots = table(svc, game_id)
    assert bots == [None, "strong", "strong", "strong"]
    assert rules == Rules.make("standard", extra_penalties={"KS": 10, "AS": 7}, removed_cards=(), target=50)
    game_id = started(env, "--player=ana@players.test", "--bot", "easy", "--bot", "medium", "--bot", "hard",
                      "--preset", "Black Maria", "--option", "players=4")
    rules, bots = table(svc, game_id)
    assert (rules.preset, rules.players, bots) == ("black-maria", 4, [None, "random", "heuristic", "strong"])


def test_the_variants_options(env: dict[str, str], svc: Services) -> None:  # noqa: F811
    game_id = started(env, "--player=ana@players.test", "--bots", "2", "--option", "players=3",
                      "--option", "kitty=first trick", "--option", "kitty_exchange=yes")
    assert table(svc, game_id)[0].kitty == "first_trick"
    game_id = started(env, "--player=ana@players.test", "--bots", "3", "--preset", "partnership-individual",
                      "--option", "pass_to_partner=on")
    rules = table(svc, game_id)[0]
    assert (rules.partnership, rules.pass_to_partner) == ("individual", True)
    game_id = started(env, "--player=ana@players.test", "--bots", "3", "--preset", "turbo-nines",
                      "--option", "charge_limit=1")
    rules = table(svc, game_id)[0]
    assert (rules.turbo, rules.booster_nines, rules.charge_limit) == (True, True, 1)
    game_id = started(env, "--player=ana@players.test", "--bots", "3", "--preset", "dnf")
    assert table(svc, game_id)[0].moon == "win"


@pytest.mark.parametrize(("args", "sentence"), [
    (["--option", "players=5", "--option", "removed_cards=none"], "52 cards do not divide among 5 players"),
    (["--preset", "omnibsu"], "There is no rule set called “omnibsu”. Did you mean “omnibus”? The rule sets are: "),
    (["--option", "remove_cards=2D"], "There is no option called “remove_cards”. Did you mean “removed_cards”?"),
    (["--option", "extra_penalties=KS ten"], "“extra_penalties” takes cards with their points"),
    (["--bots", "2 brutal, 1 random"], "“brutal” is not a kind of computer player: write random (easy), "
                                       "heuristic (medium), or strong"),
    (["--bot", "brutal"], "“brutal” is not a kind of computer player"),
    (["--bots", "lots"], "I could not read “lots” as the value of “bots”"),
    (["--deadline", "forever"], "“deadline: forever” cannot be used"),
])
def test_a_refusal_is_the_players_sentence_in_english(env: dict[str, str], svc: Services,  # noqa: F811
                                                      args: list[str], sentence: str) -> None:
    before = games(svc)
    result = game_new(env, "--player=ana@players.test", *(["--bots", "3"] if "--bots" not in args else []), *args)
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert sentence in output, output
    assert not any(code in output for code in ("DECK_DOES_NOT_DIVIDE", "UNKNOWN_PRESET", "UNKNOWN_OPTION",
                                               "NOT_A_MAP", "BAD_BOT_STRENGTH", "BAD_OPTION", "BAD_DEADLINE"))
    assert games(svc) == before  # nothing created
