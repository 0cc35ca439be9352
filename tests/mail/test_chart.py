"""The totals chart (pbem.mail.chart): a PNG drawn with Pillow at twice its shown size, decoded back
here by Pillow; each player's line in its colour, the words (axis labels, the target's label, the
legend's names, accented ones too) really drawn, the same bytes for the same input."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from pbem.mail import chart
from pbem.mail.chart import (
    BACKGROUND, PALETTE, SCALE, TARGET, ChartLabels, ChartLayout, chart_labels, font_lacks, nice_step, score_chart,
)

SERIES = [[4, 4, 30, 52], [13, 39, 39, 41], [9, 35, 35, 101], [0, 26, 52, 60]]
NAMES = ("Zoë Ávila", "João Brandão", "Ștefan Țurcanu", "Dana")


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of a PNG, decoded by Pillow (which checks every CRC)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    image.load()
    rgb = image.convert("RGB")
    raw = rgb.tobytes()
    stride = 3 * rgb.width
    return rgb.width, rgb.height, [raw[y * stride : (y + 1) * stride] for y in range(rgb.height)]


def image_of(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image.convert("RGB")


def colours_in(image: Image.Image, box: tuple[int, int, int, int]) -> set[tuple[int, int, int]]:
    return {c for _, c in image.crop(box).getcolors(maxcolors=1 << 20)}


def test_a_png_twice_the_size_it_is_shown_at() -> None:
    drawn = score_chart(SERIES, NAMES, target=100)
    width, height, _rows = decode_png(drawn.png)
    assert (width, height) == (SCALE * drawn.width, SCALE * drawn.height) and SCALE == 2
    assert drawn.width == chart.WIDTH and 200 < drawn.height < 400
    image = image_of(drawn.png)
    assert image.getpixel((width - 1, height - 1)) == BACKGROUND


def test_same_input_same_bytes() -> None:
    assert score_chart(SERIES, NAMES, target=100).png == score_chart(SERIES, NAMES, target=100).png
    assert score_chart(SERIES, NAMES, target=100).png != score_chart(SERIES, NAMES, target=50).png


def test_each_player_line_passes_through_its_totals() -> None:
    image = image_of(score_chart(SERIES, NAMES).png)
    box = ChartLayout(SERIES, NAMES, None)
    for seat, line in enumerate(SERIES):
        for hand, total in enumerate(line, start=1):
            later = any(SERIES[other][hand - 1] == total for other in range(seat + 1, len(SERIES)))
            if not later:  # the last-drawn seat covers a shared point
                assert image.getpixel((box.x(hand), box.y(total))) == PALETTE[seat], (seat, hand)
    # Halfway along a segment the line is there too (seat 2 from 35 to 101 in hand 4).
    x, y = (box.x(3) + box.x(4)) // 2, (box.y(35) + box.y(101)) // 2
    assert PALETTE[2] in colours_in(image, (x - 2, y - 2, x + 3, y + 3))


def test_the_legend_shows_each_colour_and_name() -> None:
    image = image_of(score_chart(SERIES, NAMES).png)
    box = ChartLayout(SERIES, NAMES, None)
    assert [item.name for item in box.legend] == list(NAMES)  # every letter drawable: nothing folded
    for item in box.legend:
        swatch = (item.x, item.y + 2 * SCALE, item.x + 12 * SCALE, item.y + 14 * SCALE)
        assert colours_in(image, swatch) == {PALETTE[item.seat]}
    assert max(item.y for item in box.legend) < box.top  # above the plot


def test_accented_names_are_written_with_their_accents() -> None:
    """DejaVu Sans (Debian's fonts-dejavu-core) has the letters; Pillow's own font would not."""
    assert font_lacks("Zoë Ávila João Brandão Ștefan Țurcanu Mâna ăîșțâ") == ""
    accented = image_of(score_chart([[1]], ["Ștefan"]).png)
    plain = image_of(score_chart([[1]], ["Stefan"]).png)
    item = ChartLayout([[1]], ["Ștefan"], None).legend[0]
    diff = ImageChops.difference(accented, plain).getbbox()
    assert diff is not None
    left, top, right, bottom = diff
    assert item.x + 17 * SCALE <= left and bottom <= ChartLayout([[1]], ["Ștefan"], None).legend_bottom + 4 * SCALE
    # What the missing-glyph check compares with: a code point no font has.
    assert font_lacks("\U0010fffd") == "\U0010fffd"


def test_without_a_font_for_them_letters_lose_their_accents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chart, "FONT_FILES", ())
    monkeypatch.delenv("PBEM_CHART_FONT", raising=False)
    chart._font.cache_clear()
    chart._has_glyph.cache_clear()
    try:
        box = ChartLayout([[1], [2]], ["Zoë Ávila", "Ștefan"], None)
        assert [item.name for item in box.legend] == ["Zoe Avila", "Stefan"]
        decode_png(score_chart([[1], [2]], ["Zoë Ávila", "Ștefan"]).png)
    finally:
        chart._font.cache_clear()
        chart._has_glyph.cache_clear()


def test_axis_labels_and_the_target_label_are_drawn() -> None:
    """Compared with the same chart without words, the picture differs where each label goes."""
    words = image_of(score_chart(SERIES, NAMES, target=100).png)
    bare = image_of(score_chart(SERIES, NAMES, target=100, labels=ChartLabels("", "", "")).png)
    box = ChartLayout(SERIES, NAMES, 100)
    diff = ImageChops.difference(words, bare)
    regions = {
        "hands": (box.left, box.hands_label_y, box.right, box.height),  # below the plot, centred
        "points": (0, box.top, box.axis_label_x + 20 * SCALE, box.bottom),  # up the left edge
        "target": (box.left, box.y(100) - 20 * SCALE, box.right, box.y(100)),  # just above its line
    }
    for name, region in regions.items():
        assert diff.crop(region).getbbox() is not None, name
    assert diff.getbbox() is not None
    # The numbers of the axes are drawn in both (they need no words).
    assert LABEL_DARK(words.crop((0, box.top, box.left, box.bottom)))


def LABEL_DARK(region: Image.Image) -> bool:  # noqa: N802
    return any(sum(c) < 3 * 0x80 for _, c in region.getcolors(maxcolors=1 << 20))


def test_target_line_is_dashed_and_labelled() -> None:
    image = image_of(score_chart(SERIES, NAMES, target=100).png)
    box = ChartLayout(SERIES, NAMES, 100)
    y = box.y(100)
    row = [image.getpixel((x, y)) for x in range(box.left + SCALE, box.right)]
    assert TARGET in row and len(set(row)) > 1  # dashes, and gaps between them
    no_target = image_of(score_chart(SERIES, NAMES).png)
    assert TARGET not in colours_in(no_target, (0, 0, no_target.width, no_target.height))


def test_negative_totals_and_long_games_fit() -> None:
    series = [[-26, -20], [26, 52], [26, 30]]
    image = image_of(score_chart(series, NAMES[:3]).png)
    box = ChartLayout(series, NAMES[:3], None)
    assert box.low <= -26 and 0 <= box.y(-26) < image.height
    assert image.getpixel((box.x(1), box.y(-26))) == PALETTE[0]
    long = [[k * 3 for k in range(1, 41)], [k * 2 for k in range(1, 41)]]
    decode_png(score_chart(long, NAMES[:2], target=100).png)
    seven = [[k] for k in range(7)]
    drawn = score_chart(seven, [f"Player number {k}" for k in range(7)], target=100)
    assert drawn.height > score_chart(seven[:2], ["A", "B"], target=100).height  # a legend of two rows


def test_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(ValueError):
        score_chart([], [])
    with pytest.raises(ValueError):
        score_chart([[1]] * 8, ["x"] * 8)
    with pytest.raises(ValueError):
        score_chart([[1]], ["a", "b"])


def test_labels_are_translated() -> None:
    assert chart_labels("en") == ChartLabels("Hand", "Points", "Game ends at %(target)s")
    assert chart_labels("pt").points == "Pontos" and chart_labels("ro").hands == "Mâna"
    assert "%(target)s" in chart_labels("ro").target


def test_no_hand_written_png_encoder_or_digit_font() -> None:
    source = Path(chart.__file__).read_text(encoding="utf-8")
    for gone in ("import zlib", "import struct", "_GLYPHS", "_Canvas", "IDAT"):
        assert gone not in source
    assert not hasattr(chart, "score_chart_png")


@pytest.mark.parametrize(("span", "step"), [(10, 2), (100, 20), (37, 10), (0, 1), (260, 100), (1000, 200)])
def test_nice_steps(span: int, step: int) -> None:
    assert nice_step(span) == step


def test_cost_of_a_chart(capsys: pytest.CaptureFixture[str]) -> None:
    """What one chart costs (printed, not asserted): a game draws one per language of its players."""
    score_chart(SERIES, NAMES, target=100)  # fonts loaded once per process
    runs = 20
    start = time.perf_counter()
    for _ in range(runs):
        drawn = score_chart(SERIES, NAMES, target=100)
    cost = (time.perf_counter() - start) / runs
    with capsys.disabled():
        print(f"\nscore chart: {cost * 1000:.1f} ms per chart, {len(drawn.png)} bytes, "
              f"{SCALE * drawn.width}x{SCALE * drawn.height} px")


def test_a_long_name_is_cut_short_in_a_chart_a_phone_shows_unshrunk() -> None:
    """README, "Summaries": the chart is drawn narrow enough for a phone (its words at least 12 px
    there, measured in tests/mail/test_mail_in_browser.py), so a forty-character name is cut short
    with an ellipsis rather than run past its edge."""
    long = "Maximilian Alexander von Hohenzollern-Sigm"
    layout = chart.ChartLayout([[3, 9], [4, 20]], [long, "Ana"], 100)
    assert chart.WIDTH <= 320 and min(chart.FONT_SIZE, chart.TICK_FONT_SIZE) >= 13
    first = layout.legend[0]
    assert first.name.endswith("…") and long.startswith(first.name[:-1]) and len(first.name) < len(long)
    assert layout.legend[1].name == "Ana"
