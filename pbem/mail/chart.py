"""The game-summary chart: each player's total after every hand, as PNG bytes drawn with Pillow.

The game-summary mail shows it inline (``cid:``) in its HTML part; PNG because mail clients
drop SVG. It is drawn at ``SCALE`` (2) times the size the HTML gives it (``Chart.width`` and
``Chart.height``, CSS pixels), so it stays sharp on high-density screens.

What is drawn: a legend with the players' names in their colours (``PALETTE``, in seat order),
a light grid with the point values at the left and the axis label ("Points"), a tick and number
for the hands along the bottom and its label ("Hand"), the target as a dashed line labelled "Game
ends at 100" (games that end after a number of hands have none), and one line per player from 0
before the first hand, with a dot at every hand.

Pillow rather than matplotlib: one picture per game needs a few lines and words. ``ImageDraw``
draws them in a few milliseconds and most of a chart's cost (tens of milliseconds) is the PNG's
compression; matplotlib would bring numpy and tens of megabytes, and import several times slower,
for the same picture.
The words use DejaVu Sans when the system has it (Debian's ``fonts-dejavu-core``: every Latin,
Greek and Cyrillic letter, so "Zoë" and "Ștefan" are written right), else Pillow's built-in
scalable font, which has ASCII only: there, letters it lacks are written without their accents.
The same series, names, labels and font give the same bytes.

The labels are translated with the mail catalogs (``N_`` marks them for ``pybabel extract``).
"""

from __future__ import annotations

import functools
import math
import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from .i18n import load_translations, normalise_language

__all__ = [
    "BACKGROUND", "PALETTE", "SCALE", "TARGET", "Chart", "ChartLabels", "ChartLayout", "chart_labels",
    "font_lacks", "hex_colour", "nice_step", "score_chart",
]

Colour = tuple[int, int, int]

#: One colour per seat (up to seven players), told apart also by people with red-green
#: colour blindness (the Okabe-Ito palette).
PALETTE: tuple[Colour, ...] = (
    (0x00, 0x72, 0xB2),  # blue
    (0xD5, 0x5E, 0x00),  # vermilion
    (0x00, 0x9E, 0x73),  # bluish green
    (0xCC, 0x79, 0xA7),  # reddish purple
    (0xE6, 0x9F, 0x00),  # orange
    (0x56, 0xB4, 0xE9),  # sky blue
    (0x00, 0x00, 0x00),  # black
)
BACKGROUND: Colour = (0xFF, 0xFF, 0xFF)
GRID: Colour = (0xE4, 0xE4, 0xE4)
AXIS: Colour = (0x88, 0x88, 0x88)
LABEL: Colour = (0x44, 0x44, 0x44)
TARGET: Colour = (0xB0, 0x30, 0x30)

#: Image pixels per CSS pixel.
SCALE = 2
#: The chart's width in CSS pixels (the HTML shrinks it to the screen: ``width:100%``).
WIDTH = 320
PLOT_HEIGHT = 190  # CSS pixels of the plotting area
PAD = 8
FONT_SIZE = 13  # CSS pixels: 12.9 px on a 375 px phone, where the chart is shown about 317 px wide
TICK_FONT_SIZE = 13

#: Where DejaVu Sans lives on Debian/Ubuntu, Fedora, Arch and Alpine; ``PBEM_CHART_FONT`` names another.
FONT_FILES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
)


def N_(message: str) -> str:  # noqa: N802 (gettext's name for "translate later")
    return message


_HANDS = N_("Hand")
_POINTS = N_("Points")
_TARGET = N_("Game ends at %(target)s")


def hex_colour(colour: Colour) -> str:
    """``#rrggbb``, for the template's colour keys."""
    return "#{:02x}{:02x}{:02x}".format(*colour)


@dataclass(frozen=True, slots=True)
class ChartLabels:
    """The chart's words, in the reader's language."""

    hands: str = _HANDS
    points: str = _POINTS
    #: With ``%(target)s`` for the target score.
    target: str = _TARGET


@functools.lru_cache(maxsize=8)
def chart_labels(language: str) -> ChartLabels:
    """The labels translated with the mail catalog of ``language``."""
    translations = load_translations(normalise_language(language))
    return ChartLabels(*(translations.gettext(m) for m in (_HANDS, _POINTS, _TARGET)))


@dataclass(frozen=True, slots=True)
class Chart:
    """A drawn chart: PNG bytes of ``SCALE * width`` by ``SCALE * height`` pixels."""

    png: bytes
    width: int  # CSS pixels
    height: int


# -- fonts ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    chosen = os.environ.get("PBEM_CHART_FONT")
    for path in ((chosen,) if chosen else ()) + FONT_FILES:
        if Path(path).is_file():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


def _glyph(font: ImageFont.FreeTypeFont | ImageFont.ImageFont, char: str) -> bytes:
    box = font.getbbox(char)
    w, h = max(box[2], 1), max(box[3], 1)
    image = Image.new("L", (w, h))
    ImageDraw.Draw(image).text((0, 0), char, font=font, fill=255)
    return image.tobytes() + bytes(str((w, h)), "ascii")


@functools.lru_cache(maxsize=4096)
def _has_glyph(size: int, char: str) -> bool:
    """Whether the chart font draws ``char`` (not the box of a missing letter)."""
    if char.isspace() or ord(char) < 0x80:
        return True
    font = _font(size)
    return _glyph(font, char) != _glyph(font, "\U0010fffd")  # a private-use code point: no font has it


def font_lacks(text: str, size: int = FONT_SIZE * SCALE) -> str:
    """The letters of ``text`` the chart font cannot draw (none with DejaVu Sans and Latin names)."""
    return "".join(dict.fromkeys(c for c in text if not _has_glyph(size, c)))


def _drawable(text: str, size: int) -> str:
    """``text`` as the font can draw it: a letter it lacks loses its accents (or becomes ``?``)."""
    out = []
    for char in text:
        if _has_glyph(size, char):
            out.append(char)
            continue
        bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
        out.append(bare if bare and all(_has_glyph(size, c) for c in bare) else "?")
    return "".join(out)


def _fitted(text: str, size: int, room: int) -> str:
    """``text`` cut short with an ellipsis where it is wider than ``room`` pixels (a long name in a
    chart narrow enough for a phone)."""
    if _text_size(text, size)[0] <= room:
        return text
    ellipsis = "…" if _has_glyph(size, "…") else "..."
    while len(text) > 1 and _text_size(text + ellipsis, size)[0] > room:
        text = text[:-1]
    return text.rstrip() + ellipsis


# -- layout ---------------------------------------------------------------------------------------


def nice_step(span: float, ticks: int = 5) -> int:
    """A round grid step (1, 2 or 5 times a power of ten) giving about ``ticks`` lines."""
    raw = max(span / ticks, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return int(factor * power)
    return int(10 * power)  # pragma: no cover - the loop always returns


def _text_size(text: str, size: int) -> tuple[int, int]:
    left, top, right, bottom = _font(size).getbbox(text)
    return right - left, bottom


@dataclass(frozen=True, slots=True)
class _LegendItem:
    seat: int
    name: str
    x: int
    y: int


class ChartLayout:
    """Where everything lands, in image pixels (shared by the drawing and the tests)."""

    def __init__(self, series: Sequence[Sequence[int]], names: Sequence[str], target: int | None,
                 width: int = WIDTH) -> None:
        s = SCALE
        self.scale = s
        self.font_size = FONT_SIZE * s
        self.tick_size = TICK_FONT_SIZE * s
        self.hands = max(max((len(line) for line in series), default=0), 1)
        values = [0] + [v for line in series for v in line] + ([target] if target is not None else [])
        low, high = min(values), max(max(values), 1)
        self.step = nice_step(high - low)
        self.low = math.floor(low / self.step) * self.step
        self.high = max(math.ceil(high / self.step) * self.step, self.low + self.step)
        if target is not None and self.high - target < self.step / 3:
            self.high += self.step  # room for the target's label above its line
        self.width = width * s
        # The legend: a swatch and a name per player, as many rows as the width needs.
        self.legend: list[_LegendItem] = []
        x, y = PAD * s, PAD * s
        row = (FONT_SIZE + 6) * s
        room = self.width - 2 * PAD * s - (12 + 5) * s  # the widest name a legend row holds
        for seat, name in enumerate(names):
            shown = _fitted(_drawable(name, self.font_size), self.font_size, room)
            w = (12 + 5) * s + _text_size(shown, self.font_size)[0]
            if x > PAD * s and x + w > self.width - PAD * s:
                x, y = PAD * s, y + row
            self.legend.append(_LegendItem(seat, shown, x, y))
            x += w + 16 * s
        self.legend_bottom = y + row
        ticks = [str(v) for v in range(self.low, self.high + 1, self.step)]
        label_w = max(_text_size(t, self.tick_size)[0] for t in ticks)
        self.axis_label_x = PAD * s  # the rotated "Points" runs up the left edge
        self.left = PAD * s + (FONT_SIZE + 6) * s + label_w + 6 * s
        self.right = self.width - PAD * s - 6 * s
        self.top = self.legend_bottom + 10 * s
        self.bottom = self.top + PLOT_HEIGHT * s
        self.tick_label_y = self.bottom + 6 * s
        self.hands_label_y = self.tick_label_y + (TICK_FONT_SIZE + 6) * s
        self.height = self.hands_label_y + (FONT_SIZE + 4) * s + PAD * s
        self.height += -self.height % s  # whole CSS pixels

    def x(self, hand: int) -> int:
        return self.left + round(hand * (self.right - self.left) / self.hands)

    def y(self, value: float) -> int:
        return self.bottom - round((value - self.low) * (self.bottom - self.top) / (self.high - self.low))


# -- drawing --------------------------------------------------------------------------------------


def _dashed(draw: ImageDraw.ImageDraw, x0: int, x1: int, y: int, colour: Colour, width: int, dash: int) -> None:
    for x in range(x0, x1, 2 * dash):
        draw.line([(x, y), (min(x + dash, x1), y)], fill=colour, width=width)


def _rotated_text(image: Image.Image, text: str, size: int, x: int, centre_y: int, colour: Colour) -> None:
    """``text`` reading upwards, its left edge at ``x``, centred on ``centre_y``."""
    font = _font(size)
    w, h = _text_size(text, size)
    strip = Image.new("L", (max(w, 1), max(h, 1)))
    ImageDraw.Draw(strip).text((0, 0), text, font=font, fill=255)
    strip = strip.transpose(Image.Transpose.ROTATE_90)
    image.paste(colour, (x, max(centre_y - strip.height // 2, 0)), strip)


def score_chart(series: Sequence[Sequence[int]], names: Sequence[str], *, target: int | None = None,
                labels: ChartLabels = ChartLabels(), width: int = WIDTH) -> Chart:
    """The totals chart: ``series[seat]`` holds that seat's total after hand 1, 2, ...

    Every line starts at 0 before the first hand; ``target`` (the score that ends the game) is
    drawn as a labelled dashed line.
    """
    if not series or len(series) > len(PALETTE):
        raise ValueError(f"between 1 and {len(PALETTE)} players, not {len(series)}")
    if len(names) != len(series):
        raise ValueError("one name per line")
    if width < 200:
        raise ValueError("a chart needs at least 200 pixels")
    box = ChartLayout(series, names, target, width)
    s = box.scale
    image = Image.new("RGB", (box.width, box.height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font, tick_font = _font(box.font_size), _font(box.tick_size)
    for item in box.legend:
        draw.rectangle([item.x, item.y + 2 * s, item.x + 12 * s - 1, item.y + 14 * s - 1], fill=PALETTE[item.seat])
        draw.text((item.x + 17 * s, item.y + 2 * s), item.name, font=font, fill=LABEL)
    for value in range(box.low, box.high + 1, box.step):
        y = box.y(value)
        draw.line([(box.left, y), (box.right, y)], fill=AXIS if value == 0 else GRID, width=s)
        text = str(value)
        w, h = _text_size(text, box.tick_size)
        draw.text((box.left - 6 * s - w, y - h // 2 - s), text, font=tick_font, fill=LABEL)
    draw.line([(box.left, box.top), (box.left, box.bottom)], fill=AXIS, width=s)
    every = max(1, math.ceil(box.hands / 12))
    for hand in range(box.hands + 1):
        draw.line([(box.x(hand), box.bottom), (box.x(hand), box.bottom + 3 * s)], fill=AXIS, width=s)
        if hand and hand % every == 0:
            text = str(hand)
            draw.text((box.x(hand) - _text_size(text, box.tick_size)[0] // 2, box.tick_label_y), text,
                      font=tick_font, fill=LABEL)
    hands_label = _drawable(labels.hands, box.font_size)
    draw.text(((box.left + box.right - _text_size(hands_label, box.font_size)[0]) // 2, box.hands_label_y),
              hands_label, font=font, fill=LABEL)
    _rotated_text(image, _drawable(labels.points, box.font_size), box.font_size, box.axis_label_x,
                  (box.top + box.bottom) // 2, LABEL)
    if target is not None:
        y = box.y(target)
        _dashed(draw, box.left, box.right, y, TARGET, s, 6 * s)
        text = _drawable(labels.target % {"target": target}, box.tick_size)
        w, h = _text_size(text, box.tick_size)
        draw.text((box.left + 6 * s, y - h - 4 * s), text, font=tick_font, fill=TARGET)  # the lines start low
    for seat, line in enumerate(series):
        points = [(box.x(0), box.y(0))] + [(box.x(k + 1), box.y(v)) for k, v in enumerate(line)]
        draw.line(points, fill=PALETTE[seat], width=2 * s, joint="curve")
        r = 3 * s
        for x, y in points[1:]:
            draw.ellipse([x - r, y - r, x + r, y + r], fill=PALETTE[seat])
    out = BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return Chart(png=out.getvalue(), width=box.width // s, height=box.height // s)
