"""RULES.md written out a second time, plainly, for the tests to check the engine against.

Nothing here is imported from ``pbem.engine`` except the ``Rules`` value the tests pass in: card
values, the moon total, trick winners, legal cards (rule 10 plus ``qs_must_drop_when_safe``), the
reason a card is refused, hand points and the end of a game are worked out again from the text.
Slow and simple on purpose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .helpers import ALL_CARDS, RANKS

SPOT = {r: i + 2 for i, r in enumerate(RANKS)}  # 2..10 face, J 11, Q 12, K 13, A 14
SPOT_CAPPED = {r: (v if v <= 10 else 15 if r == "A" else 10) for r, v in SPOT.items()}


def card_value(rules, card: str) -> int:
    """§3 "Card values": extra_penalties, else heart_values for a heart, else qs_penalty for QS."""
    if card in set(rules.removed_cards or ()):
        return 0
    extra = dict(rules.extra_penalties)
    if card in extra:
        return extra[card]
    if card[1] == "H":
        return {"one": 1, "spot": SPOT[card[0]], "spot_capped": SPOT_CAPPED[card[0]]}[rules.heart_values]
    if card == "QS":
        return rules.qs_penalty
    return 0


def penalty_cards(rules) -> set[str]:
    return {c for c in ALL_CARDS if card_value(rules, c) > 0}


def moon_total(rules) -> int:
    """M: the sum of the values of the cards in play."""
    return sum(card_value(rules, c) for c in ALL_CARDS)


def rank(card: str) -> int:
    return RANKS.index(card[0])


def trick_winner(cards: Sequence[str], leader: int, players: int) -> int:
    led = cards[0][1]
    best = max((k for k, c in enumerate(cards) if c[1] == led), key=lambda k: rank(cards[k]))
    return (leader + best) % players


def lowest_club(rules) -> str:
    removed = set(rules.removed_cards or ())
    return next(r + "C" for r in RANKS if r + "C" not in removed)


def legal_cards(rules, hand: Iterable[str], trick: Sequence[str], first_trick: bool, hearts_broken: bool) -> set[str]:
    """Rule 10, case by case, then ``qs_must_drop_when_safe`` for a follower."""
    hand = set(hand)
    pen = penalty_cards(rules)
    if trick:
        led = trick[0][1]
        of_suit = {c for c in hand if c[1] == led}
        if of_suit:  # 10a
            legal = of_suit
        else:  # 10b
            legal = set(hand)
            if first_trick and rules.no_pts_on_first_trick:
                legal = (hand - pen) or hand
        if rules.qs_must_drop_when_safe and "QS" in legal:
            if not of_suit or (led == "S" and ({"AS", "KS"} & set(trick))):
                legal = {"QS"}
        return legal
    if first_trick and rules.first_lead == "two_of_clubs":  # 10c
        return {lowest_club(rules)} & hand
    if first_trick and rules.first_lead == "any_club":
        return {c for c in hand if c[1] == "C"}
    legal = set(hand)  # 10d
    if first_trick and rules.no_pts_on_first_trick:
        legal = (legal - pen) or legal
    if rules.must_break_hearts and not hearts_broken:
        banned = {c for c in legal if c[1] == "H"}
        if rules.qs_lead_needs_broken_hearts:
            banned |= {"QS"} & legal
        rest = legal - banned
        if rest and not (rules.can_lead_hearts_instead_of_qs and rest == {"QS"}):
            legal = rest
    return legal


def refusal_reason(rules, hand: Iterable[str], trick: Sequence[str], first_trick: bool, card: str,
                   legal: set[str]) -> str:
    """The reason code for a held card that is not legal: the first rule that excludes it."""
    hand = set(hand)
    if trick:
        led = trick[0][1]
        if card[1] != led and any(c[1] == led for c in hand):
            return "MUST_FOLLOW_SUIT"
        if legal == {"QS"} and rules.qs_must_drop_when_safe:
            return "MUST_PLAY_QS"
        return "NO_POINTS_ON_FIRST_TRICK"
    if first_trick and rules.first_lead == "two_of_clubs":
        return "MUST_LEAD_LOWEST_CLUB"
    if first_trick and rules.first_lead == "any_club":
        return "MUST_LEAD_CLUB"
    pen = penalty_cards(rules)
    if first_trick and rules.no_pts_on_first_trick and card in pen and hand - pen:
        return "NO_POINTS_ON_FIRST_TRICK"
    return "QS_NEEDS_BROKEN_HEARTS" if card == "QS" else "HEARTS_NOT_BROKEN"


def shooter(rules, taken: Sequence[set[str]], tricks_won: Sequence[int]) -> tuple[int, str] | None:
    """(seat, "sun" | "moon") when one seat took every trick (with ``sun``) or every penalty card."""
    hand_size = sum(tricks_won)
    if rules.sun:
        for seat, won in enumerate(tricks_won):
            if won == hand_size:
                return seat, "sun"
    pen = penalty_cards(rules)
    if rules.moon != "none" and pen:
        for seat, cards in enumerate(taken):
            if pen <= cards:
                return seat, "moon"
    return None


def hand_points(rules, taken: Sequence[set[str]], tricks_won: Sequence[int],
                moon: tuple[int, str, str] | None) -> list[int]:
    """Rule 7 and 8 with the options: ``moon`` is (seat, kind, "old" | "new") when one is scored."""
    n = rules.players
    if moon is None:
        points = [sum(card_value(rules, c) for c in cards) for cards in taken]
        for seat, won in enumerate(tricks_won):
            if won == 0:
                points[seat] += rules.avoid_all_tricks_bonus
    else:
        seat, kind, scoring = moon
        m = moon_total(rules) * (2 if kind == "sun" else 1)
        points = [0] * n if scoring == "new" else [m] * n
        points[seat] = -m if scoring == "new" else 0
    if rules.jd_bonus:
        for seat, cards in enumerate(taken):
            if rules.bonus_card in cards:
                points[seat] += rules.jd_bonus
    return points


def add_totals(rules, totals: Sequence[int], points: Sequence[int]) -> list[int]:
    """Rule 9 steps 2 and 3."""
    new = [a + b for a, b in zip(totals, points)]
    if rules.exact_target_reset is not None:
        new = [rules.exact_target_reset if x == rules.target else x for x in new]
    return new


def winners(rules, totals: Sequence[int], hands_played: int) -> tuple[int, ...] | None:
    """Rule 9 steps 4 and 5: the winners if the game is over, else None (play on)."""
    if rules.end_after_hands is not None:
        over = hands_played >= rules.end_after_hands
    else:
        over = max(totals) >= rules.target
    if not over:
        return None
    best = min(totals) if rules.lowest_wins else max(totals)
    tied = tuple(s for s, x in enumerate(totals) if x == best)
    if len(tied) > 1 and rules.tie == "play_on":
        return None
    return tied


def safety_scoring(rules, taken, tricks_won, who: tuple[int, str], totals, hands_played) -> str:
    """``moon=safety``: new if old scores would end the game with the shooter not among the winners."""
    old = hand_points(rules, taken, tricks_won, (who[0], who[1], "old"))
    won = winners(rules, add_totals(rules, totals, old), hands_played)
    return "new" if won is not None and who[0] not in won else "old"


# -- two decks (RULES.md §6.6) ---------------------------------------------------------------------


def two_deck_winner(cards: Sequence[str], leader: int, players: int) -> int | None:
    """§6.6: two identical cards in one trick cancel each other for winning it; the highest led-suit
    card not cancelled wins. None when every led-suit card is cancelled."""
    led = cards[0][1]
    alive = [k for k, c in enumerate(cards) if c[1] == led and list(cards).count(c) == 1]
    if not alive:
        return None
    return (leader + max(alive, key=lambda k: rank(cards[k]))) % players


def two_deck_moon_total(rules) -> int:
    """§6.6: M is both decks' values."""
    return 2 * sum(card_value(rules, c) for c in ALL_CARDS)


def two_deck_shooter(rules, taken: Sequence[Sequence[str]], tricks_won: Sequence[int]) -> tuple[int, str] | None:
    """(seat, "sun" | "moon") with two decks: a moon is both copies of every penalty card."""
    hand_size = sum(tricks_won)
    if rules.sun:
        for seat, won in enumerate(tricks_won):
            if won == hand_size:
                return seat, "sun"
    pen = penalty_cards(rules)
    if rules.moon != "none" and pen:
        for seat, cards in enumerate(taken):
            if all(list(cards).count(c) == 2 for c in pen):
                return seat, "moon"
    return None


def two_deck_hand_points(rules, taken: Sequence[Sequence[str]], tricks_won: Sequence[int],
                         moon: tuple[int, str, str] | None) -> list[int]:
    """Rules 7 and 8 with two decks: each copy taken counts (the bonus card's bonus too), M = both decks."""
    n = rules.players
    if moon is None:
        points = [sum(card_value(rules, c) for c in cards) for cards in taken]
        for seat, won in enumerate(tricks_won):
            if won == 0:
                points[seat] += rules.avoid_all_tricks_bonus
    else:
        seat, kind, scoring = moon
        m = two_deck_moon_total(rules) * (2 if kind == "sun" else 1)
        points = [0] * n if scoring == "new" else [m] * n
        points[seat] = -m if scoring == "new" else 0
    if rules.jd_bonus:
        for seat, cards in enumerate(taken):
            points[seat] += rules.jd_bonus * list(cards).count(rules.bonus_card)
    return points
