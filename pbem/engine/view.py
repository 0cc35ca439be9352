"""What one seat may know of a game, and nothing more.

A seat sees its own hand, the cards it passed and (once every seat has passed) the cards it received,
the trick on the table, the last finished trick, who has taken which cards (every card played is seen
by the whole table), the totals and the history. It never sees another seat's hand or passes, the
cards of a mix before they are dealt back, (RULES.md §6.3) cards forwarded through it after it
declined to pass: it receives nothing, or (§6.4) another seat's charge before every seat has decided.
"""

from __future__ import annotations

from typing import Any

from .cards import CARD_NAMES
from .state import CALL, CHARGE, DEAL, MOON, OVER, PASS, PLAY, GameState


def seat_view(state: GameState, seat: int) -> dict[str, Any]:
    """A JSON-able view of ``state`` for ``seat``."""
    n = state.players
    names = CARD_NAMES
    own_pass = state.passes[seat]
    lt = state.last_trick
    to_act = state.seats_to_act()
    if state.phase == CHARGE:
        # RULES.md §6.4: a seat holding no chargeable card is never asked, so the seats still to charge
        # would tell who holds one: a seat learns only whether it is itself still to decide.
        to_act = (seat,) if seat in to_act else ()
    # RULES.md §6.2: the kitty (or the taker's discards) lies face down in the taker's tricks; the
    # other seats learn only who took it, until the hand is scored.
    taker = state.kitty_taker
    hide = 0 if taker == seat or state.phase in (CALL, DEAL, OVER) else state.face_down_mask()
    taken = state.public_taken_cards() if hide else state.taken_cards()
    points_taken = state.public_points() if hide else state.points_taken()
    view: dict[str, Any] = {
        "seat": seat,
        "players": n,
        "phase": state.phase,
        "hand_no": state.hand_no,
        "dealer": state.dealer,
        "pass_direction": state.pass_direction,
        "pass_count": state.t.pass_count,
        "hand": list(state.hand(seat)),
        "passed": None if own_pass is None else [names[i] for i in own_pass],  # [] when it declined
        "received": list(state.received_cards(seat)) if state.phase != PASS else None,
        "waiting_for_pass": list(state.seats_to_pass()),
        "trick": [[s, c] for s, c in state.trick_cards()],
        "leader": state.leader,
        "to_move": state.to_move,
        "to_act": list(to_act),
        "legal": list(state.legal_cards()) if state.phase == PLAY and state.to_move == seat else [],
        "tricks_played": state.tricks_played,
        "hearts_broken": state.hearts_broken,
        "taken": [list(cards) for cards in taken],
        "tricks_won": list(state.tricks_won),
        "points_taken": list(points_taken),
        "last_trick": None if lt is None else {
            "leader": lt[0],
            "cards": [[(lt[0] + k) % n, names[c]] for k, c in enumerate(lt[1])],
            "winner": lt[2],
            "points": lt[3],
        },
        "totals": list(state.totals),
        "history": [
            {"points": list(p), "totals": list(t),
             "moon": None if m is None else {"seat": m.seat, "kind": m.kind, "scoring": m.scoring, "team": m.team,
                                             "total": m.total}}
            for p, t, m in state.history
        ],
        "moon_choice": state.shooter[1] if state.phase == MOON and state.shooter and state.shooter[0] == seat else None,
        "winners": list(state.winners),
        # RULES.md §6.1, §6.2
        "teams": [list(team) for team in state.rules.teams],
        "partner": None if not state.rules.teams else (seat + 2) % 4,
        "team_totals": list(state.team_totals),
        "kitty_size": state.t.kitty_size,
        "kitty_taker": taker,
        "kitty_trick": state.kitty_trick,
        "kitty": list(state.kitty) if taker is not None and (taker == seat or state.phase in (CALL, DEAL, OVER)) else [],
        "discarded": list(state.discarded) if taker == seat else [],
        "discard_count": state.discard_count,
        "discard_legal": list(state.discard_choices()) if taker == seat else [],
        # RULES.md §6.3: the call is public; whether a seat declined is its own business (a decliner
        # receives nothing: forwarded cards pass it unseen); the cards to mix are nobody's.
        "pass_call": [list(p) for p in state.pass_call],
        "next_dealer": state.next_dealer,
        "call_choices": [[list(p) for p in c] for c in state.call_choices()] if seat in to_act else [],
        "default_call": [list(p) for p in state.default_call()] if seat in to_act else [],
        "may_decline": state.may_decline and seat in to_act,
        "declined": own_pass is not None and not own_pass,
        # RULES.md §6.4: a seat's charge is its own until every seat has decided; then the table's.
        "charges": [None if c is None or (state.phase == CHARGE and s != seat) else list(c)
                    for s, c in enumerate(state.charges)],
        "charge_choices": list(state.charge_choices(seat)),
        "charge_limit": state.charge_limit,
        "charges_revealed": state.charges_revealed,
        "suits_led": state.suits_led,
        # RULES.md §6.5
        "trick_boosted": state.trick_boosted,
        "boost_round": state.boost_round,
        # RULES.md §6.6: two decks; the cancelled tricks' cards on the table are seen by all
        "decks": state.decks,
        "carried": list(state.carried),
    }
    return view
