"""A small line chart of the players' totals after every hand, as PNG bytes (pure Python).

The game-summary mail shows it inline (``cid:``) in its HTML part. A chart library (matplotlib,
Pillow) would be tens of megabytes for one picture per game, so this draws the few shapes it
needs into an RGB buffer and writes the PNG itself: signature, ``IHDR`` (8-bit truecolour),
one ``IDAT`` (zlib of the scanlines, filter 0) and ``IEND``, each chunk with its CRC-32.

What is drawn: a light grid with the score values written in a tiny built-in digit font at the
left, a tick for every hand along the bottom, the target as a dashed line when it is in view,
and one coloured line per player (``PALETTE``, in seat order) with a dot at every hand. The
chart holds no words: the names and their colours are written next to it by the mail template,
so it needs no translation.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence

__all__ = ["BACKGROUND", "PALETTE", "ChartLayout", "layout", "score_chart_png"]

Colour = tuple[int, int, int]

#: One colour per seat (up to seven players), told apart also by people with red-green
#: colour blindness (the Okabe-Ito palette, black first).
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
LABEL: Colour = (0x55, 0x55, 0x55)
TARGET: Colour = (0xB0, 0x30, 0x30)

# A 3x5 font for the axis numbers: one string of 15 bits (rows top down) per character.
_GLYPHS: dict[str, str] = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001001001", "8": "111101111101111",
    "9": "111101111001111", "-": "000000111000000",
}
_SCALE = 2  # each font pixel is a 2x2 square: digits are 6x10 pixels
_CHAR_W = 3 * _SCALE
_CHAR_GAP = _SCALE


def hex_colour(colour: Colour) -> str:
    """``#rrggbb``, for the template's colour keys."""
    return "#{:02x}{:02x}{:02x}".format(*colour)


class _Canvas:
    """An RGB pixel buffer with the few drawing operations the chart needs."""

    def __init__(self, width: int, height: int, background: Colour) -> None:
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def set(self, x: int, y: int, colour: Colour) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = (y * self.width + x) * 3
            self.pixels[i : i + 3] = bytes(colour)

    def rect(self, x0: int, y0: int, x1: int, y1: int, colour: Colour) -> None:
        """Fill the rectangle with corners (x0, y0) and (x1, y1), both included."""
        for y in range(max(min(y0, y1), 0), min(max(y0, y1), self.height - 1) + 1):
            for x in range(max(min(x0, x1), 0), min(max(x0, x1), self.width - 1) + 1):
                self.set(x, y, colour)

    def hline(self, x0: int, x1: int, y: int, colour: Colour, dash: int = 0) -> None:
        for x in range(min(x0, x1), max(x0, x1) + 1):
            if not dash or (x // dash) % 2 == 0:
                self.set(x, y, colour)

    def vline(self, x: int, y0: int, y1: int, colour: Colour) -> None:
        for y in range(min(y0, y1), max(y0, y1) + 1):
            self.set(x, y, colour)

    def line(self, x0: int, y0: int, x1: int, y1: int, colour: Colour, width: int = 3) -> None:
        """A thick line: Bresenham's steps, each stamped with a ``width`` square."""
        lo = -(width // 2)
        hi = lo + width - 1
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.rect(x0 + lo, y0 + lo, x0 + hi, y0 + hi, colour)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x: int, y: int, text: str, colour: Colour) -> None:
        """Digits and minus signs, top-left corner at (x, y)."""
        for k, char in enumerate(text):
            bits = _GLYPHS[char]
            left = x + k * (_CHAR_W + _CHAR_GAP)
            for row in range(5):
                for col in range(3):
                    if bits[row * 3 + col] == "1":
                        self.rect(left + col * _SCALE, y + row * _SCALE,
                                  left + col * _SCALE + _SCALE - 1, y + row * _SCALE + _SCALE - 1, colour)

    def png(self) -> bytes:
        raw = bytearray()
        stride = self.width * 3
        for y in range(self.height):
            raw.append(0)  # filter type 0 (None) for every scanline
            raw += self.pixels[y * stride : (y + 1) * stride]
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return b"".join((
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(bytes(raw), 9)),
            _chunk(b"IEND", b""),
        ))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _text_width(text: str) -> int:
    return len(text) * (_CHAR_W + _CHAR_GAP) - _CHAR_GAP


def nice_step(span: float, ticks: int = 5) -> int:
    """A round grid step (1, 2 or 5 times a power of ten) giving about ``ticks`` lines."""
    raw = max(span / ticks, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return int(factor * power)
    return int(10 * power)  # pragma: no cover - the loop always returns


class ChartLayout:
    """Where values land on the picture (shared by the drawing and the tests)."""

    def __init__(self, hands: int, low: int, high: int, width: int, height: int) -> None:
        self.hands = max(hands, 1)
        self.step = nice_step(high - low)
        self.low = math.floor(low / self.step) * self.step
        self.high = max(math.ceil(high / self.step) * self.step, self.low + self.step)
        label = max(_text_width(str(self.low)), _text_width(str(self.high)))
        self.left = label + 12
        self.right = width - 14
        self.top = 12
        self.bottom = height - 20
        self.width = width
        self.height = height

    def x(self, hand: int) -> int:
        return self.left + round(hand * (self.right - self.left) / self.hands)

    def y(self, value: float) -> int:
        return self.bottom - round((value - self.low) * (self.bottom - self.top) / (self.high - self.low))


def layout(series: Sequence[Sequence[int]], *, target: int | None = None, width: int = 560,
           height: int = 260) -> ChartLayout:
    """The layout ``score_chart_png`` uses for these series (totals after hands 1..k)."""
    values = [0] + [v for line in series for v in line]
    high = max(values)
    if target is not None and target <= high * 1.5:
        high = max(high, target)  # show the target when the game came near it
    hands = max((len(line) for line in series), default=0)
    return ChartLayout(hands, min(values), max(high, 1), width, height)


def score_chart_png(series: Sequence[Sequence[int]], *, target: int | None = None, width: int = 560,
                    height: int = 260) -> bytes:
    """The totals chart: ``series[seat]`` holds that seat's total after hand 1, 2, ... .

    Every line starts at 0 before the first hand. ``target`` (the game's end score) is drawn
    dashed when the scores came within reach of it.
    """
    if not series or len(series) > len(PALETTE):
        raise ValueError(f"between 1 and {len(PALETTE)} players, not {len(series)}")
    if width < 120 or height < 80:
        raise ValueError("a chart needs at least 120x80 pixels")
    box = layout(series, target=target, width=width, height=height)
    canvas = _Canvas(width, height, BACKGROUND)
    value = box.low
    while value <= box.high:
        y = box.y(value)
        canvas.hline(box.left, box.right, y, AXIS if value == 0 else GRID)
        label = str(value)
        canvas.text(box.left - 6 - _text_width(label), y - 5, label, LABEL)
        value += box.step
    canvas.vline(box.left, box.top, box.bottom, AXIS)
    for hand in range(box.hands + 1):
        canvas.vline(box.x(hand), box.bottom, box.bottom + 4, AXIS)
    every = max(1, math.ceil(box.hands / 12))
    for hand in range(every, box.hands + 1, every):
        label = str(hand)
        canvas.text(box.x(hand) - _text_width(label) // 2, box.bottom + 7, label, LABEL)
    if target is not None and box.low <= target <= box.high:
        canvas.hline(box.left, box.right, box.y(target), TARGET, dash=6)
    for seat, line in enumerate(series):
        colour = PALETTE[seat]
        points = [(box.x(0), box.y(0))] + [(box.x(k + 1), box.y(v)) for k, v in enumerate(line)]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            canvas.line(x0, y0, x1, y1, colour)
        for x, y in points[1:]:
            canvas.rect(x - 3, y - 3, x + 3, y + 3, colour)
    return canvas.png()
