"""The README's tour of the engine for bot authors runs as written, and its comments are true."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_engine_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## The engine, for bot authors", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README lost its engine example"
    return match.group(1)


def test_the_readme_engine_example_runs_and_says_what_it_gives():
    namespace: dict = {}
    exec(compile(readme_engine_example(), str(README), "exec"), namespace)  # noqa: S102
    state = namespace["state"]
    # the values the example's comments promise, after its last move (seat 0 played 5C)
    assert namespace["rules"].jd_bonus == -10 and namespace["rules"].target == 50
    assert state.trick_cards() == ((3, "2C"), (0, "5C"))
    assert namespace["GameState"].from_dict(namespace["d"]) == state
