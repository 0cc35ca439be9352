"""pbem.engine: the rules of Hearts as a pure, immutable, standard-library-only core.

The public API, for the server and for bot authors::

    from pbem.engine import Rules, new_game, shuffled_deck

    rules = Rules.make("omnibus", target=50)          # a preset plus overrides (RULES.md §5)
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(7)))
    state = state.pass_cards(0, ["QS", "AS", "KS"])   # … every seat, in any order
    state.legal_cards()                               # ('2C',)
    state = state.play("2C")
    state, events = apply(state, PlayCard(state.to_move, card))  # the same, with what happened

See README.md ("The engine, for bot authors") for the whole tour.

A whole hand of any variant is driven by one loop over the phases: every decision is a move with its
legal choices (``legal_cards``, ``call_choices``, ``discard_choices``, ``moon_choices``, ``charge_choices``;
a pass is any ``pass_count`` cards of the hand, or ``DeclinePass`` when ``may_decline``), chance is a move drawn
outside (``Deal``, ``MixCards``), and the hand is over when the phase is back to ``deal`` or ``call``
(or ``over``)::

    def play_hand(state, rng):
        events = ()
        if state.phase == CALL:                                     # dealer_calls_pass: the dealer calls
            state, events = apply(state, CallPass(state.next_dealer, rng.choice(state.call_choices())))
        state, more = apply(state, Deal(shuffled_deck(state.rules, rng)))
        events += more
        for seat in state.seats_to_pass():                          # phase "pass" (not on hold hands)
            if state.may_decline and rng.random() < 0.5:            # pass_optional: forward, unseen
                move = DeclinePass(seat)
            else:
                move = PassCards(seat, tuple(rng.sample(state.hand(seat), state.t.pass_count)))
            state, more = apply(state, move)
            events += more
        while state.phase not in (DEAL, CALL, OVER):
            if state.phase == MIX:                                  # a mix hand: chance deals them back
                move = MixCards(shuffled_mix(state, rng))
            elif state.phase == CHARGE:                               # turbo: charge some chargeable cards, or none
                seat = state.seats_to_charge()[0]
                choices = state.charge_choices(seat)
                move = ChargeCards(seat, tuple(rng.sample(choices, rng.randint(0, min(len(choices), state.charge_limit)))))
            elif state.phase == PLAY:
                move = PlayCard(state.to_move, rng.choice(state.legal_cards()))
            elif state.phase == DISCARD:                            # kitty_exchange: the taker discards
                move = DiscardKitty(state.kitty_taker, tuple(rng.sample(state.discard_choices(), state.discard_count)))
            else:                                                   # MOON (moon=choice): the shooter answers
                move = ChooseMoon(state.shooter[0], rng.choice(state.moon_choices()))
            state, more = apply(state, move)
            events += more
        return state, events

Partnership Hearts (RULES.md §6.1): partners sit opposite, seats 0+2 and 1+3. In ``team`` mode both
partners carry the team's total and a team that takes every penalty card slams (``Moon(team=True)``;
under ``moon=choice`` its player who won the team's latest trick answers)::

    rules = Rules.make("partnership", moon="choice", pass_to_partner=True)
    state, events = play_hand(new_game(rules), random.Random(1))
    state.team_totals                              # (team 0's total, team 1's); state.totals by seat
    [e for e in events if isinstance(e, HandScored)][0].team_points
    rules = Rules.make("partnership-individual", partner_moon="charged")   # each scores alone; team sums win

The kitty (RULES.md §6.2): the first cards of the deck lie face down and join the tricks of the
first player to take a penalty card (``penalty``, ``first_penalty``) or of the first trick's winner
(``first_trick``); with ``kitty_exchange`` they join that player's hand, who then discards as many::

    rules = Rules.make("kitty", kitty_exchange=True)          # 4 players: 12 cards each and 4
    state, events = play_hand(new_game(rules), random.Random(2))
    taken = [e for e in events if isinstance(e, KittyTaken)][0]   # KittyTaken(seat, trick_no)
    state.kitty, state.kitty_taker, state.discarded   # private: seat_view shows them to the taker only
    rules = Rules.make("standard", players=3, kitty="first_trick")  # 17 each and 1; 5 players: 10 and 2

The passing variants (RULES.md §6.3): ``mix`` in the pass cycle (the passed cards, with the kitty,
shuffled and dealt back: phase ``mix``), ``pass_optional`` (a decliner forwards what it is passed,
unseen, along each packet's direction to the first seat that chose) and ``dealer_calls_pass`` (phase
``call`` before each deal: a split of ``pass_count`` over left, right, across, or mix)::

    rules = Rules.make("kitty", pass_cycle="mix", pass_optional=True)
    state, events = play_hand(new_game(rules), random.Random(4))      # one mix hand, the kitty in it
    mixed = [e for e in events if isinstance(e, PassesExchanged)][0]  # pass_direction "mix"
    rules = Rules.make("standard", dealer_calls_pass=True, pass_optional=True)
    state = new_game(rules)                                           # phase "call": seat 3 deals first
    state.call_choices()[:2]                                          # ((("left", 3),), (("left", 2), ("right", 1)))
    state, events = play_hand(state, random.Random(5))
    called = [e for e in events if isinstance(e, PassCalled)][0]      # PassCalled(seat, call): public
    state.phase, state.next_dealer, state.default_call()              # "call" again, seat 0, the cycle's way

Turbo Hearts (RULES.md §6.4): after the pass each seat holding a chargeable card (``chargeable_cards``)
charges some or none (phase ``charge``, simultaneous; a charge is private until all have decided);
the hand's values are then the charged ones and the 10 of clubs' taker's score is multiplied last.
Booster Nines (§6.5): a nine of the led suit makes a trick of 2n cards. ``moon="win"`` (the ``dnf``
preset, §6.7): a shooter wins the game at once::

    rules = Rules.make("turbo-nines")
    state, events = play_hand(new_game(rules), random.Random(6))
    shown = [e for e in events if isinstance(e, ChargesRevealed)][0].charges   # by seat, public
    scored = [e for e in events if isinstance(e, HandScored)][0]
    scored.multiplier, scored.charged                # (1, 1, 1, 4): seat 3 took the charged 10 of clubs
    [e for e in events if isinstance(e, TrickBoosted)]                # TrickBoosted(trick_no, seat, card)
    rules = Rules.make("dnf")                                         # M = 77, the dealer calls the pass
    state, events = play_hand(new_game(rules), random.Random(7))

Cancellation Hearts (RULES.md §6.6): two decks (``decks=2``), 6 to 10 players, every card twice. ``hand``
names a card held twice twice (``doubles(seat)`` is their mask); ``legal_cards`` names each card once and
playing it plays one copy. Identical cards in a trick cancel each other; a trick whose every led-suit card
is cancelled stays on the table (``TrickCancelled``, ``state.carried``) for the next trick's winner::

    six = Rules.make("cancellation", players=6)                 # 17 cards each, 2 left over for a kitty
    played, events = play_hand(new_game(six), random.Random(19))
    cancelled = [e for e in events if isinstance(e, TrickCancelled)][0]   # trick 15: both TS cancel
    carried = [e for e in events if isinstance(e, TrickWon) and e.carried][0]  # trick 16 takes them too
    played.taken_cards()                                        # by seat, with copies; M = 52
"""

from __future__ import annotations

import random
from typing import Sequence

from .cards import CARD_INDEX, CARD_NAMES, RANKS, SUITS, canonical, cards_of
from .errors import IllegalMove, InvalidRules, Reason
from .events import (
    CardPlayed,
    CardsCharged,
    ChargesRevealed,
    CardsPassed,
    Event,
    GameOver,
    HandDealt,
    HandScored,
    HeartsBroken,
    KittyDiscarded,
    KittyTaken,
    Moon,
    MoonChoiceNeeded,
    PassCalled,
    PassesExchanged,
    TrickBoosted,
    TrickCancelled,
    TrickWon,
    event_to_dict,
)
from .moves import (
    CallPass,
    ChargeCards,
    ChooseMoon,
    Deal,
    DeclinePass,
    DiscardKitty,
    MixCards,
    Move,
    PassCards,
    PlayCard,
    apply,
    move_from_dict,
    move_to_dict,
    replay,
)
from .rules import CALL_DIRECTIONS, PASS_DIRECTIONS, PRESETS, TEAMS, Rules
from .state import CALL, CHARGE, DEAL, DISCARD, MIX, MOON, OVER, PASS, PHASES, PLAY, GameState, new_game
from .two_decks import TwoDeckState
from .view import seat_view


def deck_in_play(rules: Rules) -> tuple[str, ...]:
    """The cards in play under ``rules`` (52 minus ``removed_cards``; a kitty's cards included), in
    canonical order."""
    return rules.table.deck_cards


def shuffled_deck(rules: Rules, rng: random.Random) -> tuple[str, ...]:
    """A shuffled deck for ``GameState.deal``, drawn from ``rng`` (chance lives outside the engine):
    ``rng.shuffle`` of the cards in play."""
    deck = list(rules.table.deck_cards)
    rng.shuffle(deck)
    return tuple(deck)


def shuffled_mix(state: GameState, rng: random.Random) -> tuple[str, ...]:
    """A ``mix`` hand (RULES.md §6.3): ``state.cards_to_mix`` shuffled by ``rng``, for ``MixCards``."""
    cards = list(state.cards_to_mix)
    rng.shuffle(cards)
    return tuple(cards)


def chargeable_cards(rules: Rules) -> tuple[str, ...]:
    """Turbo (RULES.md §6.4): the cards a player may charge under ``rules`` (AH, QS, TC and, with a bonus,
    the bonus card; those in play), in canonical order; ``()`` without turbo."""
    return cards_of(rules.table.chargeable_mask)


def trick_winner(cards: Sequence[str], leader: int, players: int) -> int | None:
    """The seat that wins a complete trick led by ``leader``: the highest card of the led suit. With two
    decks (RULES.md §6.6) identical cards cancel each other first, and when every card of the led suit
    is cancelled the trick has no winner: None (it is carried, or, the last trick, goes to the winner of
    the trick before it)."""
    led = cards[0][1]
    alive = [k for k, c in enumerate(cards) if c[1] == led and cards.count(c) == 1]
    if not alive:
        return None
    best = max(alive, key=lambda k: RANKS.index(cards[k][0]))
    return (leader + best) % players


def card_points(rules: Rules, cards: Sequence[str]) -> int:
    """The penalty points of some cards under ``rules`` (the bonus card not included)."""
    values = rules.table.values
    return sum(values[CARD_INDEX[c]] for c in cards)


__all__ = [
    "CARD_NAMES", "RANKS", "SUITS", "canonical",
    "IllegalMove", "InvalidRules", "Reason",
    "Event", "HandDealt", "PassCalled", "CardsPassed", "PassesExchanged", "CardPlayed", "HeartsBroken", "TrickWon",
    "KittyTaken", "KittyDiscarded", "MoonChoiceNeeded", "Moon", "HandScored", "GameOver", "event_to_dict",
    "CardsCharged", "ChargesRevealed", "TrickBoosted", "TrickCancelled", "TwoDeckState",
    "Move", "Deal", "PassCards", "PlayCard", "ChooseMoon", "DiscardKitty", "CallPass", "DeclinePass", "MixCards",
    "ChargeCards",
    "apply", "move_to_dict", "move_from_dict",
    "replay", "PRESETS", "TEAMS", "PASS_DIRECTIONS", "CALL_DIRECTIONS", "Rules",
    "GameState", "new_game", "CALL", "DEAL", "PASS", "MIX", "CHARGE", "PLAY", "DISCARD", "MOON", "OVER", "PHASES",
    "seat_view", "deck_in_play", "shuffled_deck", "shuffled_mix", "trick_winner", "card_points", "chargeable_cards",
]
