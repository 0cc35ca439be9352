"""The rules of a game, declared as data (RULES.md §3 to §5).

:class:`Rules` holds every option by its RULES.md name and refuses, when it is made, a combination
that cannot work. ``Rules.make("omnibus", target=50)`` takes a preset plus overrides. What the engine
needs at play time (card values, the moon total, the first lead…) is worked out once per rules value
in :class:`Table`.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

from .cards import CARD_INDEX, CARD_NAMES, CLUBS_MASK, FULL_DECK, HEARTS, QS, QS_BIT, RANK_OF, SUIT_OF, canonical
from .errors import InvalidRules

PASS_DIRECTIONS = ("left", "right", "across", "hold", "scatter", "mix")
#: RULES.md §6.3: the directions a dealer's call may split ``pass_count`` over (``across``: 4 or 6 players).
CALL_DIRECTIONS = ("left", "right", "across")
FIRST_LEADS = ("two_of_clubs", "any_club", "left_of_dealer")
HEART_VALUES = ("one", "spot", "spot_capped")
MOONS = ("old", "new", "choice", "safety", "none", "win")
TIES = ("play_on", "share")
PARTNERSHIPS = ("none", "team", "individual")
PARTNER_MOONS = ("spared", "charged")
KITTIES = ("none", "penalty", "first_trick", "first_penalty")
#: RULES.md §6.8: the player counts each kitty form allows.
KITTY_PLAYERS: dict[str, tuple[int, ...]] = {"penalty": (4,), "first_trick": (3, 5), "first_penalty": (3, 5)}
#: RULES.md §6.1: partners sit opposite.
TEAMS = ((0, 2), (1, 3))

#: RULES.md §4: the cards taken out for each number of players.
REMOVED_BY_PLAYERS: dict[int, tuple[str, ...]] = {
    3: ("2D",),
    4: (),
    5: ("2D", "2C"),
    6: ("2D", "3D", "3C", "4C"),
    7: ("2D", "3D", "3C"),
}


def default_pass_cycle(players: int) -> tuple[str, ...]:
    return ("left", "right", "across", "hold") if players == 4 else ("left", "right")


#: RULES.md §5: what each preset changes from ``standard``.
PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "classic": {"qs_breaks_hearts": True, "moon": "choice"},
    "pagat": {"no_pts_on_first_trick": False, "moon": "choice"},
    "omnibus": {"jd_bonus": -10, "moon": "choice"},
    "spot": {"heart_values": "spot", "qs_penalty": 25, "target": 500},
    "black-maria": {
        "players": 3,
        "pass_cycle": ("right",),
        "first_lead": "left_of_dealer",
        "must_break_hearts": False,
        "no_pts_on_first_trick": False,
        "extra_penalties": {"KS": 10, "AS": 7},
    },
    "original-1880": {
        "pass_count": 0,
        "qs_penalty": 0,
        "moon": "none",
        "first_lead": "left_of_dealer",
        "must_break_hearts": False,
        "no_pts_on_first_trick": False,
    },
    "dame-de-pique": {"pass_count": 0, "first_lead": "left_of_dealer", "no_pts_on_first_trick": False},
    "reverse": {"lowest_wins": False, "moon": "none"},
    "hartenjagen": {
        "removed_cards": tuple(r + s for s in "CDHS" for r in "23456"),
        "qs_penalty": 5,
        "extra_penalties": {"JC": 2},
    },
    # RULES.md §6 presets
    "partnership": {"partnership": "team"},
    "partnership-individual": {"partnership": "individual"},
    "kitty": {"kitty": "penalty"},
    "turbo": {"turbo": True, "jd_bonus": -10},
    "turbo-nines": {"turbo": True, "jd_bonus": -10, "booster_nines": True},
    # RULES.md §6.6, §6.8: two decks, the leftovers a kitty for the first trick's winner.
    "cancellation": {
        "decks": 2,
        "players": 8,
        "first_lead": "left_of_dealer",
        "no_pts_on_first_trick": False,
        "pass_cycle": ("left", "right"),
    },
    "dnf": {
        "jd_bonus": -10,
        "qs_penalty": 26,
        "extra_penalties": {"QC": 13, "QD": 13, "QH": 13},
        "target": 300,
        "first_lead": "two_of_clubs",
        "no_pts_on_first_trick": True,
        "dealer_calls_pass": True,
        "moon": "win",
    },
}

#: Preset-specific cards removed for a number of players, where they differ from §4.
_PRESET_REMOVED: dict[str, dict[int, tuple[str, ...]]] = {"black-maria": {3: ("2C",), 4: ()}}


@dataclass(frozen=True)
class Rules:
    """Every option of RULES.md §3. ``None`` for ``removed_cards``/``pass_cycle`` means "per §4"."""

    players: int = 4
    removed_cards: tuple[str, ...] | None = None
    pass_cycle: tuple[str, ...] | None = None
    pass_count: int = 3
    first_lead: str = "two_of_clubs"
    no_pts_on_first_trick: bool = True
    must_break_hearts: bool = True
    qs_breaks_hearts: bool = False
    qs_lead_needs_broken_hearts: bool = False
    can_lead_hearts_instead_of_qs: bool = False
    qs_must_drop_when_safe: bool = False
    qs_penalty: int = 13
    heart_values: str = "one"
    extra_penalties: tuple[tuple[str, int], ...] = ()
    jd_bonus: int = 0
    bonus_card: str = "JD"
    moon: str = "old"
    sun: bool = False
    avoid_all_tricks_bonus: int = 0
    target: int = 100
    end_after_hands: int | None = None
    exact_target_reset: int | None = None
    tie: str = "play_on"
    lowest_wins: bool = True
    partnership: str = "none"
    partner_moon: str = "spared"
    pass_to_partner: bool = False
    kitty: str = "none"
    kitty_exchange: bool = False
    pass_optional: bool = False
    dealer_calls_pass: bool = False
    turbo: bool = False
    charge_limit: int = 4
    booster_nines: bool = False
    decks: int = 1
    preset: str = field(default="standard", compare=True)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.decks not in (1, 2) or isinstance(self.decks, bool):
            raise InvalidRules("BAD_CHOICE", option="decks", value=self.decks, choices=[1, 2])
        if self.decks == 2:
            # RULES.md §6.6, §6.8: two decks only with 6 to 10 players.
            if not isinstance(self.players, int) or not 6 <= self.players <= 10:
                raise InvalidRules("TWO_DECKS_NEED_PLAYERS", players=self.players, allowed=[6, 10])
        elif not isinstance(self.players, int) or not 3 <= self.players <= 7:
            raise InvalidRules("BAD_PLAYERS", players=self.players)
        removed = self.removed_cards
        if removed is None:
            # RULES.md §6.8: a kitty replaces §4's removed cards; with two decks nothing is removed.
            removed = () if self.kitty != "none" or self.decks == 2 else REMOVED_BY_PLAYERS[self.players]
        set_(self, "removed_cards", tuple(sorted({_card(c, "removed_cards") for c in removed}, key=CARD_INDEX.get)))
        cycle = self.pass_cycle if self.pass_cycle is not None else default_pass_cycle(self.players)
        if isinstance(cycle, str):
            cycle = tuple(x for x in cycle.replace(",", " ").split())
        set_(self, "pass_cycle", tuple(cycle))
        extra = self.extra_penalties
        if isinstance(extra, Mapping):
            extra = tuple(extra.items())
        set_(self, "extra_penalties", tuple(sorted(((_card(c, "extra_penalties"), v) for c, v in extra), key=lambda kv: CARD_INDEX[kv[0]])))
        set_(self, "bonus_card", _card(self.bonus_card, "bonus_card"))
        self.__dict__["table"] = _validate(self)

    # -- making rules -------------------------------------------------------------------------

    @classmethod
    def make(cls, preset: str = "standard", **overrides: Any) -> "Rules":
        """The rules of a preset (RULES.md §5) with some options overridden, validated."""
        if preset not in PRESETS:
            raise InvalidRules("UNKNOWN_PRESET", preset=preset, presets=sorted(PRESETS),
                               suggestion=closest_name(preset, PRESETS))
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise InvalidRules("UNKNOWN_OPTION", options=sorted(unknown), suggestions=_suggestions(unknown))
        options = dict(PRESETS[preset])
        options.update(overrides)
        players = options.get("players", 4)
        special = _PRESET_REMOVED.get(preset, {})
        if "removed_cards" not in overrides and players in special and options.get("kitty", "none") == "none":
            options["removed_cards"] = special[players]
        options["preset"] = preset
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values, every option spelled out."""
        d = {name: getattr(self, name) for name in _FIELD_NAMES}  # all immutable: no deep copy
        d["removed_cards"] = list(self.removed_cards or ())
        d["pass_cycle"] = list(self.pass_cycle or ())
        d["extra_penalties"] = dict(self.extra_penalties)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Rules":
        if cls is Rules:
            try:
                key = tuple((name, _frozen(value) if type(value) in (list, dict) else value)
                            for name, value in d.items())
                return _rules_of(key)
            except TypeError:  # an option of an unexpected (unhashable) shape: the long way
                pass
        return cls._checked(d)

    @classmethod
    def _checked(cls, d: Mapping[str, Any]) -> "Rules":
        unknown = set(d) - _FIELD_NAMES
        if unknown:
            raise InvalidRules("UNKNOWN_OPTION", options=sorted(unknown), suggestions=_suggestions(unknown))
        return cls(**d)

    def with_options(self, **overrides: Any) -> "Rules":
        """These rules with some options changed, validated.

        A new player count brings its own deck and pass cycle, as ``Rules.make`` would give them for
        this preset (§4, or the preset's own: Black Maria's ``[2C]`` for 3 players, ``[right]``),
        unless they are given too. A deck or pass cycle that is not the preset's default for the old
        count (one chosen explicitly) is kept, and refused with the reason if it does not work with
        the new count.
        """
        players = overrides.get("players", self.players)
        if players != self.players:
            old_removed, old_cycle = _preset_deck_and_cycle(self.preset, self.players)
            if "removed_cards" not in overrides and self.removed_cards == old_removed:
                overrides["removed_cards"] = _preset_deck_and_cycle(self.preset, players)[0]
            if "pass_cycle" not in overrides and self.pass_cycle == old_cycle:
                overrides["pass_cycle"] = _preset_deck_and_cycle(self.preset, players)[1]
        if (overrides.get("kitty", "none") != "none" and self.kitty == "none" and "removed_cards" not in overrides
                and overrides.get("removed_cards", self.removed_cards)
                == _preset_deck_and_cycle(self.preset, self.players)[0]):
            overrides["removed_cards"] = ()  # a kitty replaces the count's removed cards (RULES.md §6.8)
        return dataclasses.replace(self, **overrides)

    @cached_property
    def table(self) -> "Table":
        return Table(self)

    @property
    def teams(self) -> tuple[tuple[int, int], ...]:
        """The partnerships, ``((0, 2), (1, 3))`` (RULES.md §6.1), or ``()`` without one."""
        return TEAMS if self.partnership != "none" else ()

    def team_of(self, seat: int) -> int | None:
        """The team (0 or 1) of ``seat`` with a partnership, else None."""
        return seat % 2 if self.partnership != "none" else None


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(Rules))


def _preset_deck_and_cycle(preset: str, players: Any) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """The ``removed_cards`` and ``pass_cycle`` that ``Rules.make(preset, players=players)`` gives
    (as the rules store them), or None where ``players`` is not a valid count (then the rules refuse
    it)."""
    options = PRESETS.get(preset, {})
    if options.get("decks") == 2 and isinstance(players, int) and 6 <= players <= 10:
        return (), tuple(options.get("pass_cycle", default_pass_cycle(players)))
    if not isinstance(players, int) or players not in REMOVED_BY_PLAYERS:
        return None, None
    removed = _PRESET_REMOVED.get(preset, {}).get(players, options.get("removed_cards", REMOVED_BY_PLAYERS[players]))
    cycle = options.get("pass_cycle", default_pass_cycle(players))
    return tuple(sorted((canonical(c) for c in set(removed)), key=CARD_INDEX.get)), tuple(cycle)


def _frozen(value: Any) -> Any:
    """A hashable equivalent of a JSON value (lists as tuples, objects as sorted pairs)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value


@functools.lru_cache(maxsize=256)
def _rules_of(key: tuple[tuple[str, Any], ...]) -> Rules:
    """Rules are immutable and a game's are read back on every move (``GameState.from_dict``):
    each distinct set of options is validated, and its ``Table`` built, once per process.
    (Only valid rules are kept: a refusal raises, and is not remembered.)"""
    return Rules._checked(dict(key))


def _card(name: Any, option: str) -> str:
    try:
        return canonical(str(name))
    except ValueError:
        raise InvalidRules("BAD_CARD", option=option, card=str(name)) from None


def _heart_value(rank: int, scheme: str) -> int:
    if scheme == "one":
        return 1
    if scheme == "spot":
        return rank + 2
    # spot_capped: 2..10 face value, J Q K 10, A 15
    return rank + 2 if rank <= 8 else (15 if rank == 12 else 10)


def _validate(r: Rules) -> "Table":
    n = r.players
    for name, value, choices in (
        ("partnership", r.partnership, PARTNERSHIPS),
        ("partner_moon", r.partner_moon, PARTNER_MOONS),
        ("kitty", r.kitty, KITTIES),
        ("first_lead", r.first_lead, FIRST_LEADS),
        ("heart_values", r.heart_values, HEART_VALUES),
        ("moon", r.moon, MOONS),
        ("tie", r.tie, TIES),
    ):
        if value not in choices:
            raise InvalidRules("BAD_CHOICE", option=name, value=value, choices=list(choices))
    for name in ("no_pts_on_first_trick", "must_break_hearts", "qs_breaks_hearts", "qs_lead_needs_broken_hearts",
                 "can_lead_hearts_instead_of_qs", "qs_must_drop_when_safe", "sun", "lowest_wins", "pass_to_partner", "kitty_exchange",
                 "pass_optional", "dealer_calls_pass", "turbo", "booster_nines"):
        if not isinstance(getattr(r, name), bool):
            raise InvalidRules("NOT_A_BOOL", option=name, value=getattr(r, name))
    for name in ("pass_count", "qs_penalty", "jd_bonus", "avoid_all_tricks_bonus", "target"):
        if not isinstance(getattr(r, name), int) or isinstance(getattr(r, name), bool):
            raise InvalidRules("NOT_AN_INT", option=name, value=getattr(r, name))
    if r.partnership != "none" and n != 4:
        raise InvalidRules("PARTNERSHIP_NEEDS_FOUR_PLAYERS", players=n)
    if r.pass_to_partner and r.partnership == "none":
        raise InvalidRules("PASS_TO_PARTNER_NEEDS_PARTNERSHIP")
    if r.decks == 2:
        _check_two_decks(r)
    kitty_size = 0
    if r.kitty != "none":
        allowed = KITTY_PLAYERS[r.kitty]
        if n not in allowed:
            raise InvalidRules("KITTY_NEEDS_PLAYERS", kitty=r.kitty, players=n, allowed=list(allowed))
        if r.removed_cards:
            raise InvalidRules("KITTY_WITH_REMOVED_CARDS", kitty=r.kitty)
        kitty_size = 4 if r.kitty == "penalty" else 52 % n
    elif r.kitty_exchange:
        raise InvalidRules("KITTY_EXCHANGE_NEEDS_KITTY")
    if r.decks == 2:
        kitty_size = 104 % n  # RULES.md §6.6: the leftovers of the deal
    in_play = 52 * r.decks - len(r.removed_cards or ()) - kitty_size
    if in_play % n:
        raise InvalidRules("DECK_DOES_NOT_DIVIDE", cards=in_play, players=n)
    hand_size = in_play // n
    if not r.pass_cycle:
        raise InvalidRules("EMPTY_PASS_CYCLE")
    for d in r.pass_cycle:
        if d not in PASS_DIRECTIONS:
            raise InvalidRules("BAD_CHOICE", option="pass_cycle", value=d, choices=list(PASS_DIRECTIONS))
    if not 0 <= r.pass_count <= 4 or r.pass_count > hand_size:
        raise InvalidRules("BAD_PASS_COUNT", pass_count=r.pass_count)
    if r.pass_count:
        if "across" in r.pass_cycle and n not in (4, 6):
            raise InvalidRules("ACROSS_NEEDS_EVEN_PLAYERS", players=n)
        if "scatter" in r.pass_cycle and r.pass_count % (n - 1):
            raise InvalidRules("SCATTER_DOES_NOT_DIVIDE", pass_count=r.pass_count, players=n)
    if r.dealer_calls_pass:
        # RULES.md §6.3: the dealer calls a split of pass_count (or mix) before each deal.
        if not r.pass_count:
            raise InvalidRules("CALL_NEEDS_PASSING")
        if r.pass_to_partner:
            raise InvalidRules("CALL_WITH_PASS_TO_PARTNER")  # every pass goes across: nothing to call
    if r.qs_penalty < 0:
        raise InvalidRules("NEGATIVE_PENALTY", option="qs_penalty", value=r.qs_penalty)
    for card, value in r.extra_penalties:
        if not isinstance(value, int) or value <= 0:
            raise InvalidRules("BAD_EXTRA_PENALTY", card=card, value=value)
    if r.jd_bonus not in (0, -5, -10):
        raise InvalidRules("BAD_CHOICE", option="jd_bonus", value=r.jd_bonus, choices=[0, -5, -10])
    if r.avoid_all_tricks_bonus > 0:
        raise InvalidRules("BONUS_MUST_NOT_BE_POSITIVE", value=r.avoid_all_tricks_bonus)
    if r.target <= 0:
        raise InvalidRules("BAD_TARGET", target=r.target)
    if r.end_after_hands is not None and (not isinstance(r.end_after_hands, int) or r.end_after_hands <= 0):
        raise InvalidRules("BAD_END_AFTER_HANDS", value=r.end_after_hands)
    if r.exact_target_reset is not None and not isinstance(r.exact_target_reset, int):
        raise InvalidRules("NOT_AN_INT", option="exact_target_reset", value=r.exact_target_reset)
    if r.sun and r.moon == "none":
        raise InvalidRules("SUN_NEEDS_MOON")
    # RULES.md §6.4, §6.8: Turbo's charges (charge_limit 4 by default; 1 is the seeds' literal reading).
    if not isinstance(r.charge_limit, int) or isinstance(r.charge_limit, bool) or not 1 <= r.charge_limit <= 4:
        raise InvalidRules("BAD_CHARGE_LIMIT", value=r.charge_limit)
    if r.charge_limit != 4 and not r.turbo:
        raise InvalidRules("CHARGE_LIMIT_NEEDS_TURBO", value=r.charge_limit)
    if r.turbo and "TC" in (r.removed_cards or ()):
        raise InvalidRules("TURBO_NEEDS_TEN_OF_CLUBS")
    t = Table(r)
    if r.first_lead != "left_of_dealer" and t.lowest_club < 0:
        raise InvalidRules("NO_CLUB_TO_LEAD", first_lead=r.first_lead)
    if r.jd_bonus:
        if t.values[CARD_INDEX[r.bonus_card]] > 0:
            raise InvalidRules("BONUS_CARD_IS_PENALTY", card=r.bonus_card)
        if r.bonus_card in (r.removed_cards or ()):
            raise InvalidRules("BONUS_CARD_REMOVED", card=r.bonus_card)
    if r.moon != "none" and t.moon_total <= 0:
        raise InvalidRules("NO_PENALTY_CARDS")
    return t


#: RULES.md §6.6, §6.8: what two decks cannot be played with, by option and the value that is refused
#: (``None``: any value other than the default). Two copies of a card make these ambiguous: whose 2C
#: leads, which copy was charged or boosts, a mix or a forwarded pass of two identical cards.
_NOT_WITH_TWO_DECKS: tuple[tuple[str, Any], ...] = (
    ("first_lead", "two_of_clubs"), ("first_lead", "any_club"), ("turbo", True), ("booster_nines", True),
    ("kitty_exchange", True), ("pass_optional", True), ("dealer_calls_pass", True), ("removed_cards", None),
)


def _check_two_decks(r: Rules) -> None:
    """Refuse the options that do not work with two decks (RULES.md §6.6, §6.8)."""
    for option, value in _NOT_WITH_TWO_DECKS:
        given = getattr(r, option)
        if (given if value is None else given == value):
            raise InvalidRules("NOT_WITH_TWO_DECKS", option=option,
                               value=list(given) if isinstance(given, tuple) else given)
    if "mix" in (r.pass_cycle or ()):
        raise InvalidRules("NOT_WITH_TWO_DECKS", option="pass_cycle", value="mix")


class Table:
    """What play needs, worked out once from a :class:`Rules` (masks and tuples by card index)."""

    def __init__(self, r: Rules) -> None:
        self.players = r.players
        removed = 0
        for c in r.removed_cards or ():
            removed |= 1 << CARD_INDEX[c]
        self.deck_mask = FULL_DECK & ~removed
        # RULES.md §6.6: with two decks every card of deck_mask is in play twice.
        self.decks = r.decks
        self.two_decks = r.decks == 2
        self.deck_size = self.deck_mask.bit_count() * r.decks
        self.deck_cards = tuple(c for i, c in enumerate(CARD_NAMES) if self.deck_mask >> i & 1 for _ in range(r.decks))
        # RULES.md §6.2: the kitty is the first kitty_size cards of the deck, in play but not dealt.
        # With two decks (§6.6) the deal's leftovers are a kitty for the first trick's winner.
        self.kitty_form = "first_trick" if self.two_decks else r.kitty
        self.kitty_size = (104 % r.players if self.two_decks else 0 if r.kitty == "none"
                           else 4 if r.kitty == "penalty" else 52 % r.players)
        self.kitty_exchange = r.kitty_exchange
        self.hand_size = (self.deck_size - self.kitty_size) // r.players
        extra = dict(r.extra_penalties)
        values = []
        for i, name in enumerate(CARD_NAMES):
            if name in extra:
                v = extra[name]
            elif SUIT_OF[i] == HEARTS:
                v = _heart_value(RANK_OF[i], r.heart_values)
            elif i == QS:
                v = r.qs_penalty
            else:
                v = 0
            values.append(v if self.deck_mask >> i & 1 else 0)
        self.values: tuple[int, ...] = tuple(values)
        self.penalty_mask = sum(1 << i for i, v in enumerate(values) if v > 0)
        self.moon_total = sum(values) * r.decks  # RULES.md §6.6: M is both decks' values
        self.bonus = r.jd_bonus
        self.bonus_bit = (1 << CARD_INDEX[r.bonus_card]) if r.jd_bonus else 0
        clubs = self.deck_mask & CLUBS_MASK
        self.lowest_club = (clubs & -clubs).bit_length() - 1 if clubs else -1
        self.first_lead = r.first_lead
        self.no_pts_first = r.no_pts_on_first_trick
        self.must_break = r.must_break_hearts
        self.qs_breaks = r.qs_breaks_hearts
        self.qs_lead_needs_broken = r.qs_lead_needs_broken_hearts
        self.hearts_instead_of_qs = r.can_lead_hearts_instead_of_qs
        self.qs_drop = r.qs_must_drop_when_safe
        self.pass_count = r.pass_count
        self.pass_cycle = r.pass_cycle
        self.moon = r.moon
        self.sun = r.sun
        self.avoid_bonus = r.avoid_all_tricks_bonus
        self.target = r.target
        self.end_after_hands = r.end_after_hands
        self.exact_target_reset = r.exact_target_reset
        self.tie_share = r.tie == "share"
        self.lowest_wins = r.lowest_wins
        # Playing out the rest can change a score only through these cards and, with these
        # options, through who takes which trick.
        self.scoring_mask = self.penalty_mask | self.bonus_bit
        self.tricks_matter = r.sun or r.avoid_all_tricks_bonus != 0
        # RULES.md §6.1: "team" pools partners' tricks and scores; "individual" scores alone and
        # ranks by the partners' sums.
        self.partnership = r.partnership
        self.team = r.partnership == "team"
        self.individual = r.partnership == "individual"
        self.partner_spared = r.partner_moon == "spared"
        self.pass_to_partner = r.pass_to_partner
        # Checked once a trick is complete (never on the standard game's card plays): the kitty's
        # taking and the team mode's latest trick winners.
        self.trick_hook = bool(self.kitty_size) or self.team
        # RULES.md §6.3 passing variants
        self.pass_optional = r.pass_optional
        self.dealer_calls = r.dealer_calls_pass
        # RULES.md §6.4 Turbo: the cards a player may charge (AH, QS, TC and the bonus card, those in
        # play), how many, and the 10 of clubs whose taker's hand score is multiplied.
        self.turbo = r.turbo
        self.charge_limit = r.charge_limit
        chargeable = ("AH", "QS", "TC") + ((r.bonus_card,) if r.jd_bonus else ())
        self.chargeable_mask = sum(1 << CARD_INDEX[c] for c in set(chargeable)) & self.deck_mask if r.turbo else 0
        self.tc_bit = 1 << CARD_INDEX["TC"]
        if r.turbo:
            self.scoring_mask |= self.tc_bit  # its taker's hand score is still to be multiplied
        # RULES.md §6.5 Booster Nines: checked once a trick's first round is down.
        self.booster = r.booster_nines
        # Turbo tracks the suits led (a charged card's first trick of its suit).
        self.trick_hook = self.trick_hook or r.turbo
        # The legal cards of a follower are more than "the cards of the led suit held".
        self.slow_follow = r.qs_must_drop_when_safe or r.turbo
        self.win_moon = r.moon == "win"
        self._charged: dict[int, "Table"] = {}

    def charged(self, mask: int) -> "Table":
        """This table with the values of a hand whose charged cards are ``mask`` (RULES.md §6.4): a
        charged QS doubles its value, a charged AH every heart's, a charged bonus card its bonus.
        Worked out once per mask; the state carries it for the rest of the hand."""
        found = self._charged.get(mask)
        if found is None:
            found = copy.copy(self)
            found._charged = {}
            values = list(self.values)
            if mask & QS_BIT:
                values[QS] *= 2
            if mask & 1 << CARD_INDEX["AH"]:
                for i in range(26, 39):
                    values[i] *= 2
            found.values = tuple(values)
            found.moon_total = sum(values)
            if mask & self.bonus_bit:
                found.bonus = 2 * self.bonus
            self._charged[mask] = found
        return found

    def pass_direction(self, hand_no: int) -> str:
        """The pass direction of hand ``hand_no`` (1-based)."""
        if not self.pass_count:
            return "hold"
        direction = self.pass_cycle[(hand_no - 1) % len(self.pass_cycle)]
        if self.pass_to_partner and direction != "hold":
            return "across"  # RULES.md §6.1, §6.8: every passing hand passes to the partner
        return direction


def closest_name(word: str, names: Any) -> str | None:
    """The one of ``names`` that ``word`` most likely misspells (``omnibsu``: ``omnibus``), or None:
    what a refusal offers as "did you mean"."""
    text = str(word).strip().lower().replace(" ", "_")
    found = difflib.get_close_matches(text, sorted(names), n=1, cutoff=0.6)
    return found[0] if found else None


def _suggestions(unknown: Any) -> dict[str, str]:
    """For each unknown option name, the option it most likely misspells (only those with one)."""
    names = [f.name for f in dataclasses.fields(Rules)]
    close = {name: closest_name(name, names) for name in sorted(unknown)}
    return {name: found for name, found in close.items() if found is not None}
