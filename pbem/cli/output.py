"""Printing what senders wrote on the operator's terminal, and the operator's tables.

Whatever a mail carries is the sender's (README, "Under faults and hostile mail"): a Subject or a
body may hold terminal escapes (``ESC [ 2 J`` clears the screen, ``ESC ] … BEL`` retitles the window
or writes a link, a bidirectional override turns text around). :func:`safe` shows every control and
format character as an escape (``\\x1b``, ``\\u202e``, a backslash as ``\\\\``), so nothing a sender
wrote reaches the terminal as anything but visible text; JSON output (``--json``) is ASCII with
everything else escaped by :func:`as_json`.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

__all__ = ["ago", "as_json", "safe", "table", "when"]

#: Unicode categories shown escaped: controls, format characters (bidi overrides, zero-width
#: characters), line and paragraph separators, surrogates, private use and unassigned.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def safe(text: Any, *, multiline: bool = False) -> str:
    """``text`` with nothing a terminal acts on: every control or format character escaped (a
    line break kept when ``multiline``; a tab kept)."""
    out = []
    for char in str(text):
        if char == "\\":
            out.append("\\\\")
        elif char == "\t" or (multiline and char == "\n"):
            out.append(char)
        elif unicodedata.category(char) in _ESCAPED_CATEGORIES:
            out.append(_escape(char))
        else:
            out.append(char)
    return "".join(out)


def as_json(value: Any) -> str:
    """JSON in ASCII (every other character escaped), indented."""
    return json.dumps(value, indent=2, ensure_ascii=True, default=str)


def ago(delta: timedelta) -> str:
    """``3d4h``, ``5h12m``, ``42m``, ``10s``: how long, roughly."""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h"
    if hours:
        return f"{hours}h{minutes}m"
    if minutes:
        return f"{minutes}m"
    return f"{seconds}s"


def when(value: datetime | None) -> str:
    """A UTC time to the minute, ``2026-12-02 15:04``; ``-`` for none."""
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, widest: int = 40) -> str:
    """Rows as columns, each cell made :func:`safe` and cut at ``widest`` characters."""
    cells = [[_cut(safe(c), widest) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[k]) for r in cells]) for k, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def listing(rows: Sequence[Any], *, as_json_output: bool, nothing: str, headers: Sequence[str],
            cells: Callable[[Any], Sequence[Any]], widest: int = 40) -> str:
    """An operator's listing: every row's ``as_json()`` as JSON, ``nothing`` when there is no row, or
    a :func:`table` of each row's ``cells``."""
    if as_json_output:
        return as_json([row.as_json() for row in rows])
    if not rows:
        return nothing
    return table(headers, [cells(row) for row in rows], widest=widest)


def _cut(text: str, widest: int) -> str:
    return text if len(text) <= widest else text[: widest - 1] + "…"
