"""Summaries (README, "Summaries"): what each hand's and the game's last mail say, and ``history``.

The hand-summary mail names what each seat took that its rules score (``hands_taken``: heart
cards counted, Q♠ and the variant's other scoring cards by name) and ranks the totals.

The game-summary mail ranks the final totals and shows each player's total after every hand as a
chart (a PNG drawn by :mod:`pbem.mail.chart` in the reader's language, inline in the HTML part)
and as a table (the text part), statistics
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
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbem.db.models import Game, Move
from pbem.engine import (
    Event,
    GameOver,
    GameState,
    HandDealt,
    HandScored,
    KittyDiscarded,
    KittyTaken,
    Rules,
    TrickWon,
    apply,
    move_from_dict,
    new_game,
    trick_winner,
)
from pbem.mail import context as mc
from pbem.mail.chart import PALETTE, chart_labels, hex_colour, score_chart
from pbem.mail.i18n import normalise_language
from pbem.mail.links import replay_link

from . import bot_names
from .app import Services
from .game_views import LoggedMove, visible_history
from .mailing import hand_results, seat_names
from .seat_knowledge import team_values, teams_of


def scored_cards(rules: Rules) -> tuple[str, ...]:
    """The cards a hand summary names one by one: Q♠ when it scores, the extra penalty cards,
    the bonus card, and with Turbo Hearts 10♣, whose taker's score is multiplied (RULES.md §6.4)
    (hearts are counted instead)."""
    named = [("QS", rules.qs_penalty)] + list(rules.extra_penalties)
    cards = [card for card, value in named if value and not card.endswith("H")]
    if rules.jd_bonus:
        cards.append(rules.bonus_card)
    if rules.turbo:
        cards.append("TC")
    removed = set(rules.removed_cards or ())
    return tuple(dict.fromkeys(c for c in cards if c not in removed))


def _taken(piles: Sequence[Sequence[str]], named: tuple[str, ...]) -> tuple[mc.Taken, ...]:
    """Each pile's heart cards counted and its named cards (a card taken twice, with two decks, twice)."""
    return tuple(
        mc.Taken(seat=seat, hearts=sum(1 for c in pile if c.endswith("H")),
                 cards=tuple(c for c in named for _ in range(list(pile).count(c))))
        for seat, pile in enumerate(piles)
    )


def hands_taken(before: GameState, events: Iterable[Event],
                kitties: Mapping[int, Any] | None = None) -> dict[int, tuple[mc.Taken, ...]]:
    """What each seat took in every hand scored among ``events`` (a turn's, applied to ``before``),
    by hand number: the cards taken before the turn plus the tricks the turn won, and a kitty
    taken in the turn (RULES.md §6.2: its cards, or with ``kitty_exchange`` the discards, join the
    taker's tricks; ``kitties``: ``Turn.kitties``, each hand's kitty as it ended)."""
    rules = before.rules
    named = scored_cards(rules)
    piles = [list(cards) for cards in before.taken_cards()]  # a card taken twice, twice (RULES.md §6.6)
    out: dict[int, tuple[mc.Taken, ...]] = {}
    hand_no = before.hand_no
    for event in events:
        if isinstance(event, HandDealt):
            piles = [[] for _ in range(rules.players)]
            hand_no = event.hand_no
        elif isinstance(event, TrickWon):
            piles[event.winner] += event.cards + tuple(event.carried)  # RULES.md §6.6: the carried pile too
        elif isinstance(event, (KittyTaken, KittyDiscarded)):
            kitty = (kitties or {}).get(hand_no)
            if kitty is not None:
                if isinstance(event, KittyDiscarded):
                    piles[event.seat] += kitty.discarded
                elif not rules.kitty_exchange or not kitty.discarded:
                    piles[event.seat] += kitty.cards
        elif isinstance(event, HandScored):
            out[event.hand_no] = _taken(piles, named)
    return out


def logged_moves(session: Session, game: Game) -> list[tuple[str, int | None, dict[str, Any]]]:
    """(kind, seat, payload) of every move of the game, in order."""
    return [tuple(row) for row in session.execute(  # type: ignore[misc]
        select(Move.kind, Move.seat, Move.payload).where(Move.game_id == game.id).order_by(Move.seq))]


def won_tricks(moves: Iterable[tuple[str, int | None, Mapping[str, Any]]], rules: Rules
               ) -> Iterable[tuple[int, Sequence[str]]]:
    """(winner, cards) of every trick taken in the game, in order, from the move log. With Booster
    Nines a trick may have two rounds (RULES.md §6.5), and with two decks a cancelled trick goes with
    a later one (§6.6, its cards among that one's): the engine says which, replaying the log."""
    if rules.booster_nines or rules.decks == 2:
        state = new_game(rules)
        for _kind, _seat, payload in moves:
            state, events = apply(state, move_from_dict(dict(payload)))
            for event in events:
                if isinstance(event, TrickWon):
                    yield event.winner, event.cards + tuple(event.carried)
        return
    n = rules.players
    trick: list[tuple[int, str]] = []
    for kind, seat, payload in moves:
        if kind == "deal":
            trick = []
        elif kind == "play":
            trick.append((seat if seat is not None else payload["seat"], str(payload["card"])))
            if len(trick) == n:
                cards = [card for _, card in trick]
                yield trick_winner(cards, trick[0][0], n), cards
                trick = []


def game_statistics(moves: Iterable[tuple[str, int | None, Mapping[str, Any]]], rules: Rules,
                    state: GameState) -> mc.GameStats:
    """Moons, queen-of-spades takes and hearts taken per seat, from the move log."""
    n = rules.players
    queen = [0] * n
    hearts = [0] * n
    for winner, cards in won_tricks(moves, rules):
        queen[winner] += list(cards).count("QS")
        hearts[winner] += sum(1 for card in cards if card.endswith("H"))
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
    colours: tuple[str, ...]
    stats: mc.GameStats
    lowest_wins: bool = True
    #: With a partnership (RULES.md §6.1): the teams, their final totals, the winning teams.
    teams: tuple[tuple[int, ...], ...] = ()
    team_totals: tuple[int, ...] = ()
    winning_teams: tuple[int, ...] = ()
    #: RULES.md §6.7 ``moon=win``: the moon that won the game at once, if one did.
    moon_win: mc.Moon | None = None
    #: The totals after every hand, by seat (the chart's lines; empty: no chart), the players'
    #: names for its legend, and the target it marks.
    series: tuple[tuple[int, ...], ...] = ()
    #: One entry per line: a player's name, or a team's names (joined with "&" in the legend).
    names: tuple[str | tuple[str, ...], ...] = ()
    target: int | None = None
    #: The chart in each language asked for so far (its words are translated).
    charts: dict[str, mc.InlineImage] = field(default_factory=dict, compare=False)

    def chart(self, svc: Services, game: Game, language: str) -> mc.InlineImage | None:
        """The chart with its words in ``language``, drawn once per game and language."""
        if not self.series:
            return None
        language = normalise_language(language)
        if language not in self.charts:
            drawn = score_chart(self.series, self.legend(language), target=self.target, labels=chart_labels(language))
            cid = f"scores.{game.id}.{language}.{secrets.token_hex(6)}@{svc.settings.mail_domain}"
            self.charts[language] = mc.InlineImage(cid=cid, data=drawn.png, filename=f"hearts-{game.id}-scores.png",
                                                   width=drawn.width, height=drawn.height)
        return self.charts[language]

    def legend(self, language: str) -> tuple[str, ...]:
        """The chart's names in ``language``: a computer player's label is the reader's words
        ("Marta (computador, forte)"), as everywhere else in the mail (``bot_names.localized``)."""
        lines = bot_names.localized(self.names, language)
        return tuple(name if isinstance(name, str) else " & ".join(name) for name in lines)

    def for_seat(self, svc: Services, game: Game, seat: int) -> mc.GameSummary:
        player = next((row.player for row in game.seats if row.seat == seat), None)
        language = (player.language if player is not None else None) or svc.settings.default_language
        return mc.GameSummary(winners=self.winners, totals=self.totals, chart=self.chart(svc, game, language),
                              colours=self.colours, stats=self.stats, lowest_wins=self.lowest_wins,
                              replay_url=replay_link(svc.settings, game.id, seat), teams=self.teams,
                              team_totals=self.team_totals, winning_teams=self.winning_teams,
                              moon_win=self.moon_win)


def game_summary(session: Session, svc: Services, game: Game, state: GameState, over: GameOver) -> SummaryParts:
    """The statistics of a finished game, and what its chart needs."""
    session.flush()
    stats = game_statistics(logged_moves(session, game), state.rules, state)
    series = totals_series(state)
    drawable = bool(series and series[0] and state.players <= len(PALETTE))
    colours = tuple(hex_colour(c) for c in PALETTE[: state.players])
    teams = teams_of(state.rules)
    team_totals = tuple(over.team_totals) or (team_values(state.rules, tuple(over.totals)) if teams else ())
    winning = tuple(k for k, team in enumerate(teams) if set(team) <= set(over.winners))
    names = seat_names(game.seats)
    if state.rules.partnership == "team":
        # RULES.md §6.8: partners carry the team's total, so the chart draws one line per team.
        series = [series[team[0]] for team in teams]
        names = tuple(tuple(names[s] for s in team) for team in teams)  # joined in the reader's words
    last = hand_results(state)[-1:]
    moon_win = last[0].moon if last and last[0].moon is not None and last[0].moon.scoring == "win" else None
    return SummaryParts(winners=tuple(over.winners), totals=tuple(over.totals), colours=colours, stats=stats,
                        lowest_wins=state.rules.lowest_wins, teams=teams, team_totals=team_totals,
                        winning_teams=winning, moon_win=moon_win,
                        series=tuple(tuple(line) for line in series) if drawable else (),
                        names=names, target=None if state.rules.end_after_hands else state.rules.target)


def history_hands(moves: Sequence[tuple[str, int | None, Mapping[str, Any]]], *, seat: int, state: GameState
                  ) -> tuple[mc.HistoryHand, ...]:
    """The hands of the game as ``seat`` may see them, for a ``history`` mail."""
    logged = [LoggedMove(kind=kind, seat=mover, payload=payload) for kind, mover, payload in moves]
    results: list[mc.HandResult] = list(hand_results(state))
    hands = []
    for hand in visible_history(logged, seat=seat, rules=state.rules):
        done = tuple(
            mc.FinishedTrick(number=t.number, plays=tuple(mc.Play(s, c) for s, c in t.plays),
                             winner=-1 if t.winner is None else t.winner,
                             points=t.points or 0, boosted=len(t.plays) > state.players,  # RULES.md §6.5
                             # RULES.md §6.6: left on the table, or the last trick with no winner, or won with the pile
                             cancelled=t.cancelled or t.no_winner, carried=t.carried)
            for t in hand.tricks if not t.on_table
        )
        on_table = next((tuple(mc.Play(s, c) for s, c in t.plays) for t in hand.tricks if t.on_table), ())
        hands.append(mc.HistoryHand(
            number=hand.number,
            pass_direction=hand.pass_direction,  # type: ignore[arg-type]
            passed=hand.passed or (),
            tricks=done,
            on_table=on_table,
            result=results[hand.number - 1] if hand.number <= len(results) else None,
            kitty_taker=hand.kitty_taker,
            kitty_trick=hand.kitty_trick,
            kitty=hand.kitty,
            discarded=hand.discarded,
            pass_call=hand.pass_call,
            caller=hand.caller,
            declined=hand.declined,
            passed_packets=hand.passed_packets,
            charges=hand.charges,  # RULES.md §6.4: public once every seat has decided
        ))
    return tuple(hands)
