"""Cards in web pages: symbols and colours from ``pbem.mail.cards_display``, as CSS classes.

Mails need inline styles; a page has its own stylesheet (in ``_layout.html``), so a card
is ``<span class="card red">Q♥</span>`` and the colours live in one place.  No words here:
suit and rank names are in the templates, translated.

With two decks (RULES.md §6.6) a list may name a card twice: ``counted`` groups the copies, and
``cards_html`` shows a card held twice as ``Q♠ ×2``.
"""

from __future__ import annotations

from collections.abc import Iterable

from flask import Flask
from markupsafe import Markup

from pbem.mail import cards_display as cd

__all__ = ["card_html", "cards_html", "counted", "install_filters", "suit_html"]


def card_html(card: str) -> Markup:
    colour = "red" if cd.is_red(card) else "black"
    return Markup('<span class="card {}">{}</span>').format(colour, cd.card_text(card))


def counted(cards: Iterable[str]) -> list[tuple[str, int]]:
    """Cards in display order with how many copies of each (1, or 2 with two decks)."""
    out: list[tuple[str, int]] = []
    for card in cd.sort_cards(cards):
        if out and out[-1][0] == card:
            out[-1] = (card, out[-1][1] + 1)
        else:
            out.append((card, 1))
    return out


def copies_html(card: str, copies: int) -> Markup:
    """One card, and ``×2`` after it when there are two copies of it (RULES.md §6.6)."""
    if copies == 1:
        return card_html(card)
    colour = "red" if cd.is_red(card) else "black"
    return Markup('<span class="card {} copies">{} ×{}</span>').format(colour, cd.card_text(card), copies)


def cards_html(cards: Iterable[str]) -> Markup:
    """Cards in display order, space-separated, a card named twice once with ``×2``."""
    return Markup(" ").join(copies_html(card, copies) for card, copies in counted(cards))


def suit_html(suit: str) -> Markup:
    colour = "red" if cd.is_red(suit) else "black"
    return Markup('<span class="suit {}">{}</span>').format(colour, cd.SUIT_SYMBOLS[suit])


def install_filters(app: Flask) -> None:
    app.jinja_env.filters.update(
        card=card_html,
        cards=cards_html,
        copies=lambda pair: copies_html(*pair),
        counted=counted,
        suit=suit_html,
        sorted_cards=cd.sort_cards,
        rank=lambda card: cd.rank_text(card[0]),
    )
