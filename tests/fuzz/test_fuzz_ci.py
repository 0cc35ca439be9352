"""``pbem bench fuzz`` as CI runs it: a fixed seed and a small budget (750 mails, the size table
up to 1 MB), in this process.  Nothing may escape the worker's path, every kind of target gets
mail, and at least half the mails must reach a command handler and the composer (else the fuzzer
only exercises the reader).  The report is printed (``-s`` shows it); its CPU figures are never
asserted.  The budget is a test's, a fixed sample checked on every run: the search for new
crashes is the command's, with a budget of its own (``pbem bench fuzz --messages 20000``)."""

from __future__ import annotations

from pathlib import Path

from pbem.bench.fuzz import TARGET_KINDS, Options, run

MESSAGES = 750
SIZES = [10_000, 100_000, 1_000_000]


def test_fuzz_fixed_seed_small_budget(tmp_path: Path) -> None:
    lines: list[str] = []
    # The CPU limits only keep a quadratic reader from holding CI (the interrupted mail is
    # reported as a stall); they are not figures, and stalls are not asserted.
    # The answers are composed and left in the outbox (send=False): sending them is the outbox's
    # work, tested on its own, and would only add to the time CI takes.
    report = run(Options(messages=MESSAGES, seed="ci", sizes=SIZES, directory=tmp_path, progress=False,
                         limit=5.0, size_limit=10.0, send=False), echo=lines.append)
    print("\n".join(lines))
    assert report.messages == MESSAGES
    assert set(report.by_kind) == set(TARGET_KINDS), report.by_kind
    crashes = {kind: (count, report.crash_messages[kind]) for kind, count in report.crashes.items()}
    assert not report.fuzzer_errors, report.fuzzer_errors
    assert report.uncaught == 0, crashes
    assert report.handler_share >= 0.5, report.handler_share
    assert report.composer_share >= 0.5, report.composer_share
    size_crashes = {(name, size): result.crash for name, row in report.size_table.items()
                    for size, result in row.items() if result is not None and result.crash is not None
                    and not result.crash.stall}
    assert not size_crashes
