"""The ``strong`` player: Perfect Information Monte Carlo (PIMC) search over consistent deals.

Hearts hides the other hands, so the player imagines them: it samples deals that agree with all it
knows (:mod:`pbem.bots.knowledge`), and in each such *world* it plays every legal card and plays the
hand out with the ``heuristic`` policy for every seat. A card's value is its mean hand score for this
seat over the worlds; it plays the best. Every legal card is tried in the same worlds (common random
numbers), so the comparison between cards is much less noisy than the scores themselves.

Rollouts run through the engine's public API (``GameState.from_dict`` builds a world, ``play``
advances it) so every rules option is honoured exactly; the heuristic policy works on masks.

Budget: counted in card plays, so deterministic for a seed: ``playouts`` hand playouts' worth per
decision (``playouts`` x the cards dealt), split evenly among the legal cards and paid by the cards
still to play, so a decision late in the hand samples more worlds than an early one for about the
same CPU (at most ``LATE_FACTOR`` times the first trick's worlds). The defaults keep a decision well
under a second of CPU on one core. Two safety caps stop sampling new worlds early: ``cpu_limit``
seconds of this thread's CPU (``time.thread_time``, so a loaded machine does not weaken the bot) and
``time_limit`` seconds of wall time (``time_limit=None`` drops both, for reproducible runs whatever
the machine). Declining or calling a pass, the kitty discard and the moon choice use the heuristic.

Passing: the cards passed are searched too, where a pass can be played out (one deck, every card to
one receiver, no partnership, kitty or Turbo; elsewhere the heuristic's pass). The candidates are
every choice of ``pass_count`` cards among the ``PASS_POOL`` cards the heuristic ranks most urgent
to pass, and the heuristic's own pass. Each world deals the unseen cards at random to the other
seats, which pass as the heuristic does, and the hand is played out from each candidate with the
same rollouts as in play (the moon model included: a pass that hands a shooter its moon scores it).
The budget is ``PASS_FACTOR`` x ``playouts`` hand playouts, shared out by sequential halving.

Sequential halving (one deck): the budget is spent in rounds, as many as it takes to halve the legal
cards down to one; each round gives an equal share of the budget to the cards still in, each played
in the same new worlds, then keeps the better half. Clearly bad cards stop costing playouts early and
the close ones are compared over many more worlds than an even split gives them.

Moons (RULES.md §3): the heuristic never shoots, so rollouts of the heuristic alone never see a moon
coming, and a search over them does not stop one until it is too late. In half the worlds (drawn
from the seed, ``SHOOT_SHARE``) an opponent that alone has taken penalty cards, at least
``SHOOT_CARDS`` of them or half the moon's points (the queen), plays for the moon in the rollout (:func:`shoot_card`: it wins what it can
and keeps the points), so a card that lets a moon through scores it, and one that spoils it early is
preferred when it is worth it. Not with a partnership, nor with two decks.

Variants (RULES.md §6): the worlds hold the hidden kitty too (on the table, or in its taker's
tricks), sampled with the hands (:func:`~pbem.bots.knowledge.sample_world`); a rollout plays
through the kitty's taking and discard as the engine rules them; a card is scored by what the seat
is judged on (with a partnership: its team's hand score in team mode, the partners' sum in
individual mode).

Turbo, Booster Nines, ``moon=win`` (RULES.md §6.4, §6.5, §6.7): the charge is the heuristic's
(:func:`~pbem.bots.heuristic.charge_cards_for`). In play the worlds keep every charged card not yet
played in its charger's hand (a hard constraint of the sampling), and what the charged-card rule and
a boosted trick's second round reveal; a world is the engine's own state with the charges and the
suits led, so a rollout plays boosts, the charged-card rule and the charged values exactly, and is
scored by the engine (the TC multiplier last). Under ``moon=win`` a hand that ends the game is not a
hand score: a rollout whose shooter is on this seat's side counts as the game won, worth ``target``
points off, and one whose shooter is an opponent as the game lost, ``target`` points on.

Cancellation (RULES.md §6.6, two decks): the worlds deal every unseen copy (each card has 0 to 2
copies left; a seat may get both), keep the voids and the passed copies with their receiver, and
hold the leftovers' kitty unseen (on the table until the first trick's winner takes it, then face
down in its tricks); a world is the engine's two-deck state (the carried pile on the table, the
latest winner for the last trick's rule), so a rollout cancels, carries and awards exactly as the
game does, with the heuristic's two-deck policy. A two-deck playout plays up to 104 cards, so the
budget is ``playouts`` x ``TWO_DECK_PLAYS`` card plays shared out by the cards still to play (as many
worlds as that pays for, at least one a card): deterministic for a seed, about the one-deck game's
CPU per decision at any player count.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any, Callable, Mapping

from pbem.engine import DISCARD, MOON, PLAY, GameState, new_game
from pbem.engine.cards import CARD_INDEX, CARD_NAMES, SUIT_MASK, SUIT_MASK_OF, SUITS, cards_of, indices_of
from pbem.engine.playout import Playout

from .heuristic import (
    card_for,
    charge_cards_for,
    choose_card,
    choose_discard_cards,
    choose_call,
    choose_moon_scoring,
    choose_pass_cards,
    decline_for,
    discard_cards_for,
    partners_of,
    pass_cards_for,
    pass_ranking,
)
from .knowledge import infer, sample_two_deck_world, sample_world
from .view import BotView, as_bot_view

#: Hand playouts' worth of card plays per decision by default, and the safety caps: this thread's
#: CPU (seconds) and the wall clock (seconds). The budget, not the caps, decides on an idle machine.
DEFAULT_PLAYOUTS = 1200
DEFAULT_CPU_LIMIT = 0.9
DEFAULT_TIME_LIMIT = 3.0
#: A late decision's worlds are at most this many times a first-trick decision's.
LATE_FACTOR = 2
#: Two decks (RULES.md §6.6): a playout plays up to 104 cards, each dearer than with one deck, so the
#: budget is ``playouts`` x this many card plays per playout, shared out by the cards still to play.
TWO_DECK_PLAYS = 25
#: The pass (see the module docstring's Passing): the most urgent cards of the heuristic's ranking
#: whose every choice of ``pass_count`` is weighed, and the hand playouts spent on it, as a multiple
#: of ``playouts``.
PASS_POOL = 6
PASS_FACTOR = 2
#: Pass directions the pass search plays out (one receiver for all the cards passed).
PASS_STEPS = ("left", "right", "across")


class StrongBot:
    name = "strong"

    def __init__(self, seed: Any = None, playouts: int = DEFAULT_PLAYOUTS,
                 time_limit: float | None = DEFAULT_TIME_LIMIT,
                 cpu_limit: float | None = DEFAULT_CPU_LIMIT, halving: bool = True,
                 shooters: bool = True, shoot_share: float | None = None, shoot_cards: int | None = None,
                 pass_search: bool = True) -> None:
        if playouts < 1:
            raise ValueError("playouts must be at least 1")
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.time_limit = time_limit
        self.cpu_limit = None if time_limit is None else cpu_limit
        self.halving = halving
        self.shooters = shooters
        self.shoot_share = SHOOT_SHARE if shoot_share is None else shoot_share
        self.shoot_cards = SHOOT_CARDS if shoot_cards is None else shoot_cards
        self.pass_search = pass_search

    def _out_of_time(self, deadline: float | None, cpu_deadline: float | None) -> bool:
        """Whether a safety cap has been reached (see the module docstring's Budget)."""
        if deadline is not None and time.perf_counter() > deadline:
            return True
        return cpu_deadline is not None and time.thread_time() > cpu_deadline

    def choose_pass(self, view: BotView | Mapping[str, Any]) -> list[str]:
        v = as_bot_view(view)
        chosen = pass_cards_for(v)
        if self.pass_search and _pass_searchable(v) and len(chosen) == v.table.pass_count:
            chosen = list(self.evaluate_passes(v, chosen)[0][0])
        return [CARD_NAMES[c] for c in chosen]

    def evaluate_passes(self, v: BotView, preferred: list[int]) -> list[tuple[tuple[int, ...], float]]:
        """Each pass weighed (card indices, their mean hand score for this seat; lower is better),
        best first: every choice of ``pass_count`` cards among the ``PASS_POOL`` most urgent of the
        heuristic's ranking and the heuristic's own pass (``preferred``, which wins ties). Each world
        deals the unseen cards at random to the other seats, which pass as the heuristic does; then
        the hand is played out from every pass weighed (the same worlds, sequential halving, the
        moon model as in play)."""
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        cpu_deadline = None if self.cpu_limit is None else time.thread_time() + self.cpu_limit
        t = v.table
        n = v.players
        count = t.pass_count
        pool = sorted(set(pass_ranking(t, v.hand)[:PASS_POOL]) | set(preferred))
        mine = tuple(sorted(preferred))
        passes = [mine] + [p for p in itertools.combinations(pool, count) if p != mine]
        # The engine deals seat s every n-th card from the dealer's left; a new game's first deal
        # has dealer n - 1, so the seats are turned to keep this seat's place from the dealer.
        offset = v.dealer - (n - 1)
        me = (v.seat - offset) % n
        start = new_game(v.rules)
        unseen = indices_of(t.deck_mask & ~v.hand)
        held = indices_of(v.hand)
        size = t.hand_size
        partners, team = partners_of(v.rules)
        sign = 1 if t.lowest_wins else -1
        win = v.rules.target if v.rules.moon == "win" else 0
        shooters = self.shooters and t.moon != "none"
        fast = Playout.supports(t) and not win
        names = [[CARD_NAMES[c] for c in p] for p in passes]
        rng = self.rng

        def new_world() -> tuple[GameState, int]:
            rng.shuffle(unseen)
            hands: list[list[int]] = []
            k = 0
            for s in range(n):
                if s == me:
                    hands.append(held)
                else:
                    hands.append(unseen[k:k + size])
                    k += size
            deck = [CARD_NAMES[hands[i % n][i // n]] for i in range(n * size)]
            state = start.deal(deck, v.pass_direction)
            for s in range(n):
                if s != me:
                    mask = sum(1 << c for c in hands[s])
                    state = state.pass_cards(s, [CARD_NAMES[c] for c in choose_pass_cards(t, mask, count)])
            shoot = self.shoot_cards if shooters and rng.random() < self.shoot_share else 0
            return state, shoot

        def score(j: int, world: tuple[GameState, int]) -> int:
            state, shoot = world
            return _rollout(state.pass_cards(me, names[j]), (me,), t, partners, team, sign, win, shoot, fast)

        worlds = max(1, self.playouts * PASS_FACTOR // len(passes))
        scored = _halving(len(passes), worlds, new_world, score, lambda j: (j != 0, passes[j]),
                          lambda: self._out_of_time(deadline, cpu_deadline), self.halving)
        return [(passes[j], value) for j, value in scored]

    def choose_moon(self, view: BotView | Mapping[str, Any]) -> str:
        return choose_moon_scoring(as_bot_view(view))

    def choose_discard(self, view: BotView | Mapping[str, Any]) -> list[str]:
        return [CARD_NAMES[c] for c in discard_cards_for(as_bot_view(view))]

    def choose_call(self, view: BotView | Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
        return choose_call(as_bot_view(view))

    def choose_decline(self, view: BotView | Mapping[str, Any]) -> bool:
        return decline_for(as_bot_view(view))

    def choose_charge(self, view: BotView | Mapping[str, Any]) -> list[str]:
        return [CARD_NAMES[c] for c in charge_cards_for(as_bot_view(view))]

    def choose_play(self, view: BotView | Mapping[str, Any]) -> str:
        v = as_bot_view(view)
        legal = v.legal
        if not legal:
            raise ValueError(f"seat {v.seat} has no card to play now (phase {v.phase})")
        if not legal & (legal - 1):
            return CARD_NAMES[legal.bit_length() - 1]
        if v.rules_assumed or not v.kitty_known:  # worlds built on a guess could refuse a legal card
            return CARD_NAMES[card_for(v)]
        return CARD_NAMES[self.evaluate(v)[0][0]]

    def evaluate(self, v: BotView) -> list[tuple[int, float]]:
        """Each legal card (index) with its mean score for this seat (lower is better), best first.

        The score is what the seat is judged on (RULES.md §6.1): its hand score, or with a
        partnership its team's (team mode: the team's hand score; individual mode: the partners'
        sum, since the lower sum wins the game)."""
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        cpu_deadline = None if self.cpu_limit is None else time.thread_time() + self.cpu_limit
        t = v.table
        cards = indices_of(v.legal)
        knowledge = infer(v)
        if v.decks == 2:
            return self._evaluate_two_decks(v, cards, knowledge, deadline, cpu_deadline)
        dealt = t.players * t.hand_size
        remaining = max(1, sum(knowledge.counts))
        first = max(1, self.playouts // len(cards))
        worlds = max(1, min(first * LATE_FACTOR, self.playouts * dealt // remaining // len(cards)))
        template = _template(v)
        me = v.seat
        judged = (me,) if v.partner is None or v.rules.partnership == "team" else (me, v.partner)
        partners, team = partners_of(v.rules)
        sign = 1 if t.lowest_wins else -1
        win = v.rules.target if v.rules.moon == "win" else 0
        rng = self.rng
        preferred = card_for(v)
        shooters = self.shooters and t.moon != "none" and v.partner is None
        fast = Playout.supports(t) and not win

        def new_world() -> tuple[GameState, int]:
            hands, pile = sample_world(knowledge, rng)
            root = GameState.from_dict(_world(template, v, hands, pile))
            return root, self.shoot_cards if shooters and rng.random() < self.shoot_share else 0

        def score(j: int, world: tuple[GameState, int]) -> int:
            root, shoot = world
            return _rollout(root.play(CARD_NAMES[cards[j]]), judged, t, partners, team, sign, win, shoot, fast)

        scored = _halving(len(cards), worlds, new_world, score, lambda j: (cards[j] != preferred, cards[j]),
                          lambda: self._out_of_time(deadline, cpu_deadline), self.halving)
        return [(cards[j], value) for j, value in scored]

    def _evaluate_two_decks(self, v: BotView, cards: list[int], knowledge: Any, deadline: float | None,
                            cpu_deadline: float | None) -> list[tuple[int, float]]:
        """``evaluate`` with two decks (RULES.md §6.6): worlds deal every unseen copy
        (:func:`~pbem.bots.knowledge.sample_two_deck_world`), the hidden kitty with them, and each is
        played out through the engine's two-deck state (cancellations, carried tricks, the last
        trick's rule, the kitty to the first winner) with the heuristic's two-deck policy. The
        budget: ``playouts`` x ``TWO_DECK_PLAYS`` card plays, so as many worlds as that pays for
        (at least one a card), whatever the player count."""
        t = v.table
        remaining = max(1, sum(knowledge.counts))
        worlds = max(1, self.playouts * TWO_DECK_PLAYS // remaining // len(cards))
        template = _template(v)
        me = v.seat
        sign = 1 if t.lowest_wins else -1
        win = v.rules.target if v.rules.moon == "win" else 0
        sums = [0] * len(cards)
        done = 0
        rng = self.rng
        for _ in range(worlds):
            hands, doubles, pile, pile2 = sample_two_deck_world(knowledge, rng)
            root = GameState.from_dict(_world2(template, v, hands, doubles, pile, pile2))
            for j, c in enumerate(cards):
                sums[j] += _rollout2(root.play(CARD_NAMES[c]), me, t, sign, win)
            done += 1
            if self._out_of_time(deadline, cpu_deadline):
                break
        preferred = card_for(v)
        scored = [(c, s / done) for c, s in zip(cards, sums)]
        scored.sort(key=lambda cs: (cs[1], cs[0] != preferred, cs[0]))
        return scored


def _halving(arms: int, worlds: int, new_world: Callable[[], Any], score: Callable[[int, Any], int],
             tie: Callable[[int], Any], out_of_time: Callable[[], bool], halving: bool = True) -> list[tuple[int, float]]:
    """Sequential halving over ``arms`` choices (see the module docstring): the budget, ``worlds`` x
    ``arms`` playouts, is spent in as many rounds as it takes to halve the choices down to one (one
    round without ``halving``); each round shares its part out among the choices still in, each
    scored (``score(arm, world)``, lower is better) in the same new worlds, then keeps the better
    half (ties by ``tie(arm)``). Returns every arm with its score, best first: the arms kept to the
    end by their means, then each round's dropped arms (their score at least that of every arm kept
    longer, so the scores stay in order). ``out_of_time`` stops it early (the safety caps)."""
    active = list(range(arms))
    sums = [0] * arms
    seen = [0] * arms
    dropped: list[list[int]] = []
    rounds = max(1, (arms - 1).bit_length()) if halving else 1
    per_round = worlds * arms // rounds

    def key(j: int) -> tuple[Any, ...]:
        return (sums[j] / seen[j], tie(j))

    stop = False
    for r in range(rounds):
        for _ in range(max(1, per_round // len(active))):
            world = new_world()
            for j in active:
                sums[j] += score(j, world)
                seen[j] += 1
            if out_of_time():
                stop = True
                break
        if stop or r == rounds - 1 or len(active) <= 1:
            break
        active.sort(key=key)
        keep = (len(active) + 1) // 2
        dropped.append(active[keep:])
        active = active[:keep]
    scored: list[tuple[int, float]] = []
    floor = float("-inf")
    for group in [active] + dropped[::-1]:
        for j in sorted(group, key=key):
            floor = max(floor, sums[j] / seen[j])
            scored.append((j, floor))
    return scored


def _pass_searchable(v: BotView) -> bool:
    """Whether the pass search can play this pass out (see the module docstring's Passing): one deck,
    no partnership, kitty or Turbo, every card to one receiver, every seat passing, and a deal that
    needs no call first (RULES.md §6.3)."""
    r = v.rules
    return (v.phase == "pass" and not v.rules_assumed and v.decks == 1 and v.partner is None
            and not v.kitty_size and not r.turbo and not r.pass_optional and not r.dealer_calls_pass
            and v.pass_direction in PASS_STEPS
            and v.table.pass_count > 0)


def _template(v: BotView) -> dict[str, Any]:
    """A ``GameState.from_dict`` snapshot of what ``v`` knows; each world fills in the hands (and
    the hidden kitty, see :func:`_world`)."""
    n = v.players
    lt = None
    if v.tricks:
        leader, cards = v.tricks[-1]
        lt = {"leader": leader, "cards": [CARD_NAMES[c] for c in cards], "winner": v.leader, "points": 0}
    d: dict[str, Any] = {
        "rules": v.rules.to_dict(),
        "phase": PLAY,
        "hand_no": v.hand_no,
        "dealer": v.dealer,
        "pass_direction": v.pass_direction,
        "deck": [],
        "hands": None,
        "passes": [None] * n,
        "received": [[] for _ in range(n)],
        "trick": [CARD_NAMES[c] for c in v.trick],
        "leader": v.leader,
        "to_move": v.to_move,
        "tricks_played": v.tricks_played,
        "hearts_broken": v.hearts_broken,
        "taken": [list(v.taken_cards(s)) for s in range(n)],
        "points": list(v.points),
        "tricks_won": list(v.tricks_won),
        "last_trick": lt,
        "totals": list(v.totals),
        "history": [],
        "shooter": None,
        "winners": [],
    }
    if v.decks == 2:  # RULES.md §6.6: the cancelled tricks on the table, and who won last
        d["carried"] = [CARD_NAMES[c] for c in v.carried]
        d["carried_tricks"] = v.carried_tricks
        d["last_winner"] = v.last_winner
        if lt is not None and v.carried and not v.trick:
            lt["winner"] = -1  # the last finished trick was cancelled
    if v.teams:
        d["team_last"] = list(_team_last(v))
    if v.charges:  # Turbo: public once play starts (RULES.md §6.4)
        d["charges"] = [None if m is None else list(cards_of(m)) for m in v.charges]
        d["suits_led"] = "".join(SUITS[suit] for suit in range(4) if v.led_suits & SUIT_MASK[suit])
    if v.kitty_size:
        d["kitty_taker"] = v.kitty_taker
        d["kitty_trick"] = v.kitty_trick or (v.tricks_played if v.kitty_taker is not None else 0)
        d["kitty"] = [CARD_NAMES[c] for c in v.kitty]
        d["discarded"] = [CARD_NAMES[c] for c in v.discarded]
    return d


def _team_last(v: BotView) -> tuple[int, int]:
    """By team, the seat that won the team's latest trick (what a team slam's choice is asked of),
    from the tricks the view holds; -1 where unknown."""
    last = [-1, -1]
    n = v.players
    for leader, cards in v.tricks:
        best = max((c for c in cards if SUIT_MASK_OF[cards[0]] >> c & 1))
        winner = (leader + cards.index(best)) % n
        last[winner % 2] = winner
    if v.tricks_played:
        last[v.leader % 2] = v.leader  # the last trick's winner leads now
    for team in (0, 1):
        if last[team] < 0:
            won = [s for s in (team, team + 2) if v.tricks_won[s]]
            if won:
                last[team] = won[0]
    return last[0], last[1]


def _world(template: dict[str, Any], v: BotView, hands: tuple[int, ...], pile: int) -> dict[str, Any]:
    """The snapshot of one sampled world: the hands, and the hidden pile where it lies (the kitty on
    the table; or in its taker's tricks, as the kitty or the taker's discards)."""
    d = template
    d["hands"] = [list(cards_of(h)) for h in hands]
    if not v.kitty_size:
        return d
    d = dict(d)
    if v.kitty_taker is None:
        d["kitty"] = list(cards_of(pile))
        return d
    if not pile:
        return d
    taker = v.kitty_taker
    taken = list(d["taken"])
    taken[taker] = list(cards_of(v.taken[taker] | pile))
    points = list(d["points"])
    points[taker] += sum(v.table.values[c] for c in indices_of(pile))
    d["taken"], d["points"] = taken, points
    if v.exchanged:
        d["discarded"] = list(cards_of(pile))
        d["kitty"] = list(cards_of(pile))  # which cards the kitty held no longer matters
    else:
        d["kitty"] = list(cards_of(pile))
    return d


def _names2(once: int, twice: int) -> list[str]:
    out = []
    for c in indices_of(once):
        out.append(CARD_NAMES[c])
        if twice >> c & 1:
            out.append(CARD_NAMES[c])
    return out


def _world2(template: dict[str, Any], v: BotView, hands: tuple[int, ...], doubles: tuple[int, ...],
            pile: int, pile2: int) -> dict[str, Any]:
    """Two decks: the snapshot of one sampled world, each hand with its copies, the hidden kitty on
    the table or face down in its taker's tricks (RULES.md §6.6)."""
    d = template
    d["hands"] = [_names2(h, h2) for h, h2 in zip(hands, doubles)]
    if not v.kitty_size:
        return d
    d = dict(d)
    kitty = _names2(pile, pile2)
    if v.kitty_taker is None:
        d["kitty"] = kitty
        return d
    if not kitty:
        return d
    taker = v.kitty_taker
    taken = list(d["taken"])
    taken[taker] = sorted(list(taken[taker]) + kitty, key=CARD_INDEX.__getitem__)
    points = list(d["points"])
    points[taker] += sum(v.table.values[CARD_INDEX[c]] for c in kitty)
    d["taken"], d["points"], d["kitty"] = taken, points, kitty
    return d


def _rollout2(state: GameState, me: int, t: Any, sign: int = 1, win: int = 0) -> int:
    """Two decks: play the hand out with the heuristic's two-deck policy for every seat (each seat
    told only the cards played, with their copies, and the carried pile's points); this seat's hand
    score as :func:`_rollout`. Once no copy of a scoring card is left to play and nothing scoring is
    carried or lying in the kitty, the rest is played with the first legal card."""
    scoring = t.scoring_mask & t.deck_mask
    values = t.values
    n = t.players
    played = played2 = 0
    for names in state.taken_cards():
        for name in names:
            bit = 1 << CARD_INDEX[name]
            played2 |= played & bit
            played |= bit
    for c in state.trick:
        bit = 1 << c
        played2 |= played & bit
        played |= bit
    carried = [CARD_INDEX[c] for c in state.carried]
    for c in carried:
        bit = 1 << c
        played2 |= played & bit
        played |= bit
    carried_value = sum(values[c] for c in carried)
    carried_scoring = any(1 << c & scoring for c in carried)
    # A kitty still lying goes to the first trick's winner; its copies are never played.
    lying = kitty1 = kitty2 = 0
    if t.kitty_size and state.kitty_taker is None:
        for name in state.kitty:
            bit = 1 << CARD_INDEX[name]
            kitty2 |= kitty1 & bit
            kitty1 |= bit
        lying = kitty1
    free_ride = False
    while state.phase == PLAY:
        if lying and state.kitty_taker is not None:
            lying = 0
        legal = state.legal_mask()
        trick = state.trick
        if (not free_ride and not trick and not t.tricks_matter and not carried_scoring and not lying & scoring
                and not scoring & ~(played2 | kitty2 | played & kitty1)):
            free_ride = True  # no copy of a scoring card is left to play or to win
        if free_ride or not legal & (legal - 1):
            c = (legal & -legal).bit_length() - 1
        else:
            seat = state.to_move
            c = choose_card(t, seat, state.hand_mask(seat), legal, trick, state.leader, played, state.points,
                            -1, False, state.doubles(seat), played2, carried_value)
        bit = 1 << c
        played2 |= played & bit
        played |= bit
        state = state.play(CARD_NAMES[c])
        if len(trick) == n - 1:  # that card finished a trick: won, or carried (RULES.md §6.6)
            if state.phase == PLAY and state.last_trick[2] < 0:
                full = trick + (c,)
                carried_value += sum(values[x] for x in full)
                carried_scoring = carried_scoring or any(1 << x & scoring for x in full)
            else:
                carried_value = 0
                carried_scoring = False
    if state.phase == MOON:
        state = state.choose_moon(state.shooter[0], "safety")
    points, _totals, moon = state.history[-1]
    if moon is not None and moon.scoring == "win":
        return -win if me in state.winners else win
    return sign * points[me]


def _rollout(state: GameState, judged: tuple[int, ...], t: Any, partners: tuple[int, ...], team: bool,
             sign: int = 1, win: int = 0, shoot: int = 0, fast: bool = False) -> int:
    """Play the hand out with the heuristic for every seat (a kitty discard too); what it costs the
    ``judged`` seats (this seat, or with its partner in individual mode), lower is better: their hand
    score (``sign`` -1 when the highest total wins), or under ``moon=win`` a shoot that ends the game
    ``-win`` when a judged seat is among its winners, ``+win`` when not.

    ``shoot`` (a number of penalty cards, 0: never): in this world an opponent that has taken every penalty card so far, enough of them
    to be on its way (:func:`looks_like_shooting`), goes for the moon (:func:`shoot_card`) instead of ducking,
    so the search sees the moon coming and spoils it in time (the heuristic alone never shoots).

    Once no unplayed card can score (and the options do not score who takes which trick), the rest
    is played with the first legal card: it cannot change the result, and is much cheaper. (With
    Turbo the 10 of clubs counts as scoring: its taker's score is multiplied.)

    ``fast``: the rules are a :class:`~pbem.engine.playout.Playout`'s (``Playout.supports``), so the
    hand is played out on its masks (:func:`_fast_rollout`, the same cards and score) rather than
    through the immutable state.
    """
    if fast and state.phase == PLAY:
        return _fast_rollout(Playout(state), judged, t, sign, shoot)
    scoring = (t.scoring_mask | (t.tc_bit if t.turbo else 0)) & t.deck_mask
    played = 0
    for m in state.taken:
        played |= m
    for c in state.trick:
        played |= 1 << c
    # A kitty still on the table joins its taker's tricks later (or, with kitty_exchange, its hand).
    lying = 0
    if t.kitty_size and state.kitty_taker is None:
        for name in state.kitty:
            lying |= 1 << CARD_INDEX[name]
    exchange = t.kitty_exchange
    free_ride = False  # nothing left can change the score
    while True:
        phase = state.phase
        if phase == PLAY:
            if lying and state.kitty_taker is not None:
                if not exchange:
                    played |= lying
                lying = 0
            legal = state.legal_mask()
            if (not free_ride and not state.trick and not t.tricks_matter and not scoring & ~played
                    and not lying & scoring):
                free_ride = True
            if free_ride or not legal & (legal - 1):
                c = (legal & -legal).bit_length() - 1
            else:
                seat = state.to_move
                if shoot and seat not in judged and looks_like_shooting(t, state, seat, played, shoot):
                    c = shoot_card(t, state.hand_mask(seat), legal, state.trick, played)
                else:
                    c = choose_card(t, seat, state.hand_mask(seat), legal, state.trick, state.leader, played,
                                    state.points, partners[seat], team)
            played |= 1 << c
            state = state.play(CARD_NAMES[c])
        elif phase == DISCARD:
            seat = state.kitty_taker
            hand = state.hand_mask(seat)
            chosen = choose_discard_cards(t, hand, state.discard_count, played)
            for c in chosen:
                played |= 1 << c
            state = state.discard_kitty(seat, [CARD_NAMES[c] for c in chosen])
        else:
            break
    if state.phase == MOON:
        state = state.choose_moon(state.shooter[0], "safety")
    points, _totals, moon = state.history[-1]
    if moon is not None and moon.scoring == "win":  # RULES.md §6.7: the game is over, not a hand scored
        return -win if set(judged) & set(state.winners) else win
    return sign * sum(points[s] for s in judged)


def _fast_rollout(p: Playout, judged: tuple[int, ...], t: Any, sign: int, shoot: int) -> int:
    """:func:`_rollout` on a :class:`~pbem.engine.playout.Playout` (no kitty, partnership, Turbo or
    moon=win): the same policy, cards and score, without a state made per card. It stops once no
    card left to play can score (the options of a Playout never score who takes which trick)."""
    scoring = t.scoring_mask & t.deck_mask
    points = tuple(p.points)
    while not p.over:
        trick = p.trick
        if not trick and not scoring & ~p.played:
            break
        legal = p.legal()
        if not legal & (legal - 1):
            c = legal.bit_length() - 1
        else:
            seat = p.to_move
            if shoot and seat not in judged and shooting(t, p.taken, points, seat, shoot):
                c = shoot_card(t, p.hands[seat], legal, trick, p.played)
            else:
                c = choose_card(t, seat, p.hands[seat], legal, trick, p.leader, p.played, points)
        if p.play(c):
            points = tuple(p.points)
    scores = p.hand_points()
    return sign * sum(scores[s] for s in judged)


#: An opponent is modelled as shooting once it alone has taken at least this many penalty cards.
SHOOT_CARDS = 4
#: The share of worlds in which such an opponent shoots (the others: it plays the heuristic).
SHOOT_SHARE = 0.5


def looks_like_shooting(t: Any, state: GameState, seat: int, played: int, cards: int = 0) -> bool:
    """Whether ``seat`` looks like shooting the moon (RULES.md §3): it alone has taken penalty cards,
    at least ``cards`` of them (``SHOOT_CARDS`` by default) or at least half the moon's points (the
    queen of spades, with the standard values), and no other seat has taken any."""
    return shooting(t, state.taken, state.points, seat, cards)


def shooting(t: Any, taken: Any, points: Any, seat: int, cards: int = 0) -> bool:
    """:func:`looks_like_shooting` from the cards each seat has taken (masks) and its penalty points."""
    if t.moon == "none":
        return False
    penalty = t.penalty_mask
    mine = taken[seat] & penalty
    if mine.bit_count() < (cards or SHOOT_CARDS) and 2 * points[seat] < t.moon_total:
        return False
    for s, m in enumerate(taken):
        if s != seat and m & penalty:
            return False
    return True


def shoot_card(t: Any, hand: int, legal: int, trick: tuple[int, ...], played: int) -> int:
    """A shooter's card: win every trick it can and keep the penalty cards in its own tricks.
    Leading, a sure winner (the highest card out in its suit), else the highest card of its longest
    suit; following, the highest card when it beats the trick, else the lowest; void, the lowest
    card that gives away no points."""
    outstanding = t.deck_mask & ~played & ~hand
    if trick:
        led = SUIT_MASK_OF[trick[0]]
        follow = legal & led
        if follow:
            best = max(c for c in trick if led >> c & 1)
            top = follow.bit_length() - 1
            return top if top > best else (follow & -follow).bit_length() - 1
        safe = legal & ~t.penalty_mask
        pick = safe or legal
        return (pick & -pick).bit_length() - 1
    best_card, best_key = -1, None
    for suit_mask in SUIT_MASK:
        m = legal & suit_mask
        if not m:
            continue
        top = m.bit_length() - 1
        above = outstanding & suit_mask & ~((2 << top) - 1)
        key = (not above, (hand & suit_mask).bit_count(), top)
        if best_key is None or key > best_key:
            best_card, best_key = top, key
    return best_card
