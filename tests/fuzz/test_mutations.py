"""The fuzzer's mails are a function of the seed alone, and each generator builds about the size asked."""

from __future__ import annotations

import random

import pytest

from pbem.bench import mutations as mu


def test_mutations_are_deterministic() -> None:
    raw = mu.build_mail([(b"From", b"<" + mu.FROM + b">"), (b"To", mu.TO), (b"Subject", b"Re: x")], b"QS\r\n")
    first = [mu.mutate(random.Random(f"seed:{k}"), raw) for k in range(200)]
    again = [mu.mutate(random.Random(f"seed:{k}"), raw) for k in range(200)]
    assert first == again
    assert {name for _, names in first for name in names} == set(mu.MUTATIONS)


@pytest.mark.parametrize("name", sorted(mu.GENERATORS))
def test_generator_size_and_placeholders(name: str) -> None:
    generator = mu.GENERATORS[name]
    for size in (10_000, 100_000):
        raw = generator.build(random.Random(name), size)
        assert raw == generator.build(random.Random(name), size)
        assert size * 0.5 <= len(raw) <= size * 1.5 + 2_000, (size, len(raw))
    mail = mu.instantiate(raw, "ana@players.test", "new@hearts.test")
    assert mu.TO not in mail and b"new@hearts.test" in mail


def test_headers_are_set_and_read() -> None:
    raw = mu.build_mail([(b"From", b"a@b.c"), (b"Subject", b"one\r\n two")], b"body")
    assert mu.get_header(raw, b"subject") == b"one\r\n two"
    raw = mu.set_header(raw, b"Subject", b"three")
    assert mu.get_header(raw, b"Subject") == b"three"
    assert mu.set_header(raw, b"X-New", b"1").startswith(b"X-New: 1\r\n")
    assert raw.endswith(b"\r\n\r\nbody")
