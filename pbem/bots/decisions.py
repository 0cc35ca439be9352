"""One place for "which bot method answers this phase": :func:`decide` turns a bot's answer into the
engine move, for the services, the simulator, the benchmarks and the tests alike."""

from __future__ import annotations

from typing import Any, Sequence

from pbem.engine import (
    CALL,
    CHARGE,
    DISCARD,
    MOON,
    PASS,
    PLAY,
    CallPass,
    ChargeCards,
    ChooseMoon,
    DeclinePass,
    DiscardKitty,
    GameState,
    Move,
    PassCards,
    PlayCard,
)

from .view import SeenTrick, bot_view


def decide(bot: Any, state: GameState, seat: int, tricks: Sequence[SeenTrick] | None = None) -> Move:
    """The move ``bot`` (a :class:`pbem.bots.Bot`) makes for ``seat`` in ``state`` (from that seat's view only; ``tricks``: the
    hand's finished tricks, see :class:`~pbem.bots.view.BotView`), by phase: ``call`` ->
    ``choose_call`` (``dealer_calls_pass``); ``pass`` -> ``choose_decline`` first when the seat may
    decline (``pass_optional``), else ``choose_pass``; ``charge`` -> ``choose_charge`` (Turbo, RULES.md
    §6.4: ``[]`` charges nothing); ``play`` -> ``choose_play``; ``discard`` ->
    ``choose_discard`` (``kitty_exchange``); ``moon`` -> ``choose_moon``. ``deal`` and ``mix`` are
    chance, no seat's decision: :class:`ValueError`."""
    phase = state.phase
    view = bot_view(state, seat, tricks)
    if phase == PLAY:
        return PlayCard(seat, bot.choose_play(view))
    if phase == PASS:
        if view.may_decline and bot.choose_decline(view):
            return DeclinePass(seat)
        return PassCards(seat, tuple(bot.choose_pass(view)))
    if phase == CHARGE:
        return ChargeCards(seat, tuple(bot.choose_charge(view)))
    if phase == CALL:
        return CallPass(seat, tuple((str(d), int(c)) for d, c in bot.choose_call(view)))
    if phase == DISCARD:
        return DiscardKitty(seat, tuple(bot.choose_discard(view)))
    if phase == MOON:
        return ChooseMoon(seat, bot.choose_moon(view))
    raise ValueError(f"no seat decides in phase {phase!r} (a deal or a mix is chance)")
