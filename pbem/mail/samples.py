"""Realistic sample mail contexts: for template tests, the compose benchmark and previews.

A mid-game position of a four-player standard game (#42, hand 3, passing across), seen
from seat 1, with names that need more than ASCII.  `sample_contexts` returns at least one
context for every kind of mail, and one `MoveRejected`/`RequestRejected` per reason code,
so a test can render them all in every language.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from .chart import PALETTE, chart_labels, hex_colour, score_chart
from .context import (
    BounceNotice,
    CardPlayed,
    ChargeDone,
    ChargesRevealed,
    Digest,
    DigestGame,
    FinishedTrick,
    GameContext,
    GameListing,
    GameStarted,
    GameStats,
    GameSummary,
    Games,
    HandResult,
    HandSummary,
    Help,
    HistoryHand,
    InlineImage,
    Invitation,
    InvitationAccepted,
    MailContext,
    Moon,
    MoveHistory,
    MoveRejected,
    NotifyChanged,
    ForcedCardsChanged,
    PassDone,
    LanguageChanged,
    Play,
    PlayAhead,
    Recipient,
    RequestRejected,
    ResignAsked,
    Rules,
    Status,
    Taken,
    TalkLine,
    TrickDone,
    Unsubscribe,
    Welcome,
    YourTurn,
)
from .context import (  # time in long games (README, "Time")
    DeadlineExtended,
    DecisionDefaulted,
    GameAborted,
    GamePaused,
    GameResumed,
    PlayerAway,
    Reminder,
    SeatBack,
    SeatReplaced,
    StandIn,
    SubstituteInvitation,
    SubstituteWanted,
    TimeZoneSet,
    VacationNoted,
)
from .i18n import load_translations

__all__ = ["MOVE_REJECTIONS", "REQUEST_REJECTIONS", "sample_contexts", "sample_game"]

NAMES = ("Zoë Ávila", "João Brandão", "Ștefan Țurcanu", "Dana")
RULES = {
    "preset": "omnibus",
    "players": 4,
    "pass_cycle": ["left", "right", "across", "hold"],
    "pass_count": 3,
    "first_lead": "two_of_clubs",
    "no_pts_on_first_trick": True,
    "must_break_hearts": True,
    "qs_penalty": 13,
    "heart_values": "one",
    "jd_bonus": -10,
    "bonus_card": "JD",
    "moon": "choice",
    "target": 100,
    "tie": "play_on",
    "lowest_wins": True,
}
HISTORY = (
    HandResult(1, (4, 13, 9, 0), (4, 13, 9, 0)),
    HandResult(2, (0, 26, 26, 26), (4, 39, 35, 26), Moon(shooter=0)),
)

#: The first two tricks of a hand, a single legal card played for seat 1 in each.
FIRST_TRICKS = (
    FinishedTrick(1, (Play(0, "2C"), Play(1, "7C"), Play(2, "KC"), Play(3, "5C")), 2, 0),
    FinishedTrick(2, (Play(2, "3D"), Play(3, "QD"), Play(0, "9D"), Play(1, "6D")), 3, 0),
)

#: The last tricks of hand 2 (seat 0 shot the moon), played out: no card left could change a score.
PLAYED_OUT_TRICKS = (
    FinishedTrick(11, (Play(0, "AC"), Play(1, "4C"), Play(2, "8D"), Play(3, "6S")), 0, 0),
    FinishedTrick(12, (Play(0, "KC"), Play(1, "9C"), Play(2, "5D"), Play(3, "7S")), 0, 0),
    FinishedTrick(13, (Play(0, "AS"), Play(1, "3S"), Play(2, "TD"), Play(3, "2D")), 0, 0),
)

#: Engine and reader codes with realistic details (every play rejection carries ``legal``).
MOVE_REJECTIONS: dict[str, dict[str, object]] = {
    "WRONG_PHASE": {"phase": "pass", "expected": "pass"},
    "NOT_YOUR_TURN": {"seat": 1, "to_move": 2},
    "GAME_OVER": {},
    "UNKNOWN_CARD": {"text": "queen of spaids"},
    "CARD_NOT_IN_HAND": {"card": "AS", "legal": ["3C", "9C"]},
    "MUST_FOLLOW_SUIT": {"card": "QH", "led_suit": "C", "held": ["9C", "3C"], "legal": ["3C", "9C"]},
    "MUST_LEAD_LOWEST_CLUB": {"card": "5C", "required": "2C", "legal": ["2C"]},
    "MUST_LEAD_CLUB": {"card": "AD", "clubs": ["5C", "KC"], "legal": ["5C", "KC"]},
    "NO_POINTS_ON_FIRST_TRICK": {"card": "QS", "legal": ["AD", "7D"]},
    "HEARTS_NOT_BROKEN": {"card": "TH", "legal": ["9C", "KD", "4S"]},
    "QS_NEEDS_BROKEN_HEARTS": {"card": "QS", "legal": ["2D"]},
    "MUST_PLAY_QS": {"card": "2D", "legal": ["QS"]},
    "ALREADY_PASSED": {"seat": 1},
    "NO_PASS_THIS_HAND": {},
    "WRONG_PASS_COUNT": {"expected": 3, "given": 2},
    "DUPLICATE_CARD": {"card": "KH"},
    "NOT_THE_SHOOTER": {"seat": 1, "shooter": 0},
    "BAD_MOON_CHOICE": {"choice": "both"},
    "BAD_SEAT": {"seat": 9},
    "NO_COMMAND": {},
    "TWO_CARDS": {"cards": ["QS", "TH"]},
    "WRONG_CARD_COUNT": {"expected": 3, "given": ["QS", "AH", "KH", "2C"]},
    "UNKNOWN_WORD": {"word": "pasar"},
    # kitty_exchange (RULES.md §6.2)
    "NOT_THE_KITTY_TAKER": {"seat": 1, "taker": 2},
    "WRONG_DISCARD_COUNT": {"expected": 4, "given": 3},
    # passing variants (RULES.md §6.3)
    "NOT_THE_DEALER": {"seat": 1, "dealer": 3},
    "BAD_CALL": {"call": [["left", 4]], "choices": [[["left", 3]], [["left", 2], ["right", 1]], [["mix", 3]]]},
    "PASS_NOT_OPTIONAL": {},
    "NO_DECLINE_ON_MIX": {},
    # Turbo Hearts (RULES.md §6.4)
    "NOT_CHARGEABLE": {"card": "KH", "choices": ["QS", "TC"]},
    "TOO_MANY_CHARGES": {"limit": 1, "given": 2},
    "ALREADY_CHARGED": {"seat": 1},
    "CHARGED_CARD_FIRST_TRICK_OF_SUIT": {"card": "TC", "suit": "C", "legal": ["3C", "9C"]},
}

#: Service codes: mails that were not moves, answered only to the registered player.
REQUEST_REJECTIONS: dict[str, dict[str, object]] = {
    "STALE_TURN": {"decision": 16, "current": 17},
    "FORGED_SENDER": {"sender": "mallory@example.net"},
    "BAD_ADDRESS": {"problem": "BAD_SIGNATURE"},
    "NOT_A_PLAYER": {},
    "GAME_NOT_ACTIVE": {"status": "paused"},
    "RATE_LIMITED": {"limit": 10},
    "EMPTY": {"example": "KS"},
    "BOTH_MOON_CHOICES": {},
    "CHARGE_NONE_AND_CARDS": {"cards": "QS TC"},  # Turbo Hearts (RULES.md §6.4)
    "CONFLICTING_COMMANDS": {"commands": ["resign", "play"], "cards": ["QS"]},
    "NO_PLAYERS": {},
    "BAD_RULES": {"problem": "SUN_NEEDS_MOON"},
    "WRONG_PLAYER_COUNT": {"players": 4, "people": 2, "bots": 1},
    "INVITATION_UNCLEAR": {"game": 42},
    "PAUSED_NO_DEADLINES": {},
    "BAD_OPTION": {"option": "bots", "value": "three"},
    "PROCESSING_FAILED": {},
    "NOT_AN_ADDRESS": {"address": "ana@exämple"},
    "NO_COMMAND": {},
    "TWO_CARDS": {"cards": ["QS", "TH"]},
    "UNKNOWN_WORD": {"word": "xyzzy", "example": "KS"},
    "DID_YOU_MEAN": {"word": "jak of hearts", "suggestion": "JH", "example": "TH"},
    "QUEUE_EMPTY": {},
    "QUEUE_NOT_HELD": {"cards": ["QS", "AH"]},
    "NOTIFY_CHOICE": {},
    "AUTOPILOT_NOT_NOW": {},
    # time in long games (README, "Time")
    "NOT_THE_CREATOR": {},
    "GAME_NOT_PAUSED": {"status": "active"},
    "NOT_WAITING": {"name": "Dana"},
    "BAD_EXTEND": {"text": "a while"},
    "BAD_REPLACE": {"text": "Dana"},
    "ALREADY_PLAYING": {"address": "dana@example.ro"},
    "VACATION_DATE": {"text": "someday"},
    "VACATION_ALLOWANCE": {"allowance": 30, "left": 4, "asked": 14},
    "NOT_ON_VACATION": {},
    "SUBSTITUTE_CLOSED": {},
    "BAD_TIMEZONE": {"text": "Mars/Olympus"},
}


@functools.lru_cache(maxsize=8)
def _sample_chart(series: tuple[tuple[int, ...], ...], language: str) -> InlineImage:
    """The sample game's chart (drawn once per language: tests ask for the samples again and again)."""
    drawn = score_chart(series, NAMES, target=100, labels=chart_labels(language))
    return InlineImage("scores.42.sample@hearts.example.org", drawn.png, "scores.png", width=drawn.width,
                       height=drawn.height)


def sample_game(**changes: object) -> GameContext:
    """Seat 1 (João) to play to trick 6 of hand 3; QS and 8S already on the table."""
    base = dict(
        game_id=42,
        title="Friday table",
        seat=1,
        names=NAMES,
        hand_number=3,
        pass_direction="across",
        phase="play",
        hand=("AS", "KS", "4S", "JH", "TH", "2H", "9C", "3C", "AD"),
        totals=(4, 39, 35, 26),
        hand_points=(0, 2, 1, 0),
        reply_address="hearts+42.1.17.abcdefghijklmnop@hearts.example.org",
        game_url="https://hearts.example.org/game/WzQyLDFd.KcM7k73yjIV7O-Q-gJ5o9IGaJRU",  # as links.game_link signs it
        pass_count=3,
        trick=(Play(3, "8S"), Play(0, "QS")),
        trick_number=6,
        last_trick=FinishedTrick(5, (Play(2, "5D"), Play(3, "KD"), Play(0, "9D"), Play(1, "AD")), 1, 0),
        to_move=1,
        legal=("AS", "KS", "4S"),
        hearts_broken=True,
        passed=("QH", "KH", "AH"),
        received=("2H", "9C", "4S"),
        history=HISTORY,
        target=100,
        preset="omnibus",
        table_talk=(TalkLine(2, "Bună! Încă o mână?"), TalkLine(0, "Olá, ça va <b>?</b>")),
        deadline=datetime(2024, 5, 17, 18, 30, tzinfo=timezone.utc),
    )
    base.update(changes)
    return GameContext(**base)  # type: ignore[arg-type]


def _computer(name: str, strength: str, language: str) -> str:
    """A computer player's name as mails show it (``pbem.services.bot_names``), in ``language``."""
    return load_translations(language).gettext(f"%(name)s (computer, {strength})") % {"name": name}


def sample_contexts(language: str = "en") -> dict[str, list[MailContext]]:
    """At least one realistic context per kind of mail, in ``language``."""
    me = Recipient(name=NAMES[1], address="joao@example.pt", language=language,
                   timezone="Europe/Lisbon")
    game = sample_game()
    passing = sample_game(
        phase="pass", trick=(), last_trick=None, to_move=None, legal=(), waiting_for=(0, 1, 3),
        hand=("AS", "QS", "4S", "AH", "KH", "QH", "TH", "2H", "9C", "3C", "AD", "7D", "2D"),
        hand_points=(0, 0, 0, 0), pass_direction="left", hand_number=4, passed=(), received=(),
    )
    moon = sample_game(phase="moon", trick=(), to_move=None, legal=(), waiting_for=(1,), hand=())
    waiting = sample_game(to_move=2, legal=(), trick=(Play(3, "8S"), Play(0, "QS"), Play(1, "AS")),
                          hand=("KS", "4S", "JH", "TH", "2H", "9C", "3C", "AD"))
    over = sample_game(phase="over", to_move=None, legal=(), trick=(), hand=(),
                       totals=(30, 101, 77, 44),
                       history=HISTORY + (HandResult(3, (26, 62, 42, 18), (30, 101, 77, 44)),))

    def ctx(detail: object, g: GameContext | None = game) -> MailContext:
        return MailContext(recipient=me, detail=detail, game=g)  # type: ignore[arg-type]

    variants = _variant_samples(ctx, game, passing, waiting, over, language)
    samples = {
        **_time_samples(ctx, me, game, passing, waiting),
        "your_turn": [
            ctx(YourTurn("play")),
            ctx(YourTurn("pass"), passing),
            ctx(YourTurn("moon", moon_total=26), moon),
            ctx(YourTurn("play", autoplayed=("3C",))),
            ctx(YourTurn("play", played_ahead=("9C", "2H")), sample_game(queued=("TH", "AS"))),
            # The first mail of the game: it begins, the seats, the rules, then the decision.
            ctx(YourTurn("pass", started=True, rules=RULES), replace(passing, hand_number=1, history=(),
                                                                    totals=(0, 0, 0, 0), table_talk=())),
            # Two single legal cards played for the player, the first on trick 1: the exchange and
            # both tricks are shown.
            ctx(YourTurn("play", autoplayed=("7C", "6D"), exchange=True, tricks=FIRST_TRICKS),
                sample_game(hand_number=5, trick_number=3, last_trick=FIRST_TRICKS[-1], trick=(Play(0, "4D"),),
                            hand=("AS", "KS", "4S", "JH", "TH", "2H", "9C", "3C", "AD", "TD", "8D"),
                            legal=("TD", "8D", "AD"), hand_points=(0, 0, 0, 0))),
        ],
        "pass_done": [
            ctx(PassDone(), replace(passing, waiting_for=(0, 3), passed=("AS", "QS", "AH"),
                                    hand=tuple(c for c in passing.hand if c not in ("AS", "QS", "AH")))),
            ctx(PassDone(), replace(passing, waiting_for=(2,), passed=("AS", "QS", "AH"), pass_direction="scatter",
                                    hand=tuple(c for c in passing.hand if c not in ("AS", "QS", "AH")))),
        ],
        "trick_done": [
            ctx(TrickDone(), waiting),
            ctx(TrickDone(tricks=FIRST_TRICKS, exchange=True),
                sample_game(hand_number=5, trick_number=3, last_trick=FIRST_TRICKS[-1], trick=(), to_move=0, legal=(),
                            hand=("AS", "KS", "4S", "JH", "TH", "2H", "9C", "3C", "AD", "TD", "8D"),
                            hand_points=(0, 0, 0, 0))),
            MailContext(recipient=me, detail=TrickDone(), game=sample_game(to_move=2, legal=(), autopilot=True,
                                                                            queued=("KS",)),
                        unsubscribe=Unsubscribe("https://hearts.example.org/unsubscribe/abc",
                                                "mailto:hearts+42.1.17.abc@hearts.example.org?subject=unsubscribe")),
        ],
        "card_played": [ctx(CardPlayed(seat=1, card="AS"), waiting),
                        ctx(CardPlayed(seat=0, card="2C", exchange=True),
                            sample_game(hand_number=5, trick_number=1, last_trick=None, trick=(Play(0, "2C"),),
                                        to_move=2, legal=(), hand_points=(0, 0, 0, 0)))],
        "hand_summary": [
            ctx(HandSummary(HISTORY[0], last_trick=FinishedTrick(13, (Play(0, "2H"), Play(1, "KH"), Play(2, "3H"),
                                                                     Play(3, "QS")), 1, 15),
                            taken=(Taken(0, hearts=4), Taken(1, cards=("QS",)), Taken(2, hearts=9), Taken(3))),
                waiting),
            # The end of the hand played out for the players: each of its tricks, one line each.
            ctx(HandSummary(HISTORY[1], played_out=True, tricks=PLAYED_OUT_TRICKS,
                            taken=(Taken(0, 13, ("QS",)), Taken(1), Taken(2), Taken(3, cards=("JD",)))), waiting),
            ctx(HandSummary(HandResult(3, (-26, 0, 0, 0), (-22, 39, 35, 26),
                                       Moon(shooter=0, scoring="new"))), waiting),
            # A moon choice not made by the deadline: safety decided.
            ctx(HandSummary(HandResult(3, (0, 26, 26, 26), (4, 65, 61, 52), Moon(shooter=1)),
                            moon_by_deadline=True), waiting),
            ctx(HandSummary(HandResult(2, (52, 0, 52, 52), (56, 13, 61, 52), Moon(shooter=1, kind="sun", total=52)),
                            taken=(Taken(0), Taken(1, 13, ("QS", "JD")), Taken(2), Taken(3))), waiting),
        ],
        "game_summary": [
            ctx(GameSummary(winners=(0,), totals=over.totals), over),
            ctx(GameSummary(winners=(1, 3), totals=(31, 30, 101, 30)), over),
            ctx(GameSummary(
                winners=(0,), totals=over.totals,
                chart=_sample_chart(tuple(tuple(r.totals[k] for r in over.history) for k in range(4)), language),
                colours=tuple(hex_colour(c) for c in PALETTE[:4]),
                stats=GameStats(moons=(1, 0, 0, 0), queen=(0, 2, 1, 0), hearts=(4, 21, 14, 0)),
                replay_url="https://hearts.example.org/game/WzQyLDBd.ZB4Ylq8PDKu9DQzGmNCkA2pWm3E/replay",
            ), over),
        ],
        "move_rejected": [
            ctx(MoveRejected(code, details, attempted=str(details.get("card", ""))))
            for code, details in MOVE_REJECTIONS.items()
        ]
        + [
            # A pass of cards not held names every one of them; a refused reply's talk is kept back.
            ctx(MoveRejected("CARD_NOT_IN_HAND", {"card": "KD", "cards": ["KD", "5H"]}, attempted="KD 5H QS"),
                passing),
            ctx(MoveRejected("HEARTS_NOT_BROKEN", {"card": "TH", "legal": ["9C", "KD", "4S"]}, attempted="TH",
                             withheld_talk=("Nice one, Ștefan!", "Dana, you are next"))),
        ],
        "request_rejected": [
            ctx(RequestRejected(code, details), waiting) for code, details in REQUEST_REJECTIONS.items()
        ]
        + [ctx(RequestRejected("NOT_A_PLAYER"), None)]
        + [
            # Refused new-game mails, to an address that may never have played: what to write.
            ctx(RequestRejected(code, details, new_game_address="new@hearts.example.org"), None)
            for code, details in (
                ("NO_PLAYERS", {}),
                ("BAD_RULES", {"problem": "UNKNOWN_PRESET", "preset": "omnibsu", "suggestion": "omnibus",
                               "presets": ["black-maria", "classic", "omnibus", "standard"]}),
                ("BAD_RULES", {"problem": "UNKNOWN_OPTION", "options": ["taget"], "suggestions": {"taget": "target"}}),
                ("BAD_RULES", {"problem": "BAD_CHOICE", "option": "moon", "value": "maybe",
                               "choices": ["old", "new", "choice"]}),
                ("BAD_RULES", {"problem": "NOT_AN_INT", "option": "target", "value": "fifty"}),
                ("BAD_RULES", {"problem": "NOT_A_BOOL", "option": "sun", "value": "perhaps"}),
                ("BAD_OPTION", {"option": "bots", "value": "three"}),
                # rules that cannot work together, and options that cannot be read (README, "Starting a game")
                ("BAD_RULES", {"problem": "DECK_DOES_NOT_DIVIDE", "cards": 52, "players": 5}),
                ("BAD_RULES", {"problem": "PARTNERSHIP_NEEDS_FOUR_PLAYERS", "players": 5}),
                ("BAD_RULES", {"problem": "KITTY_NEEDS_PLAYERS", "kitty": "first_trick", "players": 4,
                               "allowed": [3, 5]}),
                ("BAD_RULES", {"problem": "NOT_A_MAP", "option": "extra_penalties", "value": "KS ten"}),
                ("BAD_RULES", {"problem": "BAD_BOT_STRENGTH", "value": "brutal",
                               "strengths": ["random", "heuristic", "strong"]}),
                ("BAD_RULES", {"problem": "CHARGE_LIMIT_NEEDS_TURBO", "value": 1}),
                # a new game asked for at another address of the domain: where to send it
                ("NEW_GAME_ELSEWHERE", {"address": "new@hearts.example.org"}),
            )
        ]
        + [ctx(RequestRejected("STALE_TURN", {"decision": 16, "current": 17}, withheld_talk=("gg",)), waiting)],
        "resign_asked": [ctx(ResignAsked()), ctx(ResignAsked(), waiting)],
        "help": [ctx(Help(new_game_address="new@hearts.example.org")),
                 ctx(Help(new_game_address="new@hearts.example.org"), None)],
        "status": [ctx(Status()), ctx(Status(), passing)],
        "games": [
            ctx(Games((
                GameListing(42, "Friday table", "active", my_turn=True, hand_number=3, my_total=39,
                            game_url=game.game_url),
                GameListing(43, "Ștefan's game", "active", hand_number=1, my_total=0,
                            waiting_for=("Dana", "Zoë Ávila")),
                GameListing(44, "New one", "inviting"),
                GameListing(40, "Old one", "finished"),
            )), None),
            ctx(Games(()), None),
        ],
        "rules": [ctx(Rules(RULES)), ctx(Rules({"preset": "spot", "heart_values": "spot",
                                                "qs_penalty": 25, "target": 500,
                                                "extra_penalties": {"KS": 10, "AS": 7},
                                                "sun": True, "moon": "safety",
                                                "exact_target_reset": 50, "tie": "share",
                                                "removed_cards": ["2D"], "players": 3,
                                                "pass_cycle": ["left", "right", "hold"],
                                                "avoid_all_tricks_bonus": -5,
                                                "qs_breaks_hearts": True,
                                                "qs_lead_needs_broken_hearts": True,
                                                "can_lead_hearts_instead_of_qs": True,
                                                "qs_must_drop_when_safe": True,
                                                "first_lead": "left_of_dealer"}))],
        "invitation": [
            MailContext(
                recipient=Recipient(name="", address="dana@example.ro", language=language),
                detail=Invitation(
                    game_id=42, inviter_name=NAMES[0], inviter_address="zoe@example.com",
                    players=(NAMES[1], NAMES[2]),
                    reply_address="invite+7.abcdefghijklmnop@hearts.example.org",
                    rules=RULES, bots=1, title="Friday night Hearts",
                    computers=(_computer("Marta", "strong", language),),
                ),
            ),
            MailContext(
                recipient=Recipient(name="zoe", address="zoe@example.com", language=language),
                detail=Invitation(
                    game_id=42, inviter_name=NAMES[0], inviter_address="zoe@example.com",
                    players=("dana@example.ro",),
                    reply_address="invite+6.abcdefghijklmnop@hearts.example.org",
                    rules=RULES, bots=2, confirm=True,
                ),
            ),
            # "bots: 3": the creator against the computer, nobody else to invite.
            MailContext(
                recipient=Recipient(name="zoe", address="zoe@example.com", language=language),
                detail=Invitation(
                    game_id=43, inviter_name=NAMES[0], inviter_address="zoe@example.com",
                    players=(),
                    reply_address="invite+8.abcdefghijklmnop@hearts.example.org",
                    rules=RULES, bots=3, confirm=True, title="Me against the computer",
                    computers=tuple(_computer(name, strength, language) for name, strength in
                                    (("Kenji", "easy"), ("Amara", "medium"), ("Lars", "strong"))),
                ),
            ),
        ],
        "invitation_accepted": [
            MailContext(recipient=me, detail=InvitationAccepted(42, NAMES[2], True, ("Dana",))),
            MailContext(recipient=me, detail=InvitationAccepted(42, "Dana", False, ())),
        ],
        # Only to a player with nothing to decide yet (here: a first hand without passing).
        "game_started": [ctx(GameStarted(RULES), sample_game(hand_number=1, pass_direction="hold", trick=(),
                                                             last_trick=None, trick_number=1, to_move=0, legal=(),
                                                             history=(), totals=(0, 0, 0, 0),
                                                             hand_points=(0, 0, 0, 0), table_talk=(),
                                                             passed=(), received=()))],
        "bounce_notice": [
            MailContext(recipient=me, detail=BounceNotice(
                42, "Dana", "dana@example.ro", "550 5.1.1 <dana@example.ro>: user unknown")),
        ],
        "welcome": [MailContext(recipient=me, detail=Welcome())],
        "play_ahead": [
            ctx(PlayAhead("queued", dropped=("2C",)), sample_game(queued=("AS", "4S", "TH"), to_move=2, legal=())),
            ctx(PlayAhead("cleared"), waiting),
            ctx(PlayAhead("autopilot_on"), sample_game(autopilot=True, to_move=2, legal=())),
            ctx(PlayAhead("autopilot_on"), replace(passing, autopilot=True)),
            ctx(PlayAhead("autopilot_on"), sample_game(hand_number=4, phase="pass", autopilot=False)),
            ctx(PlayAhead("autopilot_off"), waiting),
        ],
        "language_changed": [ctx(LanguageChanged(language)), ctx(LanguageChanged(None))],
        "forced_cards": [ctx(ForcedCardsChanged(on=False)), ctx(ForcedCardsChanged(on=True))],
        "notify_changed": [
            ctx(NotifyChanged("digest")),
            ctx(NotifyChanged("every_card", everywhere=True)),
            ctx(NotifyChanged("turn_and_trick")),
            ctx(NotifyChanged("turn_only", via="web")),
            ctx(NotifyChanged("turn_only", everywhere=True, via="web"), None),
        ],
        "history": [
            ctx(MoveHistory((
                HistoryHand(1, "left", passed=("QS", "AH", "KH"), tricks=(
                    FinishedTrick(1, (Play(0, "2C"), Play(1, "9C"), Play(2, "KC"), Play(3, "3C")), 2, 0),
                    FinishedTrick(2, (Play(2, "5D"), Play(3, "KD"), Play(0, "9D"), Play(1, "AD")), 1, 0),
                ), result=HISTORY[0]),
                HistoryHand(2, "right", passed=("2D", "3D", "4D"), result=HISTORY[1]),
                HistoryHand(3, "across", passed=("QH", "KH", "AH"),
                            tricks=(FinishedTrick(1, (Play(0, "2C"), Play(1, "9C"), Play(2, "KC"), Play(3, "3C")),
                                                  2, 0),),
                            on_table=(Play(3, "8S"), Play(0, "QS"))),
            ))),
            ctx(MoveHistory(()), passing),
        ],
        "digest": [
            MailContext(recipient=me, detail=Digest(
                since=datetime(2024, 5, 16, 18, 0, tzinfo=timezone.utc),
                games=(
                    DigestGame(42, "Friday table", NAMES, 1, 3, (4, 39, 35, 26), cards_played=17,
                               hands=HISTORY[1:], waiting_for=(1,), game_url=game.game_url,
                               table_talk=(TalkLine(2, "Bună!"),)),
                    DigestGame(43, "", NAMES, 1, 1, (0, 2, 0, 0), cards_played=1, waiting_for=(3,)),
                    DigestGame(44, "Old one", NAMES, 1, 9, (101, 30, 77, 44), over=True, winners=(1,),
                               hands=(HandResult(9, (26, 0, 0, 0), (101, 30, 77, 44)),)),
                ),
            )),
        ],
    }
    for kind, extra in (*variants.items(), *_passing_samples(ctx, game, passing).items(),
                        *_turbo_samples(ctx, game, over).items(), *_cancellation_samples(ctx).items()):
        samples[kind] = samples.get(kind, []) + extra
    return samples


#: dealer_calls_pass with 4 players and 3 cards (RULES.md §6.3): the legal calls.
CALL_CHOICES = (
    (("left", 3),), (("left", 2), ("right", 1)), (("left", 2), ("across", 1)), (("left", 1), ("right", 2)),
    (("left", 1), ("right", 1), ("across", 1)), (("left", 1), ("across", 2)), (("right", 3),),
    (("right", 2), ("across", 1)), (("right", 1), ("across", 2)), (("across", 3),), (("mix", 3),),
)


def _passing_samples(ctx, game: GameContext, passing: GameContext) -> dict[str, list[MailContext]]:
    """The mails of the passing variants (RULES.md §6.3): the dealer's call decision, a split call's
    and a mix hand's pass, the pass with ``no pass`` allowed, a decliner's notes, the deadline
    defaults (the cycle's call, declining)."""
    deadline = datetime(2024, 5, 17, 18, 30, tzinfo=timezone.utc)
    calling = replace(game, phase="call", trick=(), to_move=None, legal=(), waiting_for=(1,), hand=(),
                      last_trick=None, caller=1, call_choices=CALL_CHOICES, hand_points=(0, 0, 0, 0))
    split = replace(passing, pass_direction="split", pass_call=(("left", 2), ("right", 1)), caller=3)
    mix = replace(passing, pass_direction="mix", pass_call=(("mix", 3),), caller=1)
    optional = replace(passing, may_decline=True)
    declined = replace(game, declined=True, passed=(), received=(), trick_number=1, trick=())
    return {
        "your_turn": [
            ctx(YourTurn("call"), calling),
            ctx(YourTurn("pass"), split),
            ctx(YourTurn("pass"), mix),
            ctx(YourTurn("pass"), optional),
            ctx(YourTurn("pass"), replace(split, may_decline=True)),
            ctx(YourTurn("play", exchange=True), declined),
            ctx(YourTurn("play", exchange=True), replace(game, pass_direction="split", caller=3, trick_number=1,
                                                         pass_call=(("left", 2), ("right", 1)), trick=(),
                                                         passed=("AS", "QS", "AH"), received=("2C", "3D", "4H"))),
            ctx(YourTurn("play"), replace(game, pass_direction="hold", pass_call=(("hold", 0),), caller=2,
                                          trick_number=1, trick=(), passed=())),
        ],
        "pass_done": [ctx(PassDone(), replace(optional, declined=True, waiting_for=(0, 3), passed=()))],
        "move_rejected": [
            ctx(MoveRejected("BAD_CALL", {"call": [["left", 4]], "choices": [list(map(list, c)) for c in CALL_CHOICES]}),
                calling),
            ctx(MoveRejected("UNKNOWN_WORD", {"word": "everything left"}), calling),
            ctx(MoveRejected("NO_DECLINE_ON_MIX", {}), mix),
        ],
        "reminder": [
            ctx(Reminder("deadline", deadline, deadline, deadline, "bot", default="call"), calling),
            ctx(Reminder("deadline", deadline, deadline, deadline, "bot", default="decline"), optional),
        ],
        "decision_defaulted": [
            ctx(DecisionDefaulted("call", deadline, call=(("left", 3),)), calling),
            ctx(DecisionDefaulted("call", deadline, call=(("hold", 0),)), calling),
            ctx(DecisionDefaulted("decline", deadline), replace(optional, may_decline=False, declined=True)),
        ],
    }


TURBO_RULES = {**RULES, "preset": "turbo-nines", "turbo": True, "charge_limit": 4, "booster_nines": True,
               "moon": "old"}
DNF_RULES = {**RULES, "preset": "dnf", "qs_penalty": 26, "extra_penalties": {"QC": 13, "QD": 13, "QH": 13},
             "target": 300, "dealer_calls_pass": True, "moon": "win"}
#: The chargeable cards of the turbo sample and their values before a charge.
CHARGE_VALUES = (("AH", 1), ("QS", 13), ("JD", -10), ("TC", 0))


def _turbo_samples(ctx, game: GameContext, over: GameContext) -> dict[str, list[MailContext]]:
    """The mails of Turbo Hearts (RULES.md §6.4), Booster Nines (§6.5) and moon=win (§6.7): the charge
    decision (its choices, what a charge does), the charge noted, the charges told to the table, a
    charged card held back, a boosted trick's two rounds and its boost round, the 10♣ multiplier in
    the summary, a game won at once by the moon."""
    deadline = datetime(2024, 5, 17, 18, 30, tzinfo=timezone.utc)
    turbo = dict(turbo=True, charge_limit=4, charge_values=CHARGE_VALUES, booster_nines=True)
    charges = (("QS",), ("TC",), (), ("AH",))
    charging = replace(game, **turbo, phase="charge", trick=(), last_trick=None, trick_number=1, to_move=None,
                       legal=(), waiting_for=(1,), hand_points=(0, 0, 0, 0), history=HISTORY, hand_number=3,
                       hand=("AS", "QS", "4S", "AH", "TH", "2H", "TC", "9C", "3C", "AD", "JD", "7D", "2D"),
                       charge_choices=("AH", "QS", "JD", "TC"), passed=("KH", "QH", "KS"),
                       received=("TC", "9C", "2D"))
    decided = replace(charging, waiting_for=(), charge_choices=(), own_charge=("QS", "TC"))
    revealed = replace(charging, phase="play", waiting_for=(2,), to_move=2, trick=(Play(0, "2C"), Play(1, "9C")),
                       own_charge=("TC",), charges=(("QS",), ("TC",), (), ("AH",)), charge_choices=(),
                       hand=("AS", "QS", "4S", "AH", "TH", "2H", "TC", "3C", "AD", "JD", "7D", "2D"))
    # João's charged 10♣ waits for the first club trick: clubs are led now, and he has other clubs.
    held = replace(game, **turbo, charges=charges, own_charge=("TC",), suits_led="DS", trick=(Play(0, "KC"),),
                   trick_number=4, to_move=1, hand=("AS", "4S", "JH", "TH", "TC", "9C", "3C", "AD"),
                   legal=("3C", "9C"))
    # Booster Nines: Dana led 9♣, so the trick has a boost round; João plays in it.
    boosted = replace(game, **turbo, charges=charges, trick_boosted=True, boost_round=True, trick_number=6,
                      trick=(Play(3, "9C"), Play(0, "KC"), Play(1, "3C"), Play(2, "5C"), Play(3, "4C"),
                             Play(0, "2C")), to_move=1, legal=("9C",),
                      hand=("AS", "KS", "4S", "JH", "TH", "2H", "9C", "AD"))
    boost_trick = FinishedTrick(5, (Play(2, "9D"), Play(3, "KD"), Play(0, "2D"), Play(1, "AD"), Play(2, "5D"),
                                    Play(3, "QS"), Play(0, "3D"), Play(1, "7D")), 1, 26, boosted=True)
    after_boost = replace(game, **turbo, charges=charges, last_trick=boost_trick, trick=(), to_move=1, legal=(),
                          trick_number=6, hand_points=(0, 26, 0, 0))
    charged_hand = HandResult(3, (26, 0, 16, -20), (30, 39, 51, 6))
    won = replace(over, totals=(30, 39, 35, 26), history=HISTORY + (
        HandResult(3, (0, 0, 0, 0), (30, 39, 35, 26), Moon(shooter=3, scoring="win", total=77)),))
    return {
        "your_turn": [
            ctx(YourTurn("charge", exchange=True), charging),
            ctx(YourTurn("play"), held),
            ctx(YourTurn("play"), boosted),
        ],
        "charge_done": [ctx(ChargeDone(), decided),
                        # The last pass, and nothing chargeable held: nothing to decide.
                        ctx(ChargeDone(exchange=True), replace(decided, own_charge=(), received=("9C", "6C", "2D"), hand=(
                            "AS", "4S", "TH", "2H", "9C", "3C", "AD", "7D", "2D", "KS", "KH", "QH", "6C")))],
        "charges_revealed": [ctx(ChargesRevealed(exchange=True), revealed)],
        "trick_done": [ctx(TrickDone(tricks=(boost_trick,)), after_boost)] + [
            # The trick that takes the 10♣ says what it does to its taker's score: charged (seat 1's), or not.
            ctx(TrickDone(tricks=(ten_trick,)), replace(after_boost, charges=hand_charges, last_trick=ten_trick,
                                                        trick_number=7))
            for ten_trick, hand_charges in (
                (FinishedTrick(6, (Play(0, "KC"), Play(1, "TC"), Play(2, "3C"), Play(3, "2C")), 0, 0,
                               ten_of_clubs=4), charges),
                (FinishedTrick(6, (Play(0, "KC"), Play(1, "TC"), Play(2, "3C"), Play(3, "2C")), 0, 0,
                               ten_of_clubs=2), (("QS",), (), (), ("AH",))))
        ],
        "card_played": [ctx(CardPlayed(seat=3, card="9C"),
                            replace(boosted, boost_round=False, trick=boosted.trick[:1], to_move=0, legal=()))],
        "hand_summary": [
            ctx(HandSummary(charged_hand, last_trick=boost_trick, charges=(("QS",), (), (), ("AH",)),
                            multiplier=(1, 1, 1, 2),
                            taken=(Taken(0, cards=("QS",)), Taken(1), Taken(2, hearts=8), Taken(3, cards=("JD", "TC"))),
                            lowest_wins=True), after_boost),
            ctx(HandSummary(HandResult(3, (0, 0, 0, 0), (4, 39, 35, 26), Moon(shooter=3, scoring="win", total=77)),
                            taken=(Taken(0), Taken(1), Taken(2), Taken(3, 13, ("QS", "QC", "QD")))), won),
        ],
        "game_summary": [ctx(GameSummary(winners=(3,), totals=won.totals,
                                         moon_win=Moon(shooter=3, scoring="win", total=77)), won)],
        "decision_defaulted": [ctx(DecisionDefaulted("charge", deadline), decided)],
        "reminder": [ctx(Reminder("deadline", deadline, deadline, deadline, "bot", default="charge"), charging)],
        "rules": [ctx(Rules(TURBO_RULES)), ctx(Rules(DNF_RULES))],
        "history": [ctx(MoveHistory((HistoryHand(3, "across", passed=("QH", "KH", "AH"), tricks=(boost_trick,),
                                                 charges=charges),)),
                        after_boost)],
        "digest": [
            MailContext(recipient=ctx(Help()).recipient, detail=Digest(
                since=datetime(2024, 5, 16, 18, 0, tzinfo=timezone.utc),
                games=(DigestGame(46, "Turbo", NAMES, 1, 4, (30, 39, 35, 26), cards_played=4, charging=True,
                                  waiting_for=()),
                       DigestGame(47, "Filthy", NAMES, 1, 3, (30, 39, 35, 26), over=True, winners=(3,),
                                  hands=won.history[-1:])),
            )),
        ],
    }


#: RULES.md §6.1: partners sit opposite (João, seat 1, plays with Dana, seat 3).
TEAMS = ((0, 2), (1, 3))
PARTNERSHIP_RULES = {**RULES, "preset": "partnership", "partnership": "team", "pass_to_partner": True,
                     "moon": "choice"}
KITTY_RULES = {**RULES, "preset": "kitty", "kitty": "penalty", "kitty_exchange": True, "moon": "old"}


def _variant_samples(ctx, game: GameContext, passing: GameContext, waiting: GameContext, over: GameContext,
                     language: str) -> dict[str, list[MailContext]]:
    """The mails of the §6 variants: a partnership (team totals, the partner, a team's slam, the
    pass to the partner, the winning team) and a kitty (who took it, its cards to its taker only,
    the discard decision, the kitty shown once the hand is over)."""
    team = dict(partnership="team", teams=TEAMS, partner=3, team_totals=(30, 65), team_points=(1, 2))
    individual = dict(partnership="individual", teams=TEAMS, partner=3, team_totals=(39, 65),
                      team_points=(1, 2))
    kitty = dict(kitty_form="penalty", kitty_size=4, kitty_exchange=True, discard_count=4)
    team_game = replace(game, **team, totals=(30, 65, 30, 65))  # type: ignore[arg-type]
    team_passing = replace(passing, **team)  # type: ignore[arg-type]
    team_history = (
        HandResult(1, (4, 22, 4, 22), (4, 22, 4, 22), team_points=(4, 22), team_totals=(4, 22)),
        HandResult(2, (26, 0, 26, 0), (30, 22, 30, 22), Moon(shooter=3, team=True), team_points=(26, 0),
                   team_totals=(30, 22)),
    )
    kitty_hand = ("AS", "KS", "4S", "JH", "TH", "2H", "9C", "3C", "AD", "7C", "8D", "QH", "2S")
    discarding = replace(game, **kitty, phase="discard", trick=(), to_move=None, waiting_for=(1,),
                         hand=kitty_hand, legal=(), kitty_taker=1, kitty_trick=5,
                         kitty=("7C", "8D", "QH", "2S"),
                         last_trick=FinishedTrick(5, (Play(2, "5D"), Play(3, "KH"), Play(0, "9D"), Play(1, "AD")),
                                                  1, 1))
    return {
        "your_turn": [
            # The first mail of a partnership game: the partner named, the mode in the rules; the
            # pass goes to the partner (pass_to_partner).
            ctx(YourTurn("pass", started=True, rules=PARTNERSHIP_RULES),
                replace(team_passing, hand_number=1, history=(), totals=(0, 0, 0, 0), team_totals=(0, 0),
                        team_points=(0, 0), table_talk=(), pass_direction="across")),
            ctx(YourTurn("play"), team_game),
            # A team's slam, asked of the partner who won the team's latest trick.
            ctx(YourTurn("moon", moon_total=26), replace(team_game, phase="moon", trick=(), to_move=None, legal=(),
                                                          waiting_for=(1,), hand=())),
            # kitty_exchange: the taker's discard decision (their hand with the kitty).
            ctx(YourTurn("discard"), discarding),
            ctx(YourTurn("pass", started=True, rules=KITTY_RULES),
                replace(passing, **kitty, hand_number=1, history=(), totals=(0, 0, 0, 0), table_talk=(),
                        hand=passing.hand[:12])),
            # The kitty in play: taken by another seat (who and when only), by the reader (its cards).
            ctx(YourTurn("play"), replace(game, **kitty, kitty_taker=2, kitty_trick=3)),
            ctx(YourTurn("play"), replace(game, **kitty, kitty_taker=1, kitty_trick=3, kitty=("7C", "8D", "QH", "2S"),
                                          discarded=("2C", "3D", "4D", "5D"))),
        ],
        "trick_done": [
            ctx(TrickDone(), replace(waiting, **team, totals=(30, 65, 30, 65))),  # type: ignore[arg-type]
            ctx(TrickDone(), replace(waiting, **individual)),  # type: ignore[arg-type]
            ctx(TrickDone(), replace(waiting, kitty_form="penalty", kitty_size=4)),
            ctx(TrickDone(), replace(waiting, kitty_form="penalty", kitty_size=4, kitty_taker=1, kitty_trick=5,
                                     kitty=("7C", "8D", "QH", "2S"))),
        ],
        "card_played": [ctx(CardPlayed(seat=1, card="AS"), replace(waiting, **kitty, kitty_taker=0, kitty_trick=2))],
        "status": [ctx(Status(), replace(game, **kitty, **team, kitty_taker=0, kitty_trick=2)),
                   ctx(Status(), discarding)],
        "pass_done": [ctx(PassDone(), replace(team_passing, waiting_for=(0, 3), passed=("AS", "QS", "AH"),
                                              pass_direction="across",
                                              hand=tuple(c for c in passing.hand if c not in ("AS", "QS", "AH"))))],
        "move_rejected": [
            ctx(MoveRejected("WRONG_DISCARD_COUNT", {"expected": 4, "given": 3}, attempted="7C 8D QH"), discarding),
            ctx(MoveRejected("CARD_NOT_IN_HAND", {"card": "KD", "cards": ["KD"]}, attempted="7C 8D QH KD"),
                discarding),
        ],
        "hand_summary": [
            ctx(HandSummary(team_history[1], taken=(Taken(0, 7, ("QS",)), Taken(1), Taken(2, 6), Taken(3))),
                replace(team_game, history=team_history, totals=(30, 22, 30, 22), team_totals=(30, 22))),
            ctx(HandSummary(HandResult(2, (0, 26, 0, 26), (4, 48, 4, 48), Moon(shooter=1, team=True, scoring="old"),
                                       team_points=(0, 26), team_totals=(4, 48)), moon_by_deadline=True),
                replace(team_game, totals=(4, 48, 4, 48), team_totals=(4, 48))),
            ctx(HandSummary(HandResult(2, (-26, 0, -26, 0), (-22, 22, -22, 22),
                                       Moon(shooter=0, team=True, scoring="new"), team_points=(-26, 0),
                                       team_totals=(-22, 22))),
                replace(team_game, totals=(-22, 22, -22, 22), team_totals=(-22, 22))),
            ctx(HandSummary(HandResult(2, (3, 0, 20, 3), (7, 13, 29, 3), team_points=(23, 3), team_totals=(36, 16)),
                            kitty=("7C", "8D", "QH", "2S"), kitty_taker=2, kitty_trick=4,
                            discarded=("QS", "2H", "3H", "4H")),
                replace(waiting, **{**individual, "team_totals": (36, 16)})),
            ctx(HandSummary(HandResult(2, (3, 14, 6, 3), (7, 27, 15, 3)), kitty=("7C", "8D", "QH", "2S"),
                            kitty_taker=1, kitty_trick=1), waiting),
        ],
        "game_summary": [
            ctx(GameSummary(winners=(0, 2), totals=(30, 101, 30, 101), teams=TEAMS, team_totals=(30, 101),
                            winning_teams=(0,)), replace(over, **team, totals=(30, 101, 30, 101))),
            ctx(GameSummary(winners=(1, 3), totals=(101, 44, 60, 30), teams=TEAMS, team_totals=(161, 74),
                            winning_teams=(1,)), replace(over, **individual, totals=(101, 44, 60, 30))),
            ctx(GameSummary(winners=(0, 1, 2, 3), totals=(50, 50, 50, 50), teams=TEAMS, team_totals=(50, 50),
                            winning_teams=(0, 1)), replace(over, **team, totals=(50, 50, 50, 50))),
        ],
        "digest": [
            MailContext(recipient=ctx(Help()).recipient, detail=Digest(
                since=datetime(2024, 5, 16, 18, 0, tzinfo=timezone.utc),
                games=(DigestGame(45, "Partners", NAMES, 1, 2, (30, 65, 30, 65), cards_played=8,
                                  hands=team_history[1:], waiting_for=(0,), teams=TEAMS, team_totals=(30, 65)),),
            )),
        ],
        "rules": [ctx(Rules({**PARTNERSHIP_RULES, "partnership": "individual", "partner_moon": "charged"})),
                  ctx(Rules(KITTY_RULES)), ctx(Rules({**RULES, "players": 5, "kitty": "first_trick"})),
                  ctx(Rules({**RULES, "players": 3, "kitty": "first_penalty", "partner_moon": "spared"}))],
    }


def _time_samples(ctx, me: Recipient, game: GameContext, passing: GameContext,
                  waiting: GameContext) -> dict[str, list[MailContext]]:
    """The mails about time in long games (README, "Time"): reminders, stand-ins, pauses, vacations, substitutes."""
    since = datetime(2024, 5, 14, 18, 30, tzinfo=timezone.utc)
    deadline = datetime(2024, 5, 17, 18, 30, tzinfo=timezone.utc)
    grace = datetime(2024, 5, 18, 6, 30, tzinfo=timezone.utc)
    back = datetime(2024, 6, 2, 23, 0, tzinfo=timezone.utc)
    since_game = sample_game(waiting_since=since)
    return {
        "reminder": [
            ctx(Reminder("before", since, deadline, grace), since_game),
            ctx(Reminder("deadline", since, deadline, grace, "pause"), replace(passing, deadline=deadline)),
            ctx(Reminder("deadline", since, deadline, grace, "substitute")),
            ctx(Reminder("deadline", since, deadline, grace, "bot")),
            # Decisions with a default of their own in the rules: said instead of the policy.
            ctx(Reminder("deadline", since, deadline, grace, "bot", default="moon"),
                sample_game(phase="moon", trick=(), to_move=None, legal=(), waiting_for=(1,), hand=())),
            ctx(Reminder("deadline", since, deadline, grace, "pause", default="discard")),
        ],
        "decision_defaulted": [
            ctx(DecisionDefaulted("moon", deadline, scoring="old", moon_total=26), waiting),
            ctx(DecisionDefaulted("moon", deadline, scoring="new", moon_total=26), waiting),
            ctx(DecisionDefaulted("moon", deadline, scoring="old", moon_total=26, team=True), waiting),
            ctx(DecisionDefaulted("moon", deadline, scoring="new", moon_total=52, kind="sun", team=True), waiting),
            ctx(DecisionDefaulted("discard", deadline, cards=("QH", "7C", "2D", "KS")), waiting),
            ctx(DecisionDefaulted("discard", None, cards=("9H",)), waiting),
        ],
        "stand_in": [
            ctx(StandIn("deadline", deadline), waiting),
            ctx(StandIn("substitute_wanted", deadline), waiting),
            ctx(StandIn("deadline"), waiting),
        ],
        "seat_back": [ctx(SeatBack()), ctx(SeatBack(), waiting), ctx(SeatBack(), passing)],
        "game_paused": [
            ctx(GamePaused("creator", NAMES[0]), waiting),
            ctx(GamePaused("operator"), waiting),
            ctx(GamePaused("deadline", seat=2), waiting),
            ctx(GamePaused("deadline", seat=1)),
        ],
        "game_resumed": [
            ctx(GameResumed("creator", NAMES[0])),
            ctx(GameResumed("operator"), waiting),
            ctx(GameResumed("return", seat=2), waiting),
            ctx(GameResumed("return", seat=1)),
            ctx(GameResumed("substitute", seat=3), passing),
        ],
        "game_aborted": [ctx(GameAborted("creator", NAMES[0]), waiting), ctx(GameAborted("operator"), waiting)],
        "deadline_extended": [
            ctx(DeadlineExtended((1, 2), 24, "creator", NAMES[0])),
            ctx(DeadlineExtended((2,), 1, "operator"), waiting),
        ],
        "vacation": [
            ctx(VacationNoted(back, 12)),
            ctx(VacationNoted(None, 1, ended=True), None),
            ctx(VacationNoted(back + timedelta(days=10), 20, starts=back), None),  # planned ahead
            ctx(VacationNoted(None, 30, starts=back, cancelled=True), None),
        ],
        "player_away": [
            ctx(PlayerAway(2, back, bot=True), waiting),
            ctx(PlayerAway(2, back), waiting),
            ctx(PlayerAway(0, back=True)),
        ],
        "substitute_wanted": [
            ctx(SubstituteWanted(2), waiting),
            ctx(SubstituteWanted(2, invited="ana@example.org"), waiting),
        ],
        "substitute_invitation": [
            MailContext(
                recipient=Recipient(name="", address="ana@example.org", language=me.language),
                detail=SubstituteInvitation(
                    game_id=42, inviter_name=NAMES[0], inviter_address="zoe@example.com",
                    absent_name=NAMES[2], players=(NAMES[0], NAMES[1], NAMES[3]),
                    reply_address="invite+9.abcdefghijklmnop@hearts.example.org",
                    hand_number=3, points=35, rules=RULES,
                ),
            ),
            MailContext(
                recipient=Recipient(name="Ana", address="ana@example.org", language=me.language),
                detail=SubstituteInvitation(
                    game_id=42, inviter_name="", inviter_address="", absent_name="Dana", players=(),
                    reply_address="invite+10.abcdefghijklmnop@hearts.example.org",
                ),
            ),
        ],
        "time_zone": [ctx(TimeZoneSet("America/Sao_Paulo", deadline)), ctx(TimeZoneSet("UTC", deadline), None)],
        "seat_replaced": [
            ctx(SeatReplaced(1, "Dana", NAMES[1])),
            ctx(SeatReplaced(2, NAMES[2], "Ana"), waiting),
            ctx(SeatReplaced(1, NAMES[1], "Ana", game_id=42), None),
        ],
    }


#: Cancellation Hearts (RULES.md §6.6): ten players, two decks, 10 cards each and a kitty of 4.
NAMES10 = (*NAMES, "Émile Noël", "Fátima Araújo", "Gheorghe Ionescu", "Hélène", "Ioana Pop", "Jürgen")
CANCELLATION_RULES = {"preset": "cancellation", "players": 10, "decks": 2, "pass_count": 3,
                      "pass_cycle": ["left", "right"], "first_lead": "left_of_dealer", "no_pts_on_first_trick": False,
                      "must_break_hearts": True, "heart_values": "one", "qs_penalty": 13, "moon": "old",
                      "target": 100, "lowest_wins": True, "tie": "play_on"}
TWO_DECKS = dict(decks=2, names=NAMES10, kitty_form="first_trick", kitty_size=4)


def _ten(*cards: str, leader: int = 0) -> tuple[Play, ...]:
    return tuple(Play((leader + k) % 10, card) for k, card in enumerate(cards))


def _cancellation_samples(ctx) -> dict[str, list[MailContext]]:
    """The mails of two decks (RULES.md §6.6) at a table of ten: a card held twice (``Q♠ ×2``), the
    pass that may name a card twice, identical cards cancelling, a trick left on the table and its
    carried pile, a trick taken with it, the last trick given to the previous trick's winner, the
    leftover kitty for the first trick's winner, and the summaries of ten players."""
    zeros = (0,) * 10
    totals = (12, 30, 7, 0, 19, 26, 4, 11, 8, 13)
    history = (HandResult(1, totals, totals),)
    # Trick 3: every spade cancelled by its twin (both 5♠, both K♠): it stays on the table.
    stays = FinishedTrick(3, _ten("5S", "KS", "5S", "2D", "KS", "3C", "7H", "4D", "9C", "6D", leader=4), -1, 1,
                          cancelled=True)
    won = FinishedTrick(4, _ten("QD", "2D", "KD", "4D", "QD", "8D", "TD", "3D", "JD", "5D", leader=4), 6, 1,
                        carried=tuple(p.card for p in stays.plays))
    # Trick 4, led again by Émile: both 6♠ cancel so far; João holds Q♠ twice.
    game = sample_game(**TWO_DECKS, hand_number=2, pass_direction="right", trick_number=4, history=history,
                       totals=totals, hand_points=(0, 0, 0, 3, 0, 0, 0, 0, 0, 0), kitty_taker=3, kitty_trick=1,
                       hand=("QS", "QS", "AS", "KH", "KH", "9C", "AD"), legal=("QS", "AS"),
                       trick=_ten("6S", "JS", "6S", "2S", "TS", "3S", "8S", leader=4), to_move=1, last_trick=stays,
                       carried=tuple(p.card for p in stays.plays), carried_tricks=1,
                       passed=("2C", "2C", "JH"), received=("AD", "KH", "9C"))
    after = replace(game, trick=(), to_move=6, legal=(), last_trick=won, carried=(), carried_tricks=0,
                    trick_number=5, hand_points=(0, 0, 0, 3, 0, 0, 1, 0, 0, 0))
    passing = replace(game, phase="pass", trick=(), last_trick=None, to_move=None, legal=(), waiting_for=(0, 1, 5),
                      hand_points=zeros, passed=(), received=(), carried=(), carried_tricks=0, kitty_taker=None,
                      kitty_trick=None, hand=("QS", "QS", "AS", "4S", "KH", "2C", "2C", "9C", "AD", "AD"))
    # The hand's last trick: both A♠ and both 9♠ cancel; it goes to the winner of trick 9, Hélène.
    last = FinishedTrick(10, _ten("AS", "AS", "9S", "9S", "2H", "3H", "4D", "6H", "TC", "8H", leader=2), 7, 4,
                         cancelled=True)
    hand = HandResult(2, (0, 13, 2, 9, 0, 3, 5, 14, 4, 2), (12, 43, 9, 9, 19, 29, 9, 25, 12, 15))
    over = replace(game, phase="over", trick=(), to_move=None, legal=(), hand=(), last_trick=None, carried=(),
                   totals=(102, 43, 9, 9, 19, 29, 9, 25, 12, 15),
                   history=history + (hand, HandResult(3, (90, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                                                       (102, 43, 9, 9, 19, 29, 9, 25, 12, 15))))
    return {
        "your_turn": [ctx(YourTurn("play"), game),
                      ctx(YourTurn("pass", started=True, rules=CANCELLATION_RULES),
                          replace(passing, hand_number=1, history=(), totals=zeros, table_talk=()))],
        "trick_done": [ctx(TrickDone(tricks=(stays,)), replace(game, to_move=4, legal=(), trick=())),
                       ctx(TrickDone(tricks=(stays, won)), after)],
        "status": [ctx(Status(), game)],
        "hand_summary": [ctx(HandSummary(hand, tricks=(last,), kitty=("7H", "7H", "2S", "JC"), kitty_taker=3,
                                         kitty_trick=1,
                                         taken=(Taken(0), Taken(1, 0, ("QS", "QS")), Taken(2, 2), Taken(3, 9),
                                                Taken(4), Taken(5, 3), Taken(6, 5), Taken(7, 1, ("QS",)),
                                                Taken(8, 4), Taken(9, 2))),
                             replace(after, hand_number=3, history=history + (hand,), totals=hand.totals))],
        "game_summary": [ctx(GameSummary(winners=(2, 3, 6), totals=over.totals), over)],
        "rules": [ctx(Rules(CANCELLATION_RULES))],
        "history": [ctx(MoveHistory((HistoryHand(2, "right", passed=("2C", "2C", "JH"), tricks=(stays, won),
                                                 on_table=game.trick, kitty_taker=3, kitty_trick=1),)), game)],
    }
