"""Cards in web pages: symbols and colours from ``pbem.mail.cards_display``, as CSS classes.

Mails need inline styles; a page has its own stylesheet (in ``_layout.html``), so a card
is ``<span class="card red">Q♥</span>`` and the colours live in one place.  No words here:
suit and rank names are in the templates, translated.
"""

from __future__ import annotations

from flask import Flask
from markupsafe import Markup

from pbem.mail import cards_display as cd

__all__ = ["card_html", "install_filters", "suit_html"]


def card_html(card: str) -> Markup:
    colour = "red" if cd.is_red(card) else "black"
    return Markup('<span class="card {}">{}</span>').format(colour, cd.card_text(card))


def suit_html(suit: str) -> Markup:
    colour = "red" if cd.is_red(suit) else "black"
    return Markup('<span class="suit {}">{}</span>').format(colour, cd.SUIT_SYMBOLS[suit])


def install_filters(app: Flask) -> None:
    app.jinja_env.filters.update(
        card=card_html,
        suit=suit_html,
        sorted_cards=cd.sort_cards,
        rank=lambda card: cd.rank_text(card[0]),
    )
