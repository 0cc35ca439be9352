"""Signed reply and invitation addresses: round trips, and every forgery refused."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, strategies as st

from pbem.mail.addresses import (
    BadAddress,
    InviteToken,
    ReplyToken,
    make_invite_address,
    make_reply_address,
    parse_invite_address,
    parse_recipient,
    parse_reply_address,
)

SECRET = "s3cret-key-for-tests"
DOMAIN = "hearts.example.org"

numbers = st.integers(min_value=0, max_value=10**12)
seats = st.integers(min_value=0, max_value=6)


@given(game=numbers, seat=seats, decision=numbers)
def test_reply_address_round_trip(game: int, seat: int, decision: int) -> None:
    address = make_reply_address(SECRET, DOMAIN, game, seat, decision)
    assert address == address.lower()
    local = address.split("@")[0]
    assert set(local) <= set(string.ascii_lowercase + string.digits + "+.")
    assert parse_reply_address(SECRET, DOMAIN, address) == ReplyToken(game, seat, decision)


@given(invitation=numbers)
def test_invite_address_round_trip(invitation: int) -> None:
    address = make_invite_address(SECRET, DOMAIN, invitation)
    assert address.startswith("invite+")
    assert parse_invite_address(SECRET, DOMAIN, address) == InviteToken(invitation)
    assert parse_recipient(SECRET, DOMAIN, address) == InviteToken(invitation)


def test_example_shape() -> None:
    address = make_reply_address(SECRET, DOMAIN, 42, 1, 17)
    local, domain = address.split("@")
    assert domain == DOMAIN
    prefix, _, rest = local.partition("+")
    game, seat, decision, sig = rest.split(".")
    assert (prefix, game, seat, decision) == ("hearts", "42", "1", "17")
    assert len(sig) * 5 >= 64


def _alterations(address: str):
    """Every address that differs from ``address`` in exactly one character, case aside."""
    alphabet = string.ascii_lowercase + string.digits + "+.@-_"
    for i, original in enumerate(address):
        for replacement in alphabet:
            if replacement != original.lower():
                yield address[:i] + replacement + address[i + 1 :]


@pytest.mark.parametrize("decision", [0, 17])
def test_every_single_character_alteration_is_refused(decision: int) -> None:
    address = make_reply_address(SECRET, DOMAIN, 42, 1, decision)
    count = 0
    for altered in _alterations(address):
        with pytest.raises(BadAddress) as info:
            parse_reply_address(SECRET, DOMAIN, altered)
        assert info.value.code in {"NOT_OURS", "MALFORMED", "BAD_SIGNATURE"}
        count += 1
    assert count > 1000


def test_every_single_character_alteration_of_an_invitation_is_refused() -> None:
    address = make_invite_address(SECRET, DOMAIN, 7)
    for altered in _alterations(address):
        with pytest.raises(BadAddress):
            parse_invite_address(SECRET, DOMAIN, altered)


def test_altered_field_is_a_bad_signature() -> None:
    address = make_reply_address(SECRET, DOMAIN, 42, 1, 17)
    forged = address.replace("hearts+42.1.", "hearts+42.2.")
    with pytest.raises(BadAddress) as info:
        parse_reply_address(SECRET, DOMAIN, forged)
    assert info.value.code == "BAD_SIGNATURE"


def test_upper_cased_address_still_verifies() -> None:
    address = make_reply_address(SECRET, DOMAIN, 42, 3, 9)
    assert parse_reply_address(SECRET, DOMAIN, address.upper()) == ReplyToken(42, 3, 9)
    assert parse_reply_address(SECRET, DOMAIN.upper(), f"<{address.title()}>") == ReplyToken(
        42, 3, 9
    )


def test_another_seats_token_does_not_verify_as_this_seat() -> None:
    other = make_reply_address(SECRET, DOMAIN, 42, 2, 5)
    sig = other.split("@")[0].rsplit(".", 1)[1]
    for seat in (0, 1, 3):
        stolen = f"hearts+42.{seat}.5.{sig}@{DOMAIN}"
        with pytest.raises(BadAddress) as info:
            parse_reply_address(SECRET, DOMAIN, stolen)
        assert info.value.code == "BAD_SIGNATURE"


def test_other_secret_refused() -> None:
    address = make_reply_address("another secret", DOMAIN, 1, 0, 0)
    with pytest.raises(BadAddress) as info:
        parse_reply_address(SECRET, DOMAIN, address)
    assert info.value.code == "BAD_SIGNATURE"


def test_invitation_signature_is_not_a_reply_signature() -> None:
    invite = make_invite_address(SECRET, DOMAIN, 5)
    sig = invite.split("@")[0].rsplit(".", 1)[1]
    for forged in (f"hearts+5.0.0.{sig}@{DOMAIN}", f"hearts+5.{sig}@{DOMAIN}"):
        with pytest.raises(BadAddress):
            parse_reply_address(SECRET, DOMAIN, forged)
    reply = make_reply_address(SECRET, DOMAIN, 5, 0, 0)
    reply_sig = reply.split("@")[0].rsplit(".", 1)[1]
    with pytest.raises(BadAddress) as info:
        parse_invite_address(SECRET, DOMAIN, f"invite+5.{reply_sig}@{DOMAIN}")
    assert info.value.code == "BAD_SIGNATURE"


@pytest.mark.parametrize(
    ("address", "code"),
    [
        (f"hearts+42.1.17.aaaaaaaaaaaaaaaa@elsewhere.org", "NOT_OURS"),
        (f"new@{DOMAIN}", "NOT_OURS"),
        (f"postmaster@{DOMAIN}", "NOT_OURS"),
        (f"invite+1.aaaaaaaaaaaaaaaa@{DOMAIN}", "NOT_OURS"),
        (f"hearts+42.1.aaaaaaaaaaaaaaaa@{DOMAIN}", "MALFORMED"),
        (f"hearts+042.1.17.aaaaaaaaaaaaaaaa@{DOMAIN}", "MALFORMED"),
        (f"hearts+42.1.17.aaaaaaaaaaaaaaa@{DOMAIN}", "MALFORMED"),
        (f"hearts+42.1.17.aaaaaaaaaaaaaaa1@{DOMAIN}", "MALFORMED"),
        ("no-at-sign", "MALFORMED"),
        ("", "MALFORMED"),
        (f"hearts+42.1.17.aaaaaaaaaaaaaaaa@{DOMAIN}", "BAD_SIGNATURE"),
    ],
)
def test_refusal_codes(address: str, code: str) -> None:
    with pytest.raises(BadAddress) as info:
        parse_reply_address(SECRET, DOMAIN, address)
    assert info.value.code == code


def test_parse_recipient_routes_both_kinds() -> None:
    reply = make_reply_address(SECRET, DOMAIN, 3, 0, 1)
    assert parse_recipient(SECRET, DOMAIN, reply) == ReplyToken(3, 0, 1)
    with pytest.raises(BadAddress) as info:
        parse_recipient(SECRET, DOMAIN, f"new@{DOMAIN}")
    assert info.value.code == "NOT_OURS"


@pytest.mark.parametrize("bad", [-1, True, 1.5])
def test_make_refuses_bad_numbers(bad) -> None:
    with pytest.raises(ValueError):
        make_reply_address(SECRET, DOMAIN, bad, 0, 0)


def test_empty_secret_refused() -> None:
    with pytest.raises(ValueError):
        make_reply_address("", DOMAIN, 1, 0, 0)
