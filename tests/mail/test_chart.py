"""The totals chart is a valid PNG: decoded back here with zlib alone, pixel by pixel."""

from __future__ import annotations

import struct
import zlib

import pytest

from pbem.mail.chart import BACKGROUND, PALETTE, TARGET, layout, nice_step, score_chart_png


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of an 8-bit truecolour PNG, checking every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos = 8
    chunks: list[tuple[bytes, bytes]] = []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks.append((kind, body))
        pos += 12 + length
    assert [k for k, _ in chunks][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    width, height, depth, colour_type, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour_type, compression, filtering, interlace) == (8, 2, 0, 0, 0)
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = 1 + 3 * width
    assert len(raw) == height * stride
    rows = []
    for y in range(height):
        line = raw[y * stride : (y + 1) * stride]
        assert line[0] == 0  # filter None
        rows.append(line[1:])
    return width, height, rows


def pixel(rows: list[bytes], x: int, y: int) -> tuple[int, int, int]:
    return tuple(rows[y][3 * x : 3 * x + 3])  # type: ignore[return-value]


SERIES = [[4, 4, 30, 52], [13, 39, 39, 41], [9, 35, 35, 101], [0, 26, 52, 60]]


def test_dimensions_and_background() -> None:
    data = score_chart_png(SERIES, target=100, width=400, height=200)
    width, height, rows = decode_png(data)
    assert (width, height) == (400, 200)
    assert pixel(rows, 399, 0) == BACKGROUND  # top right corner is empty
    assert pixel(rows, 0, 199) == BACKGROUND


def test_each_player_line_passes_through_its_totals() -> None:
    data = score_chart_png(SERIES, width=560, height=260)
    _, _, rows = decode_png(data)
    box = layout(SERIES, width=560, height=260)
    # Every hand's dot is drawn in the player's colour (the last-drawn seat wins overlaps,
    # so check points no later seat shares).
    for seat, line in enumerate(SERIES):
        for hand, total in enumerate(line, start=1):
            shared = any(SERIES[other][hand - 1] == total for other in range(seat + 1, len(SERIES)))
            if not shared:
                assert pixel(rows, box.x(hand), box.y(total)) == PALETTE[seat], (seat, hand)
    # Halfway along a segment the line is there too (seat 2 from 35 to 101 in hand 4).
    x = (box.x(3) + box.x(4)) // 2
    y = (box.y(35) + box.y(101)) // 2
    nearby = {pixel(rows, x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
    assert PALETTE[2] in nearby


def test_target_line_is_dashed_when_in_reach() -> None:
    _, _, rows = decode_png(score_chart_png(SERIES, target=100))
    box = layout(SERIES, target=100)
    y = box.y(100)
    colours = [pixel(rows, x, y) for x in range(box.left + 1, box.right)]
    assert TARGET in colours and len(set(colours)) > 1  # dashes, and gaps showing the grid
    far = [[1, 2], [2, 1]]
    _, _, rows = decode_png(score_chart_png(far, target=100))
    assert all(TARGET not in {pixel(rows, x, y) for x in range(560)} for y in range(260))


def test_negative_totals_fit_in_the_picture() -> None:
    series = [[-26, -20], [26, 52], [26, 30]]
    _, height, rows = decode_png(score_chart_png(series))
    box = layout(series)
    assert box.low <= -26 and 0 <= box.y(-26) < height
    assert pixel(rows, box.x(1), box.y(-26)) == PALETTE[0]


def test_a_game_of_many_hands_and_one_hand() -> None:
    long = [[k * 3 for k in range(1, 41)], [k * 2 for k in range(1, 41)]]
    width, height, _ = decode_png(score_chart_png(long))
    assert (width, height) == (560, 260)
    decode_png(score_chart_png([[0], [26], [0], [0]]))


def test_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(ValueError):
        score_chart_png([])
    with pytest.raises(ValueError):
        score_chart_png([[1]] * 8)
    with pytest.raises(ValueError):
        score_chart_png([[1]], width=50)


@pytest.mark.parametrize(("span", "step"), [(10, 2), (100, 20), (37, 10), (0, 1), (260, 100), (1000, 200)])
def test_nice_steps(span: int, step: int) -> None:
    assert nice_step(span) == step
