"""Hand-built positions for bot tests: a mid-hand state from the cards each seat holds and has taken.

A position is made through ``GameState.from_dict`` (the engine's public snapshot format), so a test
can start from trick 9 with a would-be moon shooter without scripting eight tricks first. Cards not
named are dealt, in canonical order, to the seats whose hands are short.
"""

from __future__ import annotations

from typing import Mapping

from pbem.engine import CARD_NAMES, GameState, Rules, card_points
from pbem.engine.cards import CARD_INDEX


def cards(text: str) -> list[str]:
    return text.split()


def position(rules: Rules, hands: Mapping[int, str], *, taken: Mapping[int, str] | None = None,
             trick: str = "", leader: int = 0, hearts_broken: bool | None = None,
             totals: list[int] | None = None, rest_taken_by: int | None = None,
             charges: Mapping[int, str] | None = None, suits_led: str = "") -> GameState:
    """A state in the play phase: ``hands[seat]`` held (filled up from the unnamed cards), ``taken[seat]``
    in that seat's tricks (whole tricks), ``trick`` on the table led by ``leader``.

    ``rest_taken_by``: the hands are given in full and every card not named is in that seat's tricks
    (for late positions). Turbo (RULES.md §6.4): ``charges[seat]`` the cards it charged (revealed;
    the points taken are then the charged values), ``suits_led`` the suits led in finished tricks.
    """
    n = rules.players
    t = rules.table
    taken_cards = {s: cards((taken or {}).get(s, "")) for s in range(n)}
    trick_cards = cards(trick)
    if rest_taken_by is not None:
        named = set(trick_cards) | {c for h in hands.values() for c in cards(h)}
        named |= {c for h in taken_cards.values() for c in h}
        removed = set(rules.removed_cards or ())
        taken_cards[rest_taken_by] += [c for c in CARD_NAMES if c not in named and c not in removed]
    all_taken = [c for s in range(n) for c in taken_cards[s]]
    assert all(len(taken_cards[s]) % n == 0 for s in range(n)), "each seat takes whole tricks"
    played_tricks = len(all_taken) // n
    given = {s: cards(hands.get(s, "")) for s in range(n)}
    named = all_taken + trick_cards + [c for h in given.values() for c in h]
    assert len(named) == len(set(named)), f"a card is named twice: {sorted(named)}"
    removed = set(rules.removed_cards or ())
    leftover = [c for c in CARD_NAMES if c not in removed and c not in set(named)]
    full = {}
    for s in range(n):
        played_now = (s - leader) % n < len(trick_cards)
        size = t.hand_size - played_tricks - (1 if played_now else 0)
        need = size - len(given[s])
        assert need >= 0, f"seat {s} holds {len(given[s])} cards, a hand now holds {size}"
        full[s] = given[s] + leftover[:need]
        leftover = leftover[need:]
    assert not leftover, f"cards left over: {leftover}"
    heart_seen = any(c[1] == "H" for c in all_taken + trick_cards)
    points = [card_points(rules, taken_cards[s]) for s in range(n)]
    charged = [cards((charges or {}).get(s, "")) for s in range(n)]
    if charges is not None:
        values = t.charged(sum(1 << CARD_INDEX[c] for h in charged for c in h)).values
        points = [sum(values[CARD_INDEX[c]] for c in taken_cards[s]) for s in range(n)]
    d = {
        "rules": rules.to_dict(),
        "phase": "play",
        "hand_no": 1,
        "dealer": n - 1,
        "pass_direction": "hold",
        "deck": [],
        "hands": [sorted(full[s], key=CARD_INDEX.get) for s in range(n)],
        "passes": [None] * n,
        "received": [[] for _ in range(n)],
        "trick": trick_cards,
        "leader": leader,
        "to_move": (leader + len(trick_cards)) % n,
        "tricks_played": played_tricks,
        "hearts_broken": heart_seen if hearts_broken is None else hearts_broken,
        "taken": [taken_cards[s] for s in range(n)],
        "points": points,
        "tricks_won": [len(taken_cards[s]) // n for s in range(n)],
        "last_trick": None,
        "totals": totals or [0] * n,
        "history": [],
        "shooter": None,
        "winners": [],
    }
    if charges is not None:
        d["charges"] = charged
        d["suits_led"] = suits_led
    return GameState.from_dict(d)
