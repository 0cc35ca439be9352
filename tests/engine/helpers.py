"""Helpers for hand-built deals: decks that give each seat the hand a test wants, scripted play,
and the check every refusal test makes (reason code, details, state unchanged).

The deck layout is worked out here from RULES.md §1 and §2 rule 1, not from the engine: hand k's
dealer is seat (k − 2) mod n (hand 1's dealer is seat n − 1, the deal moves one seat clockwise each
hand) and the deck is dealt one card at a time clockwise starting with the dealer's left neighbour.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from pbem.engine import GameState, IllegalMove, Reason, Rules, apply, new_game
from pbem.engine.events import Event

RANKS = "23456789TJQKA"
SUITS = "CDHS"
#: The 52 cards in canonical order: by suit C D H S, then rank 2 … A.
ALL_CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)


def cards(text: str) -> list[str]:
    """``"2C 3C QS"`` -> ``["2C", "3C", "QS"]`` (tests write hands as text)."""
    return text.split()


def canon(text: str | Iterable[str]) -> list[str]:
    """Cards sorted in canonical order (by suit C D H S, then rank), as the engine lists them."""
    return sorted(cards(text) if isinstance(text, str) else text, key=ALL_CARDS.index)


def suit(s: str) -> list[str]:
    """Every card of one suit, ``"C"`` -> ``["2C", … "AC"]``."""
    return [r + s for r in RANKS]


def in_play(rules: Rules) -> list[str]:
    """The cards in play under ``rules``, canonical order (52 minus ``removed_cards``)."""
    removed = set(rules.removed_cards or ())
    return [c for c in ALL_CARDS if c not in removed]


def dealer_of(hand_no: int, players: int) -> int:
    return (hand_no - 2) % players


def deck_for(rules: Rules, hands: Mapping[int, Iterable[str] | str], hand_no: int = 1) -> tuple[str, ...]:
    """A deck that, dealt for hand ``hand_no``, gives each seat in ``hands`` exactly those cards.

    Seats not named, and named seats given fewer cards than a hand holds, are filled with the cards
    left over, in canonical order, seat by seat (seat 0 first). Tests name every card that matters.
    """
    n = rules.players
    pool = in_play(rules)
    size = len(pool) // n
    given: dict[int, list[str]] = {s: (cards(h) if isinstance(h, str) else list(h)) for s, h in hands.items()}
    used = [c for h in given.values() for c in h]
    assert len(used) == len(set(used)), f"a card is given twice: {used}"
    assert set(used) <= set(pool), f"not in play: {set(used) - set(pool)}"
    leftover = [c for c in pool if c not in set(used)]
    full: list[list[str]] = []
    for seat in range(n):
        h = given.get(seat, [])
        assert len(h) <= size, f"seat {seat} given {len(h)} cards, a hand is {size}"
        need = size - len(h)
        full.append(h + leftover[:need])
        leftover = leftover[need:]
    assert not leftover
    dealer = dealer_of(hand_no, n)
    deck: list[str | None] = [None] * len(pool)
    for seat, h in enumerate(full):
        first = (seat - dealer - 1) % n
        for j, card in enumerate(h):
            deck[first + j * n] = card
    assert None not in deck
    return tuple(deck)  # type: ignore[arg-type]


def start(rules: Rules, hands: Mapping[int, Iterable[str] | str], pass_direction: str | None = "hold") -> GameState:
    """A new game under ``rules`` with hand 1 dealt as ``hands`` (``hold``: no pass, straight to play)."""
    return deal_next(new_game(rules), hands, pass_direction)


def deal_next(state: GameState, hands: Mapping[int, Iterable[str] | str],
              pass_direction: str | None = "hold") -> GameState:
    """Deal the next hand of ``state`` so that seats hold ``hands``."""
    return state.deal(deck_for(state.rules, hands, state.hand_no + 1), pass_direction)


def play(state: GameState, sequence: str | Iterable[str]) -> GameState:
    """Play these cards in turn (each by whoever is to move)."""
    for card in (cards(sequence) if isinstance(sequence, str) else sequence):
        state = state.play(card)
    return state


def play_logged(state: GameState, sequence: str | Iterable[str]) -> tuple[GameState, list[Event]]:
    """Like :func:`play`, through ``apply``, collecting the events."""
    from pbem.engine import PlayCard

    events: list[Event] = []
    for card in (cards(sequence) if isinstance(sequence, str) else sequence):
        state, evs = apply(state, PlayCard(state.to_move, card))
        events.extend(evs)
    return state, events


Policy = Callable[[GameState], str]


def lowest_legal(state: GameState) -> str:
    """The first legal card in canonical order (clubs first, low first)."""
    return state.legal_cards()[0]


def play_out(state: GameState, policy: Policy = lowest_legal) -> tuple[GameState, list[Event]]:
    """Play the rest of the hand with ``policy``; returns the state after the last trick and the events."""
    from pbem.engine import PlayCard

    events: list[Event] = []
    hand_no = state.hand_no
    while state.phase == "play" and state.hand_no == hand_no:
        state, evs = apply(state, PlayCard(state.to_move, policy(state)))
        events.extend(evs)
    return state, events


def sweep_hands(rules: Rules, seat: int) -> dict[int, list[str]]:
    """Hands where ``seat`` holds every club in play plus the top spades: leading clubs (and then
    those spades) it takes every trick, so every card, whoever else holds what."""
    size = len(in_play(rules)) // rules.players
    mine = [c for c in in_play(rules) if c[1] == "C"]
    spades = [c for c in reversed(in_play(rules)) if c[1] == "S"]
    mine += spades[: size - len(mine)]
    assert len(mine) == size
    return {seat: mine}


def play_sweep(state: GameState, seat: int, pass_direction: str = "hold") -> tuple[GameState, list[Event]]:
    """Deal the next hand as :func:`sweep_hands` for ``seat`` and play it out (``seat`` must lead)."""
    state = deal_next(state, sweep_hands(state.rules, seat), pass_direction)
    assert state.to_move == seat, "the sweeping seat must lead the first trick"
    return play_out(state)


def refusal(state: GameState, action: Callable[[GameState], Any]) -> IllegalMove:
    """Run ``action`` on ``state``, which must raise IllegalMove and leave ``state`` as it was."""
    before = state.to_dict()
    legal_before = state.legal_cards()
    with pytest.raises(IllegalMove) as info:
        action(state)
    assert state.to_dict() == before, "a refused move changed the state"
    assert state.legal_cards() == legal_before
    return info.value


def assert_refused(state: GameState, action: Callable[[GameState], Any] | str, reason: Reason,
                   **details: Any) -> None:
    """``action`` (or playing the card ``action``) is refused with exactly ``reason`` and ``details``
    (card lists compared as given, in canonical order), and ``state`` is unchanged."""
    if isinstance(action, str):
        card = action
        action = lambda s: s.play(card)  # noqa: E731
    err = refusal(state, action)
    assert err.reason == reason, f"expected {reason.value}, got {err.reason.value} {err.details}"
    assert err.code == reason.value
    assert err.details == details


# -- two decks (RULES.md §6.6, §6.8) -------------------------------------------------------------------


def two_deck_deck(rules: Rules, hands: Mapping[int, Iterable[str] | str], kitty: Iterable[str] | str = (),
                  hand_no: int = 1, voids: Mapping[int, str] | None = None) -> tuple[str, ...]:
    """A deck of the two decks (each card twice) that, dealt for hand ``hand_no``, gives each seat in
    ``hands`` those cards (a card named twice: both copies) and lays ``kitty`` first.

    Worked out from RULES.md §6.6 and §6.2, not from the engine: the deal's leftovers, ``104 % players``
    cards, are the first cards of the deck and form the kitty; the rest are dealt one card at a time
    clockwise from the dealer's left. What is not named is filled from the cards left over: the first
    copies in canonical order, then the second copies; the kitty first, then the seats with ``voids``
    (seat -> suits it must not be given, e.g. ``"D"``), then the others, seat by seat.
    """
    n = rules.players
    k = 104 % n
    size = (104 - k) // n
    given = {s: (cards(h) if isinstance(h, str) else list(h)) for s, h in hands.items()}
    kitty_given = cards(kitty) if isinstance(kitty, str) else list(kitty)
    used = Counter(kitty_given)
    for h in given.values():
        used.update(h)
    over = {c: m for c, m in used.items() if m > 2 or c not in ALL_CARDS}
    assert not over, f"named more than twice (or unknown): {over}"
    left = Counter({c: 2 for c in ALL_CARDS}) - used
    pool = [c for c in ALL_CARDS if left[c] >= 1] + [c for c in ALL_CARDS if left[c] == 2]

    def take(count: int, banned: str = "") -> list[str]:
        got = [c for c in pool if c[1] not in banned][:count]
        assert len(got) == count, "the leftovers cannot fill the hands as asked"
        for c in got:
            pool.remove(c)
        return got

    assert len(kitty_given) <= k, f"the kitty holds {k} cards"
    kitty_cards = kitty_given + take(k - len(kitty_given))
    voids = dict(voids or {})
    full: dict[int, list[str]] = {}
    for seat in sorted(range(n), key=lambda s: (s not in voids, s)):
        h = given.get(seat, [])
        assert len(h) <= size, f"seat {seat} given {len(h)} cards, a hand is {size}"
        assert not [c for c in h if c[1] in voids.get(seat, "")], f"seat {seat} named a card of a void suit"
        full[seat] = h + take(size - len(h), voids.get(seat, ""))
    assert not pool
    dealer = dealer_of(hand_no, n)
    rest: list[str | None] = [None] * (104 - k)
    for seat, h in full.items():
        first = (seat - dealer - 1) % n
        for j, card in enumerate(h):
            rest[first + j * n] = card
    assert None not in rest
    return tuple(kitty_cards) + tuple(rest)  # type: ignore[arg-type]


def two_deck_start(rules: Rules, hands: Mapping[int, Iterable[str] | str], kitty: Iterable[str] | str = (),
                   voids: Mapping[int, str] | None = None, pass_direction: str = "hold") -> GameState:
    """A new two-deck game with hand 1 dealt as :func:`two_deck_deck` lays it out (``hold``: no pass)."""
    return new_game(rules).deal(two_deck_deck(rules, hands, kitty, 1, voids), pass_direction)
