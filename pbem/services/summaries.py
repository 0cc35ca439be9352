"""Summaries (README, "Summaries"): the end-of-game mail's chart and statistics, and ``history``.

The game-summary mail shows each player's total after every hand as a chart (a PNG drawn by
:mod:`pbem.mail.chart`, inline in the HTML part) and as a table (the text part), statistics
counted from the move log, and a signed link to the replay page of the whole game
(``pbem.web.replay``). The statistics:

- moons: hands in which a player took every penalty card (or every trick, the sun), from the
  engine's hand results;
- queen of spades: how often each player took the trick holding QS;
- hearts taken: heart *cards* taken, whatever they scored under the game's rules.

``history`` (the mail command: :mod:`pbem.services.commands.info`) mails every move of the game
that the seat may see: its own passes, every trick of every hand (the cards of a trick are seen by
the whole table), hand results. Never a deal, nor another seat's pass.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbem.db.models import Game, Move
from pbem.engine import GameOver, GameState, Rules, trick_winner
from pbem.mail import context as mc
from pbem.mail.chart import PALETTE, hex_colour, score_chart_png
from pbem.mail.links import replay_link

from .app import Services
from .game_views import LoggedMove, visible_history
from .mailing import hand_results

CHART_WIDTH = 560
CHART_HEIGHT = 260


def logged_moves(session: Session, game: Game) -> list[tuple[str, int | None, dict[str, Any]]]:
    """(kind, seat, payload) of every move of the game, in order."""
    return [tuple(row) for row in session.execute(  # type: ignore[misc]
        select(Move.kind, Move.seat, Move.payload).where(Move.game_id == game.id).order_by(Move.seq))]


def game_statistics(moves: Iterable[tuple[str, int | None, Mapping[str, Any]]], rules: Rules,
                    state: GameState) -> mc.GameStats:
    """Moons, queen-of-spades takes and hearts taken per seat, from the move log."""
    n = rules.players
    queen = [0] * n
    hearts = [0] * n
    trick: list[tuple[int, str]] = []
    for kind, seat, payload in moves:
        if kind == "deal":
            trick = []
        elif kind == "play":
            trick.append((seat if seat is not None else payload["seat"], str(payload["card"])))
            if len(trick) == n:
                cards = [card for _, card in trick]
                winner = trick_winner(cards, trick[0][0], n)
                queen[winner] += cards.count("QS")
                hearts[winner] += sum(1 for card in cards if card.endswith("H"))
                trick = []
    moons = [0] * n
    for _points, _totals, moon in state.history:
        if moon is not None:
            moons[moon.seat] += 1
    return mc.GameStats(moons=tuple(moons), queen=tuple(queen), hearts=tuple(hearts))


def totals_series(state: GameState) -> list[list[int]]:
    """Each seat's total after hand 1, 2, … (the chart's lines)."""
    return [[totals[seat] for _points, totals, _moon in state.history] for seat in range(state.players)]


@dataclass(frozen=True)
class SummaryParts:
    """What every seat's game-summary mail shares (drawn once per game)."""

    winners: tuple[int, ...]
    totals: tuple[int, ...]
    chart: mc.InlineImage | None
    colours: tuple[str, ...]
    stats: mc.GameStats

    def for_seat(self, svc: Services, game: Game, seat: int) -> mc.GameSummary:
        return mc.GameSummary(winners=self.winners, totals=self.totals, chart=self.chart, colours=self.colours,
                              stats=self.stats, replay_url=replay_link(svc.settings, game.id, seat))


def game_summary(session: Session, svc: Services, game: Game, state: GameState, over: GameOver) -> SummaryParts:
    """The chart and statistics of a finished game."""
    session.flush()
    stats = game_statistics(logged_moves(session, game), state.rules, state)
    chart = None
    series = totals_series(state)
    if series and series[0] and state.players <= len(PALETTE):
        target = None if state.rules.end_after_hands else state.rules.target
        png = score_chart_png(series, target=target, width=CHART_WIDTH, height=CHART_HEIGHT)
        cid = f"scores.{game.id}.{secrets.token_hex(6)}@{svc.settings.mail_domain}"
        chart = mc.InlineImage(cid=cid, data=png, filename=f"hearts-{game.id}-scores.png",
                               width=CHART_WIDTH, height=CHART_HEIGHT)
    colours = tuple(hex_colour(c) for c in PALETTE[: state.players])
    return SummaryParts(winners=tuple(over.winners), totals=tuple(over.totals), chart=chart, colours=colours,
                        stats=stats)


def history_hands(moves: Sequence[tuple[str, int | None, Mapping[str, Any]]], *, seat: int, state: GameState
                  ) -> tuple[mc.HistoryHand, ...]:
    """The hands of the game as ``seat`` may see them, for a ``history`` mail."""
    logged = [LoggedMove(kind=kind, seat=mover, payload=payload) for kind, mover, payload in moves]
    results: list[mc.HandResult] = list(hand_results(state))
    hands = []
    for hand in visible_history(logged, seat=seat, rules=state.rules):
        done = tuple(
            mc.FinishedTrick(number=t.number, plays=tuple(mc.Play(s, c) for s, c in t.plays), winner=t.winner,
                             points=t.points or 0)
            for t in hand.tricks if t.winner is not None
        )
        on_table = next((tuple(mc.Play(s, c) for s, c in t.plays) for t in hand.tricks if t.winner is None), ())
        hands.append(mc.HistoryHand(
            number=hand.number,
            pass_direction=hand.pass_direction,  # type: ignore[arg-type]
            passed=hand.passed or (),
            tricks=done,
            on_table=on_table,
            result=results[hand.number - 1] if hand.number <= len(results) else None,
        ))
    return tuple(hands)
