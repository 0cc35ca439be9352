"""Every mail that ever raised out of the worker's path (``tests/fuzz/regressions``) is replayed
through that whole path (stored as a front stores it, then the ``pbem.process_inbound`` task's
``run_move``, answers sent to an SMTP sink) against a live target of its kind, and must leave
its row in a terminal state (``done``, ``rejected``, ``ignored`` or ``failed``) with nothing
escaping: the reading path never raises, whatever the bytes (``pbem.mail.reading``'s docstring),
and the worker's task settles every mail it is given."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.bench.fuzz import TERMINAL, Fixture, manifest_cases, replay_case

REGRESSIONS = Path(__file__).parent / "regressions"
CASES = manifest_cases(REGRESSIONS)

#: CPU seconds after which a replay is interrupted: a guard so that a reader gone quadratic fails
#: this test instead of holding CI, not a figure (no mail should come near it).
GUARD = 120.0


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    fx = Fixture(tmp_path_factory.mktemp("fuzz-regressions"), seed="regressions", tables=4)
    yield fx
    fx.close()


def test_every_file_is_in_the_manifest() -> None:
    files = {path.name for path in REGRESSIONS.glob("*.eml")}
    listed = [case["file"] for case in CASES]
    assert sorted(listed) == sorted(files)
    assert len(set(listed)) == len(listed)


@pytest.mark.parametrize("case", CASES, ids=[case["file"] for case in CASES])
def test_regression_mail_reaches_a_terminal_state(fixture: Fixture, case: dict[str, str]) -> None:
    result = replay_case(fixture, REGRESSIONS, case, limit=GUARD)
    assert result.crash is None, f"{case['file']} ({case['what']}): {result.crash}"
    assert result.stored
    assert result.status in TERMINAL, f"{case['file']}: {result.status} {result.code}"
