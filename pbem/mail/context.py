"""What a mail says, as plain values: the services fill these, the templates read them.

A mail is rendered from a `MailContext`: who it is for (`Recipient`), the game as that seat
may see it (`GameContext`, or ``None`` for mails about no single game) and one *detail*
value whose type is the kind of mail (`YourTurn`, `TrickDone`, `MoveRejected`, ...).  Every
value is frozen and holds only str, int, bool, tuples, mappings and datetimes, so contexts
can be built in a worker, compared in tests and never carry live engine or database objects
into a template.  Cards are canonical strings (``"QS"``, ``"TH"``); seats are ints.

The detail classes carry a class attribute ``KIND``, the template name; `MailContext.kind`
returns it, so a caller cannot pair a detail with the wrong template by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import ClassVar, Literal

__all__ = [
    "BounceNotice",
    "CardPlayed",
    "ChargeDone",
    "ChargesRevealed",
    "Digest",
    "DigestGame",
    "FinishedTrick",
    "GameContext",
    "GameListing",
    "GameStarted",
    "GameStats",
    "GameSummary",
    "Games",
    "HandResult",
    "HandSummary",
    "Help",
    "HistoryHand",
    "InlineImage",
    "Invitation",
    "InvitationAccepted",
    "MailContext",
    "MailDetail",
    "Moon",
    "MoveHistory",
    "MoveRejected",
    "NotifyChanged",
    "PassDone",
    "ForcedCardsChanged",
    "LanguageChanged",
    "Play",
    "PlayAhead",
    "Recipient",
    "Standing",
    "Taken",
    "RequestRejected",
    "ResignAsked",
    "Rules",
    "standings",
    "Status",
    "TalkLine",
    "TrickDone",
    "Unsubscribe",
    "Welcome",
    "YourTurn",
    "KINDS",
    # time in long games (README, "Time")
    "DeadlineExtended",
    "GameAborted",
    "GamePaused",
    "GameResumed",
    "PlayerAway",
    "DecisionDefaulted",
    "Reminder",
    "SeatBack",
    "SeatReplaced",
    "StandIn",
    "SubstituteInvitation",
    "SubstituteWanted",
    "TimeZoneSet",
    "VacationNoted",
]

PassDirection = Literal["left", "right", "across", "hold", "scatter", "mix", "split"]
Phase = Literal["call", "deal", "pass", "mix", "charge", "play", "discard", "moon", "over"]
Decision = Literal["call", "pass", "charge", "play", "discard", "moon"]


def _frozen_mapping(value: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, slots=True)
class Recipient:
    """The person a mail is for."""

    name: str
    address: str
    language: str = "en"
    #: IANA time zone for showing deadlines (README, "Time"); UTC until players set theirs.
    timezone: str = "UTC"


@dataclass(frozen=True, slots=True)
class Play:
    """One card played to a trick, by one seat."""

    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class FinishedTrick:
    """A complete trick: its cards in playing order (the first is the lead), who took it.

    A boosted trick (RULES.md §6.5 Booster Nines) has two rounds: ``plays`` holds both, the first
    round's then the second's, each led by the trick's leader."""

    number: int  # 1-based within the hand
    plays: tuple[Play, ...]
    winner: int
    points: int
    boosted: bool = False
    #: Two decks (RULES.md §6.6 Cancellation): every card of the led suit was cancelled by its twin.
    #: With ``winner`` -1 the trick stays on the table for the next trick's winner (the same player
    #: leads again); with a winner, it was the hand's last trick, given to the winner of the trick
    #: before it (or, when no trick had a winner, to its leader).
    cancelled: bool = False
    #: The cards of cancelled tricks this trick's winner took with it (in play order; its ``points``
    #: count them).
    carried: tuple[str, ...] = ()
    #: Turbo (RULES.md §6.4): what the 10♣ in this trick multiplies its taker's hand score by (2; 4
    #: when it was charged); 0 without it.
    ten_of_clubs: int = 0

    @property
    def stays(self) -> bool:
        """Cancelled and left on the table (RULES.md §6.6): nobody took it (yet)."""
        return self.cancelled and self.winner < 0

    @property
    def twins(self) -> tuple[str, ...]:
        """The cards played twice to this trick, which cancel each other (RULES.md §6.6), in play order."""
        return _twins(self.plays)

    @property
    def first_round(self) -> tuple[Play, ...]:
        return self.plays[: len(self.plays) // 2] if self.boosted else self.plays

    @property
    def boost_round(self) -> tuple[Play, ...]:
        """The second round of a boosted trick (empty otherwise)."""
        return self.plays[len(self.plays) // 2:] if self.boosted else ()

    @property
    def booster(self) -> Play | None:
        """The nine that boosted the trick: the first nine of the led suit in its first round."""
        return _booster(self.first_round) if self.boosted else None


def _twins(plays: tuple[Play, ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    twins: list[str] = []
    for play in plays:
        if play.card in seen and play.card not in twins:
            twins.append(play.card)
        seen.add(play.card)
    return tuple(twins)


def _booster(first_round: tuple[Play, ...]) -> Play | None:
    """RULES.md §6.5: a nine led, or played following suit, boosts the trick (the first one names it)."""
    if not first_round:
        return None
    led = first_round[0].card[1]
    return next((p for p in first_round if p.card[0] == "9" and p.card[1] == led), None)


@dataclass(frozen=True, slots=True)
class Moon:
    """A moon (or sun) shot in a hand, and how it was scored.

    ``kind`` is ``moon`` (every penalty card) or ``sun`` (every trick); ``scoring`` is
    ``old`` (everyone else takes M), ``new`` (the shooter takes -M), ``none`` (the rules
    have no moon: the shooter simply scores M) or ``win`` (RULES.md §6.7 ``moon=win``: the shooter
    wins the game at once; the hand adds nothing to the totals).
    """

    shooter: int
    kind: Literal["moon", "sun"] = "moon"
    scoring: Literal["old", "new", "none", "win"] = "old"
    total: int = 26
    #: A team's slam (RULES.md §6.1 ``team``): ``shooter`` and their partner took it together.
    team: bool = False


@dataclass(frozen=True, slots=True)
class Taken:
    """What one seat took in a hand among the cards its rules score: heart cards (counted),
    and the others one by one (Q♠, the variant's extra penalty cards, a bonus card such as J♦)."""

    seat: int
    hearts: int = 0
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of a ranking: ``place`` 1 is the best total; equal totals share a place (``shared``)."""

    place: int
    seat: int
    total: int
    shared: bool = False


def standings(totals: tuple[int, ...], lowest_wins: bool = True) -> tuple[Standing, ...]:
    """The seats ranked by total, best first (the lowest, unless the rules say the highest wins);
    equal totals share the place of the first of them ("1, 2, 2, 4"), in seat order."""
    sign = 1 if lowest_wins else -1
    order = sorted(range(len(totals)), key=lambda s: (sign * totals[s], s))
    out = []
    for k, seat in enumerate(order):
        first = next(j for j in range(k + 1) if totals[order[j]] == totals[seat])
        shared = sum(1 for t in totals if t == totals[seat]) > 1
        out.append(Standing(place=first + 1, seat=seat, total=totals[seat], shared=shared))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class HandResult:
    """One scored hand: points per seat this hand and the totals after it."""

    hand_number: int
    points: tuple[int, ...]
    totals: tuple[int, ...]
    moon: Moon | None = None
    #: With a partnership (RULES.md §6.1), by team: the hand's score and the totals after it.
    team_points: tuple[int, ...] = ()
    team_totals: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TalkLine:
    """A line of table talk (``say ...``, README "Table talk") passed on to the other players."""

    seat: int
    text: str


@dataclass(frozen=True, slots=True)
class GameContext:
    """One game as the recipient's seat may see it (never another seat's hidden cards)."""

    game_id: int
    title: str
    seat: int
    names: tuple[str, ...]  # players' display names by seat
    hand_number: int
    pass_direction: PassDirection
    phase: Phase
    hand: tuple[str, ...]  # the recipient's cards, any order (mails sort them)
    totals: tuple[int, ...]
    hand_points: tuple[int, ...]  # points taken so far in this hand, by seat
    reply_address: str
    game_url: str = ""
    pass_count: int = 3
    trick: tuple[Play, ...] = ()  # the trick so far, in playing order
    trick_number: int = 1
    last_trick: FinishedTrick | None = None
    to_move: int | None = None  # the seat to play; None while passing or when over
    waiting_for: tuple[int, ...] = ()  # seats still to decide (passing: several at once)
    legal: tuple[str, ...] = ()  # the recipient's legal cards, only when it is their turn
    hearts_broken: bool = False
    passed: tuple[str, ...] = ()  # the cards the recipient passed this hand
    received: tuple[str, ...] = ()  # the cards received, once every seat has passed
    history: tuple[HandResult, ...] = ()
    target: int | None = 100
    end_after_hands: int | None = None
    preset: str = "standard"
    table_talk: tuple[TalkLine, ...] = ()
    deadline: datetime | None = None  # aware UTC datetime (README, "Time")
    #: Since when the game waits for the seats in ``waiting_for`` (the earliest of them).
    waiting_since: datetime | None = None
    #: Playing ahead (README, "Playing ahead"): the recipient's queued cards, in order, and whether a computer
    #: player plays for them for the rest of this hand.
    queued: tuple[str, ...] = ()
    autopilot: bool = False
    #: The recipient's last reply had no new text and its move was read from its Subject: what was
    #: read there, said once (README, "Playing by mail"; set by ``pbem.services.mailing.queue_mail``).
    read_from_subject: str = ""
    #: Partnership (RULES.md §6.1): ``none``, ``team`` or ``individual``; the teams (seats, partners
    #: opposite), the recipient's partner, and by team the totals (team mode: the team's; individual:
    #: the partners' sum) and the points taken so far this hand (as the recipient may see them).
    partnership: str = "none"
    teams: tuple[tuple[int, ...], ...] = ()
    partner: int | None = None
    team_totals: tuple[int, ...] = ()
    team_points: tuple[int, ...] = ()
    #: Kitty (RULES.md §6.2): its form (``none``, ``penalty``, ``first_trick``, ``first_penalty``) and
    #: size, ``kitty_exchange``, who took it (None while it lies on the table) and at the end of which
    #: trick; its ``kitty`` cards and the ``discarded`` ones only when the recipient took it (hidden
    #: information: empty for every other seat); ``discard_count`` cards to discard (``kitty_exchange``).
    kitty_form: str = "none"
    kitty_size: int = 0
    kitty_exchange: bool = False
    kitty_taker: int | None = None
    kitty_trick: int | None = None
    kitty: tuple[str, ...] = ()
    discarded: tuple[str, ...] = ()
    discard_count: int = 0
    #: Passing variants (RULES.md §6.3): the dealer's call of this hand (``(direction, count)`` pairs,
    #: public; ``()`` without ``dealer_calls_pass``) and who made it (``caller``: the dealer; in the
    #: call phase, the dealer of the coming hand); the legal calls when the recipient is to call;
    #: whether the recipient may decline this hand's pass (``pass_optional``) and whether they did
    #: (their own choice only: who declined is not told to the table).
    pass_call: tuple[tuple[str, int], ...] = ()
    caller: int | None = None
    call_choices: tuple[tuple[tuple[str, int], ...], ...] = ()
    may_decline: bool = False
    declined: bool = False
    #: Turbo Hearts (RULES.md §6.4): the most cards one player may charge; every chargeable card in
    #: play with its value before any charge (``charge_values``: Q♠ 13, the bonus card its bonus, A♥ a
    #: heart's, 10♣ 0); the chargeable cards the recipient holds while it is to charge; the recipient's
    #: own charge (None while undecided); every seat's charge once all have decided (``charges``, by
    #: seat: ``()`` before the reveal, for what another seat charges is hidden until then); the suits
    #: led in this hand's finished tricks (a charged card waits for the first trick of its suit).
    turbo: bool = False
    charge_limit: int = 4
    charge_values: tuple[tuple[str, int], ...] = ()
    charge_choices: tuple[str, ...] = ()
    own_charge: tuple[str, ...] | None = None
    charges: tuple[tuple[str, ...], ...] = ()
    suits_led: str = ""
    #: Booster Nines (RULES.md §6.5): the trick on the table boosts (a nine of the led suit is among
    #: its first round), and it is in its second round (``trick`` then holds both rounds).
    booster_nines: bool = False
    trick_boosted: bool = False
    boost_round: bool = False
    #: Two decks (RULES.md §6.6 Cancellation): ``decks`` is 2, a hand may hold a card twice (``hand``
    #: names it twice); ``carried`` the cards of the cancelled tricks lying on the table (in play
    #: order, public), which go to the next trick's winner, and how many tricks they are.
    decks: int = 1
    carried: tuple[str, ...] = ()
    carried_tricks: int = 0

    @property
    def players(self) -> int:
        return len(self.names)

    @property
    def charges_revealed(self) -> bool:
        return bool(self.charges)

    @property
    def charged_by(self) -> tuple[tuple[int, tuple[str, ...]], ...]:
        """The revealed charges, (seat, cards) for the seats that charged something, in seat order."""
        return tuple((seat, cards) for seat, cards in enumerate(self.charges) if cards)

    @property
    def held_back(self) -> tuple[str, ...]:
        """The recipient's charged cards it may not play now (RULES.md §6.4: not led, nor played to
        the first trick of their suit, unless the only card of it held): on its turn to play only."""
        if self.phase != "play" or not self.legal or not self.own_charge or not self.my_turn:
            return ()
        led = self.trick[0].card[1] if self.trick else None  # None: the reader leads
        return tuple(c for c in self.own_charge if c in self.hand and c not in self.legal
                     and c[1] not in self.suits_led and (led is None or led == c[1]))

    @property
    def table_rounds(self) -> tuple[tuple[Play, ...], tuple[Play, ...]]:
        """The trick on the table as its first round and its boost round (RULES.md §6.5)."""
        n = len(self.names)
        return self.trick[:n], self.trick[n:]

    @property
    def booster(self) -> Play | None:
        """The nine that boosts the trick on the table, once it is down."""
        return _booster(self.trick[: len(self.names)]) if self.trick_boosted else None

    @property
    def trick_twins(self) -> tuple[str, ...]:
        """The cards played twice to the trick on the table so far, which cancel each other (RULES.md §6.6)."""
        return _twins(self.trick) if self.decks == 2 else ()

    @property
    def my_turn(self) -> bool:
        return self.seat == self.to_move or (
            self.to_move is None and self.seat in self.waiting_for
        )

    @property
    def my_team(self) -> int | None:
        """The index in ``teams`` of the recipient's team (None without a partnership)."""
        return next((k for k, team in enumerate(self.teams) if self.seat in team), None)

    @property
    def took_kitty(self) -> bool:
        return self.kitty_taker is not None and self.kitty_taker == self.seat

    def pass_target(self) -> int | None:
        """The seat the recipient passes to this hand (None for hold and scatter)."""
        return self.target_of(self.pass_direction)

    def target_of(self, direction: str) -> int | None:
        """The seat the recipient passes to ``direction`` (None for hold, scatter and mix)."""
        n = len(self.names)
        offsets = {"left": 1, "right": n - 1, "across": n // 2}
        if direction not in offsets:
            return None
        return (self.seat + offsets[direction]) % n


# ---------------------------------------------------------------------------------------
# Details: one class per kind of mail.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class YourTurn:
    """The recipient must decide: pass cards, play a card or choose how a moon scores.

    The one mail of a decision (README, "Playing by mail"): only it carries ``X-Hearts-Decision``
    and ``X-Hearts-Legal``.  The first one of a game (``started``) also says that the game has
    begun, who sits where and its ``rules``: there is no separate mail for that.
    """

    KIND: ClassVar[str] = "your_turn"
    decision: Decision
    #: The moon total M of this hand, for the ``moon`` decision ("everyone else scores M").
    moon_total: int = 26
    #: Cards of this hand played for the recipient since their last turn mail because each was
    #: their only legal card, in the order played.
    autoplayed: tuple[str, ...] = ()
    #: Cards played for the recipient as they asked (their queue or the autopilot), in order.
    played_ahead: tuple[str, ...] = ()
    #: The game begins with this mail: the seats and ``rules`` are shown before the decision.
    started: bool = False
    rules: Mapping[str, object] = field(default_factory=dict)
    #: Show what the recipient passed and received this hand (``game.passed``, ``game.received``):
    #: they have not been shown it yet.
    exchange: bool = False
    #: Finished tricks of this hand the recipient has not seen: those completed since the last
    #: move, and those holding a card played for them (else ``game.last_trick`` is shown).
    tricks: tuple[FinishedTrick, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", _frozen_mapping(self.rules))


@dataclass(frozen=True, slots=True)
class TrickDone:
    """A trick was completed (``game.last_trick``); the default news mail.

    ``tricks``: every trick of this hand completed since the last move (several when cards were
    played automatically; the templates add ``game.last_trick`` if it is not among them);
    ``exchange`` as in `YourTurn`."""

    KIND: ClassVar[str] = "trick_done"
    tricks: tuple[FinishedTrick, ...] = ()
    exchange: bool = False


@dataclass(frozen=True, slots=True)
class CardPlayed:
    """A card was played (for players who asked for every card); ``exchange`` as in `YourTurn`."""

    KIND: ClassVar[str] = "card_played"
    seat: int
    card: str
    exchange: bool = False


@dataclass(frozen=True, slots=True)
class PassDone:
    """The recipient passed (``game.passed``) and others have not yet (``game.waiting_for``):
    a news mail at once, so a pass never goes unanswered until the last seat has passed."""

    KIND: ClassVar[str] = "pass_done"


@dataclass(frozen=True, slots=True)
class ChargeDone:
    """Turbo Hearts (RULES.md §6.4): the recipient decided what to charge (``game.own_charge``), or
    had nothing to decide (no chargeable card held), and others have not yet: a news mail at once,
    like `PassDone`; nobody else learns the charge before the reveal."""

    KIND: ClassVar[str] = "charge_done"
    #: Show what the recipient passed and received this hand (as in `YourTurn`): the last pass
    #: was theirs, and holding nothing chargeable they had nothing to decide.
    exchange: bool = False


@dataclass(frozen=True, slots=True)
class ChargesRevealed:
    """Every seat has decided its charges (RULES.md §6.4): the table learns them all
    (``game.charges``); a news mail to a player whom nothing else tells it in that turn.
    ``exchange`` as in `YourTurn`."""

    KIND: ClassVar[str] = "charges_revealed"
    exchange: bool = False


@dataclass(frozen=True, slots=True)
class HandSummary:
    """A hand was scored."""

    KIND: ClassVar[str] = "hand_summary"
    result: HandResult
    #: The hand's last trick, for a caller that knows only that one (shown if not in ``tricks``).
    last_trick: FinishedTrick | None = None
    #: The hand's tricks completed in the turn that ended it, in order, the last one included
    #: (the mail's game view already shows the next hand): all of them when the end of the hand
    #: was played for the players (forced cards, the autopilot, queued cards), else the last.
    tricks: tuple[FinishedTrick, ...] = ()
    #: The rest of the hand was played out for the players: no card left could change a score.
    played_out: bool = False
    #: What each seat took that the rules score, by seat (empty: not known).
    taken: tuple[Taken, ...] = ()
    #: The rules' ``lowest_wins``: which way the totals are ranked.
    lowest_wins: bool = True
    #: The moon's scoring was not chosen by the deadline: ``safety`` decided (RULES.md §3 ``moon``).
    moon_by_deadline: bool = False
    #: The hand's kitty (RULES.md §6.2), shown once the hand is over: its cards, who took it at the
    #: end of which trick, and with ``kitty_exchange`` the cards that taker discarded.
    kitty: tuple[str, ...] = ()
    kitty_taker: int | None = None
    kitty_trick: int | None = None
    discarded: tuple[str, ...] = ()
    #: Turbo Hearts (RULES.md §6.4): what each seat charged this hand, and the 10♣ multiplier of each
    #: seat's hand score (1; 2 for its taker; 4 when it was charged), by seat (empty without turbo).
    charges: tuple[tuple[str, ...], ...] = ()
    multiplier: tuple[int, ...] = ()

    @property
    def charged_by(self) -> tuple[tuple[int, tuple[str, ...]], ...]:
        return tuple((seat, cards) for seat, cards in enumerate(self.charges) if cards)

    @property
    def charged_cards(self) -> tuple[str, ...]:
        return tuple(c for cards in self.charges for c in cards)

    @property
    def standings(self) -> tuple[Standing, ...]:
        """The totals after this hand, ranked."""
        return standings(self.result.totals, self.lowest_wins)

    @property
    def team_standings(self) -> tuple[Standing, ...]:
        """The team totals after this hand, ranked (``Standing.seat``: the team's index)."""
        totals = self.result.team_totals
        return standings(totals, self.lowest_wins) if totals else ()


@dataclass(frozen=True, slots=True)
class InlineImage:
    """A picture shown inside the HTML part (``<img src="cid:…">``), sent with the mail."""

    cid: str  # the Content-ID without angle brackets
    data: bytes
    filename: str = "image.png"
    mime_type: str = "image/png"
    width: int = 0
    height: int = 0


@dataclass(frozen=True, slots=True)
class GameStats:
    """Counted from the move log, by seat: moons shot, times the queen of spades was taken,
    hearts taken (cards, not points)."""

    moons: tuple[int, ...]
    queen: tuple[int, ...]
    hearts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameSummary:
    """The game is over: winners, final totals, totals after every hand (``game.history``).

    ``chart`` is the totals chart (its legend names the players in ``colours``, one
    ``#rrggbb`` per seat); ``replay_url`` the signed link to every trick of the game; the final
    totals are shown ranked (``standings``), as the rules' ``lowest_wins`` orders them.
    """

    KIND: ClassVar[str] = "game_summary"
    winners: tuple[int, ...]
    totals: tuple[int, ...]
    resigned: tuple[int, ...] = ()
    chart: InlineImage | None = None
    colours: tuple[str, ...] = ()
    stats: GameStats | None = None
    replay_url: str = ""
    lowest_wins: bool = True
    #: With a partnership (RULES.md §6.1): the teams, their final totals and the winning team(s)'
    #: indexes in ``teams``.
    teams: tuple[tuple[int, ...], ...] = ()
    team_totals: tuple[int, ...] = ()
    winning_teams: tuple[int, ...] = ()
    #: RULES.md §6.7 ``moon=win``: the moon (or sun) that won the game at once, if one did.
    moon_win: Moon | None = None

    @property
    def standings(self) -> tuple[Standing, ...]:
        return standings(self.totals, self.lowest_wins)

    @property
    def team_standings(self) -> tuple[Standing, ...]:
        """The teams ranked by total (``Standing.seat`` is the team's index in ``teams``)."""
        return standings(self.team_totals, self.lowest_wins) if self.team_totals else ()


@dataclass(frozen=True, slots=True)
class MoveRejected:
    """A move was refused; ``code`` and ``details`` come from `IllegalMove` or the reader.

    ``attempted`` is the text or card the player sent, when known (for the sentence).
    """

    KIND: ClassVar[str] = "move_rejected"
    code: str
    details: Mapping[str, object] = field(default_factory=dict)
    attempted: str = ""
    #: The reply's table talk, not passed on because the reply was refused (README, "Table talk").
    withheld_talk: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _frozen_mapping(self.details))


@dataclass(frozen=True, slots=True)
class RequestRejected:
    """A mail that was not a move could not be used (stale, forged, unreadable ...).

    Addressed to a registered player's own address, or as the one answer an unverified address
    may get to a mail to ``new@`` (README, "What a stranger may receive").
    """

    KIND: ClassVar[str] = "request_rejected"
    code: str
    details: Mapping[str, object] = field(default_factory=dict)
    #: The reply's table talk, not passed on because the reply was refused (README, "Table talk").
    withheld_talk: tuple[str, ...] = ()
    #: Set when the refused mail asked for a new game: the address to write to, so the answer
    #: shows what such a mail looks like.
    new_game_address: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _frozen_mapping(self.details))


@dataclass(frozen=True, slots=True)
class ResignAsked:
    """The player wrote ``resign``: what resigning means, and how to confirm it (``resign
    confirm``); nothing has changed yet."""

    KIND: ClassVar[str] = "resign_asked"


@dataclass(frozen=True, slots=True)
class Help:
    """How to play by mail: commands, card notation, replying, and how to start a game."""

    KIND: ClassVar[str] = "help"
    #: Where a request for a new game is written (README, "Starting a game"); shown when set.
    new_game_address: str = ""


@dataclass(frozen=True, slots=True)
class Status:
    """The recipient's hand and the table again (``status`` command)."""

    KIND: ClassVar[str] = "status"


@dataclass(frozen=True, slots=True)
class GameListing:
    """One line of the ``games`` list."""

    game_id: int
    title: str
    status: Literal["inviting", "active", "paused", "finished", "aborted"]
    my_turn: bool = False
    hand_number: int = 0
    my_total: int | None = None
    waiting_for: tuple[str, ...] = ()  # names
    game_url: str = ""


@dataclass(frozen=True, slots=True)
class Games:
    """The recipient's games (``games`` command)."""

    KIND: ClassVar[str] = "games"
    games: tuple[GameListing, ...]


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules of this game in words (``rules`` command); ``rules`` is the engine's dict."""

    KIND: ClassVar[str] = "rules"
    rules: Mapping[str, object]

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", _frozen_mapping(self.rules))


@dataclass(frozen=True, slots=True)
class Invitation:
    """An invitation to a new game; the recipient may not be a player yet."""

    KIND: ClassVar[str] = "invitation"
    game_id: int
    inviter_name: str
    inviter_address: str
    players: tuple[str, ...]  # the other people invited (names or addresses)
    reply_address: str  # the signed invitation address
    rules: Mapping[str, object] = field(default_factory=dict)
    bots: int = 0
    #: The creator's own seat: they asked for the game and confirm it (then the others are invited).
    confirm: bool = False
    #: The game's title (the Subject of the mail that asked for it), if any.
    title: str = ""
    #: The computer players' names with their strength ("Marta (computer, strong)"), one per bot.
    computers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", _frozen_mapping(self.rules))


@dataclass(frozen=True, slots=True)
class InvitationAccepted:
    """Someone accepted (or declined) an invitation; who is still awaited."""

    KIND: ClassVar[str] = "invitation_accepted"
    game_id: int
    player_name: str
    accepted: bool = True
    still_waiting: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GameStarted:
    """Every seat is taken: the game begins.  Only to a player with nothing to decide yet (the
    others learn it in their first `YourTurn`, ``started``); a news mail."""

    KIND: ClassVar[str] = "game_started"
    rules: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", _frozen_mapping(self.rules))


@dataclass(frozen=True, slots=True)
class BounceNotice:
    """To a game's creator: mail to one player's address bounces."""

    KIND: ClassVar[str] = "bounce_notice"
    game_id: int
    player_name: str
    player_address: str
    diagnostic: str = ""  # the remote server's words, shown verbatim


@dataclass(frozen=True, slots=True)
class Welcome:
    """First mail to a newly registered player."""

    KIND: ClassVar[str] = "welcome"


@dataclass(frozen=True, slots=True)
class PlayAhead:
    """Playing ahead changed (``queue …``, ``queue clear``, ``autopilot``, ``autopilot off``).

    The game context shows what is queued now (``game.queued``, ``game.autopilot``);
    ``dropped`` are queued cards the player does not hold (left out).
    """

    KIND: ClassVar[str] = "play_ahead"
    change: Literal["queued", "cleared", "autopilot_on", "autopilot_off"]
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ForcedCardsChanged:
    """The player's choice about single legal cards: played for them (``on``) or asked."""

    KIND: ClassVar[str] = "forced_cards"
    on: bool = True


@dataclass(frozen=True, slots=True)
class LanguageChanged:
    """The player's mails are now in ``language`` (the mail itself is already in it); ``None``: the
    language they asked for is not one pbem speaks, and nothing changed."""

    KIND: ClassVar[str] = "language_changed"
    language: str | None = None


@dataclass(frozen=True, slots=True)
class NotifyChanged:
    """This game's (or, ``everywhere``, every game's) notification choice is now ``level``.

    ``via`` says how: by a ``notify`` mail, or the one-click unsubscribe link (``web``).
    """

    KIND: ClassVar[str] = "notify_changed"
    level: Literal["every_card", "turn_and_trick", "digest", "turn_only"]
    everywhere: bool = False
    via: Literal["mail", "web"] = "mail"


@dataclass(frozen=True, slots=True)
class HistoryHand:
    """One hand of a ``history`` mail, as the recipient's seat may see it."""

    number: int
    pass_direction: PassDirection
    passed: tuple[str, ...] = ()  # the recipient's own pass
    tricks: tuple[FinishedTrick, ...] = ()
    on_table: tuple[Play, ...] = ()  # the trick being played
    result: HandResult | None = None
    #: The kitty (RULES.md §6.2): who took it at the end of which trick; its cards and the discards
    #: only as the recipient may see them (``pbem.services.game_views.HandLog``: its taker, or
    #: everyone once the hand's tricks are all played).
    kitty_taker: int | None = None
    kitty_trick: int | None = None
    kitty: tuple[str, ...] = ()
    discarded: tuple[str, ...] = ()
    #: The passing variants (RULES.md §6.3): the dealer's call and who made it (public), whether the
    #: recipient declined this hand's pass (their own only), their split pass by direction.
    pass_call: tuple[tuple[str, int], ...] = ()
    caller: int | None = None
    declined: bool = False
    passed_packets: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Turbo Hearts (RULES.md §6.4): what each seat charged, by seat, once all had decided (else empty).
    charges: tuple[tuple[str, ...], ...] = ()

    @property
    def charged_by(self) -> tuple[tuple[int, tuple[str, ...]], ...]:
        return tuple((seat, cards) for seat, cards in enumerate(self.charges) if cards)


@dataclass(frozen=True, slots=True)
class MoveHistory:
    """Every move of the game the recipient may see (``history`` command)."""

    KIND: ClassVar[str] = "history"
    hands: tuple[HistoryHand, ...]


@dataclass(frozen=True, slots=True)
class DigestGame:
    """One game in a daily digest: what happened since the last digest, and where it stands."""

    game_id: int
    title: str
    names: tuple[str, ...]
    seat: int
    hand_number: int
    totals: tuple[int, ...]
    cards_played: int = 0  # since the last digest
    hands: tuple[HandResult, ...] = ()  # hands scored since the last digest
    waiting_for: tuple[int, ...] = ()  # seats the game waits for now
    over: bool = False
    winners: tuple[int, ...] = ()
    table_talk: tuple[TalkLine, ...] = ()
    game_url: str = ""
    #: With a partnership (RULES.md §6.1): the teams and their totals.
    teams: tuple[tuple[int, ...], ...] = ()
    team_totals: tuple[int, ...] = ()
    #: The players are deciding their charges (RULES.md §6.4): ``waiting_for`` then holds only the
    #: recipient's own seat (who else is to charge would tell who holds a chargeable card).
    charging: bool = False

    @property
    def my_turn(self) -> bool:
        return self.seat in self.waiting_for


@dataclass(frozen=True, slots=True)
class Digest:
    """The daily mail of a player who chose ``notify digest``: their games since ``since``."""

    KIND: ClassVar[str] = "digest"
    since: datetime
    games: tuple[DigestGame, ...]


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    """Where a news mail's ``List-Unsubscribe`` points (RFC 2369 and RFC 8058 one-click)."""

    url: str  # https: a POST here switches the notifications to the minimum
    mailto: str = ""  # mailto:…?subject=…&body=…


# ---------------------------------------------------------------------------------------
# Time in long games (README, "Time"): deadlines, absences, substitutes, the creator's commands.
# Datetimes are aware UTC; the templates show them in the reader's zone (the `when` filter).
# ---------------------------------------------------------------------------------------

AbsencePolicy = Literal["bot", "pause", "substitute"]
#: Who paused, resumed, extended or called off a game: its creator (``by_name``), the server's
#: operator (command line), a deadline, or a player's return.
Actor = Literal["creator", "operator", "deadline", "return", "substitute"]


@dataclass(frozen=True, slots=True)
class Reminder:
    """The game waits for the recipient's decision: ``before`` the deadline, or at it
    (``deadline``: the grace period runs until ``acts_at``, then ``policy`` applies)."""

    KIND: ClassVar[str] = "reminder"
    stage: Literal["before", "deadline"]
    since: datetime
    deadline: datetime
    acts_at: datetime
    policy: AbsencePolicy = "bot"
    #: The decision has a default of its own in the rules, taken at ``acts_at`` instead of the
    #: policy (RULES.md §3 ``moon``: ``safety``; §6.2: the kitty cards discarded; §6.3: the cycle's
    #: call, declining; §6.4: nothing charged): ``moon``, ``discard``, ``call``, ``decline``,
    #: ``charge``, or empty.
    default: str = ""


@dataclass(frozen=True, slots=True)
class DecisionDefaulted:
    """To the player whose decision's time ran out: the rules' default was taken for them
    (RULES.md §3 ``moon``: with no answer by the deadline ``safety`` decides; §6.2: the kitty
    cards themselves are discarded; §6.3: the cycle's call, or declining the pass; §6.4: nothing
    charged). ``decision`` is ``moon``, ``discard``, ``call``, ``decline`` or ``charge``; for a moon, how
    ``safety`` scored it (``scoring``: ``old`` or ``new``), its ``kind`` and total, and whether
    it was a team's slam (``team``, §6.1); for a discard, the ``cards`` discarded. The seat
    stays the player's: their next decision has a deadline of its own."""

    KIND: ClassVar[str] = "decision_defaulted"
    decision: Literal["moon", "discard", "call", "decline", "charge"]
    deadline: datetime | None = None
    scoring: str = ""
    kind: str = "moon"
    moon_total: int = 26
    team: bool = False
    cards: tuple[str, ...] = ()
    #: ``call`` (RULES.md §6.3 dealer_calls_pass): the call made, the pass cycle's for the hand.
    call: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class StandIn:
    """To an absent player: a computer player now decides for them, because their deadline
    passed (``deadline``, or ``substitute_wanted`` when a substitute is sought) or they are
    on vacation until ``until``."""

    KIND: ClassVar[str] = "stand_in"
    reason: Literal["deadline", "substitute_wanted", "vacation"]
    deadline: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class SeatBack:
    """The recipient wrote to their seat and has it back (no computer player any more)."""

    KIND: ClassVar[str] = "seat_back"


@dataclass(frozen=True, slots=True)
class GamePaused:
    """The game is paused: by its creator or the operator, or because ``seat`` missed a
    deadline (``by="deadline"``)."""

    KIND: ClassVar[str] = "game_paused"
    by: Actor
    by_name: str = ""
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class GameResumed:
    """The game goes on: resumed by its creator or the operator, or because the player it
    waited for (``seat``) came back or was replaced."""

    KIND: ClassVar[str] = "game_resumed"
    by: Actor
    by_name: str = ""
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class GameAborted:
    """The game was called off; ``game.totals`` are the scores when it stopped."""

    KIND: ClassVar[str] = "game_aborted"
    by: Actor
    by_name: str = ""


@dataclass(frozen=True, slots=True)
class DeadlineExtended:
    """These seats have ``hours`` more to decide (``game.deadline`` is the recipient's own)."""

    KIND: ClassVar[str] = "deadline_extended"
    seats: tuple[int, ...]
    hours: int
    by: Actor = "creator"
    by_name: str = ""


@dataclass(frozen=True, slots=True)
class VacationNoted:
    """To the player: away until ``until`` (or back, ``ended``); ``days_left`` this year. A vacation
    planned ahead begins at ``starts``; ``cancelled``: the one planned from ``starts`` is off."""

    KIND: ClassVar[str] = "vacation"
    until: datetime | None
    days_left: int
    ended: bool = False
    starts: datetime | None = None
    cancelled: bool = False


@dataclass(frozen=True, slots=True)
class PlayerAway:
    """To the others at a table: the player of ``seat`` is away until ``until`` (a computer
    player plays for them when ``bot``, else the game waits), or is ``back``."""

    KIND: ClassVar[str] = "player_away"
    seat: int
    until: datetime | None = None
    bot: bool = False
    back: bool = False


@dataclass(frozen=True, slots=True)
class SubstituteWanted:
    """To the creator: the player of ``seat`` missed their deadline and a substitute is
    wanted; or (``invited``) the substitute invitation went to that address."""

    KIND: ClassVar[str] = "substitute_wanted"
    seat: int
    invited: str = ""


@dataclass(frozen=True, slots=True)
class SubstituteInvitation:
    """An invitation to take over a seat of a running game, as it is (hand and points)."""

    KIND: ClassVar[str] = "substitute_invitation"
    game_id: int
    inviter_name: str
    inviter_address: str
    absent_name: str
    players: tuple[str, ...]  # the others at the table
    reply_address: str  # the signed invitation address
    hand_number: int = 1
    points: int = 0  # the seat's total so far
    rules: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", _frozen_mapping(self.rules))


@dataclass(frozen=True, slots=True)
class SeatReplaced:
    """``new_name`` took over the seat of ``old_name``. The replaced player gets it without a
    game context (they no longer see the seat's cards), so ``game_id`` threads it."""

    KIND: ClassVar[str] = "seat_replaced"
    seat: int
    old_name: str
    new_name: str
    game_id: int | None = None


@dataclass(frozen=True, slots=True)
class TimeZoneSet:
    """The recipient's times are now shown in ``zone`` (an IANA name); ``now`` shows it."""

    KIND: ClassVar[str] = "time_zone"
    zone: str
    now: datetime


TIME_DETAILS: tuple[type, ...] = (
    Reminder, DecisionDefaulted, StandIn, SeatBack, GamePaused, GameResumed, GameAborted, DeadlineExtended,
    VacationNoted, PlayerAway, SubstituteWanted, SubstituteInvitation, SeatReplaced, TimeZoneSet,
)
TimeDetail = (
    Reminder | DecisionDefaulted | StandIn | SeatBack | GamePaused | GameResumed | GameAborted | DeadlineExtended
    | VacationNoted | PlayerAway | SubstituteWanted | SubstituteInvitation | SeatReplaced | TimeZoneSet
)
TIME_GAME_KINDS = frozenset(
    {"reminder", "decision_defaulted", "stand_in", "seat_back", "game_paused", "game_resumed", "game_aborted",
     "deadline_extended", "player_away", "substitute_wanted"}
)


MailDetail = (
    YourTurn
    | TrickDone
    | CardPlayed
    | PassDone
    | ChargeDone
    | ChargesRevealed
    | HandSummary
    | GameSummary
    | MoveRejected
    | RequestRejected
    | ResignAsked
    | Help
    | Status
    | Games
    | Rules
    | Invitation
    | InvitationAccepted
    | GameStarted
    | BounceNotice
    | Welcome
    | PlayAhead
    | NotifyChanged
    | ForcedCardsChanged
    | LanguageChanged
    | MoveHistory
    | Digest
    | TimeDetail
)

#: Every kind of mail, by template name.
KINDS: Mapping[str, type] = MappingProxyType(
    {
        cls.KIND: cls
        for cls in (
            YourTurn,
            TrickDone,
            CardPlayed,
            PassDone,
            ChargeDone,
            ChargesRevealed,
            HandSummary,
            GameSummary,
            MoveRejected,
            RequestRejected,
            ResignAsked,
            Help,
            Status,
            Games,
            Rules,
            Invitation,
            InvitationAccepted,
            GameStarted,
            BounceNotice,
            Welcome,
            PlayAhead,
            NotifyChanged,
            ForcedCardsChanged,
            LanguageChanged,
            MoveHistory,
            Digest,
            *TIME_DETAILS,
        )
    }
)

#: Kinds that need a `GameContext`.
GAME_KINDS = frozenset(
    {"your_turn", "trick_done", "card_played", "pass_done", "charge_done", "charges_revealed", "hand_summary",
     "game_summary", "status",
     "game_started", "play_ahead", "history"}
) | TIME_GAME_KINDS


@dataclass(frozen=True, slots=True)
class MailContext:
    """Everything one mail needs: recipient, game view (if any) and the kind's detail."""

    recipient: Recipient
    detail: MailDetail
    game: GameContext | None = None
    #: For news mails (README, "Notifications"): the ``List-Unsubscribe`` targets.
    unsubscribe: Unsubscribe | None = None

    def __post_init__(self) -> None:
        kind = type(self.detail).KIND
        if kind in GAME_KINDS and self.game is None:
            raise ValueError(f"a {kind} mail needs a game context")

    @property
    def kind(self) -> str:
        return type(self.detail).KIND

    @property
    def language(self) -> str:
        return self.recipient.language

    @property
    def game_id(self) -> int | None:
        """The game this mail belongs to (for threading and X-Hearts-Game), if any."""
        if self.game is not None:
            return self.game.game_id
        return getattr(self.detail, "game_id", None)

    @property
    def inline_images(self) -> tuple[InlineImage, ...]:
        """Pictures the HTML part shows by ``cid:`` (the game summary's chart)."""
        chart = getattr(self.detail, "chart", None)
        return (chart,) if isinstance(chart, InlineImage) else ()

    @property
    def reply_address(self) -> str | None:
        if isinstance(self.detail, (Invitation, SubstituteInvitation)):
            return self.detail.reply_address
        return self.game.reply_address if self.game is not None else None
