"""The reading path on mail a hostile sender writes: it never raises, it says what it degraded,
it reads a bounded prefix, and what it keeps to echo into headers is clean.

One regression test per kind of crash once found, the bounds checked structurally (never by
timing: ``python -m pbem.mail.reading.bench --hostile`` prints the figures), and a property test
feeding arbitrary bytes and mutated corpus mails through every step.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.mail.reading import (
    NewGame, Play, Unreadable, bounce_details, classify, extract_reply, parse_command, read_mail, table_talk,
)
from pbem.mail.reading import commands, message, reply_text
from pbem.mail.reading.charsets import codec_name, decode_bytes
from pbem.mail.reading.clean import (
    MAX_NAME_CHARS, MAX_SUBJECT_CHARS, clean_display_name, find_addresses, is_mail_address,
)
from pbem.mail.reading.hostile import GENERATORS
from pbem.mail.reading.html_text import html_to_text
from pbem.mail.reading.message import decode_header_value

CORPUS = Path(__file__).parent / "corpus"
CORPUS_MAILS = sorted(p.read_bytes() for p in CORPUS.glob("*.eml"))
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
EXPECTED = (None, "play", "pass", "moon", "invitation", "new_game")


def _mail(headers: bytes, body: bytes = b"QS\r\n") -> bytes:
    return headers.strip().replace(b"\n", b"\r\n") + b"\r\n\r\n" + body


def read_everything(raw: bytes, envelope: str | None = "m@example.org") -> None:
    """Every step the worker takes for a stored mail, with every ``expected``."""
    mail = read_mail(raw, envelope)
    assert not _UNSAFE.search(mail.from_name) and len(mail.from_name) <= MAX_NAME_CHARS
    assert not _UNSAFE.search(mail.subject) and len(mail.subject) <= MAX_SUBJECT_CHARS
    assert all(isinstance(code, str) and code.isupper() for code in mail.problems)
    classify(mail)
    bounce_details(mail)
    for name in ("subject", "from", "to", "auto-submitted", "content-type"):
        mail.header(name)
        mail.headers(name)
    reply = extract_reply(mail.text)
    for expected in EXPECTED:
        parse_command(reply, "en", expected=expected, pass_count=3)
    table_talk(reply)


# -- one regression per crash kind --------------------------------------------------------------
@pytest.mark.parametrize("charset", ["uu", "base64", "undefined", "hex", "rot13", "zlib", "bz2", "quopri",
                                     "punycode", "idna", "unicode_escape", "utf\x008", "x\xffy"])
def test_a_charset_that_is_no_text_encoding_counts_as_unknown(charset: str) -> None:
    assert codec_name(charset) is None
    assert decode_bytes("Qé♠".encode(), charset) == "Qé♠"
    assert decode_bytes(b"Q\xe9S", charset) == "QéS"


@pytest.mark.parametrize("charset", [b"uu", b"base64", b"undefined", b"hex", b"rot13", b"zlib", b'"utf\x008"'])
def test_a_body_declaring_such_a_charset_is_read(charset: bytes) -> None:
    raw = _mail(b"From: a@example.org\nContent-Type: text/plain; charset=" + charset, b"Q\xc3\xa9S\r\n")
    assert read_mail(raw).text == "QéS\n"


@pytest.mark.parametrize("word", [b"=?undefined?q?Bob=E9?=", b"=?zlib?b?eJwLyS8pSU1RyM9TSM7PLShKLS5OTVHIzEsvysxLBwCDmAm5?=",
                                  b"=?ut\xe9f-8?q?Bob?=", b"=?\xff\xfe?q?Bob?=", b"=?utf\x008?q?Bob?="])
def test_an_encoded_word_with_a_strange_charset_is_read(word: bytes) -> None:
    mail = read_mail(_mail(b"From: " + word + b" <bob@example.org>\nSubject: " + word))
    assert mail.from_address == "bob@example.org"
    assert "Bob" in mail.from_name or mail.from_name  # decoded somehow, never raised
    read_everything(_mail(b"From: " + word + b" <bob@example.org>\nSubject: " + word))


def test_five_hundred_nested_parentheses_in_to() -> None:
    raw = _mail(b"From: a@example.org\nTo: " + b"(" * 500 + b")" * 500)
    assert len(raw) < 1100
    mail = read_mail(raw)
    assert mail.to == () and "RECIPIENTS_UNPARSEABLE" in mail.problems
    assert mail.from_address == "a@example.org"


def test_nested_parentheses_in_from_leave_the_address_absent_or_found_and_say_so() -> None:
    mail = read_mail(_mail(b"From: " + b"(" * 500 + b"bob@example.org" + b")" * 500))
    assert "ADDRESS_UNPARSEABLE" in mail.problems
    assert mail.from_address in ("", "bob@example.org")
    nested_cc = read_mail(_mail(b"From: a@example.org\nCc: (((" * 20 + b"x" + b")))" * 20 + b" c@example.org"))
    assert "c@example.org" in nested_cc.cc


def test_a_bounce_quoting_a_deeply_nested_reply_to() -> None:
    body = b"This message was not delivered.\r\n\r\nReply-To: Hearts <h+1@hearts.ex" + b"(" * 7000 + b"\r\n"
    mail = read_mail(_mail(b"From: MAILER-DAEMON@example.org\nSubject: failure notice", body))
    verdict = classify(mail)
    assert verdict is not None and verdict.reason == "BOUNCE"
    assert verdict.bounce is not None and verdict.bounce.original_reply_to in (None, "h+1@hearts.ex")


def test_deep_mime_nesting_reads_the_headers_and_says_so() -> None:
    raw = GENERATORS["deep_mime"](60_000)
    mail = read_mail(raw)
    assert "MIME_TOO_DEEP" in mail.problems
    assert mail.text == "" and mail.from_address == "mallory@example.org" and mail.subject == "hello"


def test_a_few_nested_multiparts_are_still_read() -> None:
    mail = read_mail(GENERATORS["deep_mime"](300))  # five levels
    assert mail.problems == () and mail.text.strip() == "QS"
    words = read_mail(_mail(b"From: a@example.org", b"QS\r\n" + b"multipart/mixed message/rfc822\r\n" * 50))
    assert words.problems == () and words.text.startswith("QS\n")


@pytest.mark.parametrize("param", [b"charset*=ut\x00f''x", b"charset*=utf-8''%00", b"charset*=zlib''x",
                                   b"charset*0*=utf-8''a; charset*1=b", b"charset*=\xff''x"])
def test_an_rfc_2231_charset_on_a_multipart_and_its_part(param: bytes) -> None:
    raw = _mail(b"From: a@example.org\nContent-Type: multipart/mixed; boundary=x; " + param,
                b"--x\r\nContent-Type: text/plain; " + param + b"\r\n\r\nQS\r\n--x--\r\n")
    assert read_mail(raw).text.strip() == "QS"
    read_everything(raw)


@pytest.mark.parametrize("charset", [b"undefined", b"zlib", b'"utf\x008"'])
@pytest.mark.parametrize("ctype", [b"multipart/mixed", b"multipart/report; report-type=delivery-status"])
def test_an_unparsed_8bit_multipart_declaring_a_strange_charset(ctype: bytes, charset: bytes) -> None:
    """A multipart without a boundary keeps its body as one string, which compat32's get_payload()
    decodes with the declared charset."""
    raw = _mail(b"From: a@example.org\nContent-Type: " + ctype + b"; charset=" + charset, b"Q\xe9S\r\n")
    assert read_mail(raw).text == ""
    report = (b"--x\r\nContent-Type: message/delivery-status; charset=" + charset + b"\r\n\r\nFinal-Recipient: "
              b"rfc822; b\xe9@example.org\r\nAction: failed\r\n\r\n--x\r\nContent-Type: message/rfc822; charset="
              + charset + b"\r\n\r\nSubject: \xe9\r\n--x--\r\n")
    read_everything(_mail(b"From: MAILER-DAEMON@example.org\nContent-Type: " + ctype + b"; boundary=x", report))


def test_a_huge_numeric_character_reference_in_html() -> None:
    assert html_to_text("<p>QS&#" + "1" * 10_000 + ";</p>") == "QS\ufffd"
    assert html_to_text("<p>&#x" + "f" * 10_000 + "</p>") == "\ufffd"
    assert html_to_text("<p>caf&#233; &lt; 3 <<< 4</p>") == "café < 3 <<< 4"


def test_a_long_message_is_cut_and_says_so() -> None:
    raw = _mail(b"From: a@example.org", b"QS\r\n" + b"x" * 70 + b"\r\n") + b"y" * 80 + b"\r\n"
    assert read_mail(raw).problems == ()
    big = _mail(b"From: a@example.org", b"QS\r\n" + b"filler line\r\n" * (message.MAX_PARSED_BYTES // 13 + 10))
    mail = read_mail(big)
    assert mail.problems == ("TRUNCATED",)
    assert mail.text.startswith("QS\n") and len(mail.text) <= message.MAX_PARSED_BYTES


# -- echoed text is clean when read -------------------------------------------------------------
def test_a_display_name_with_a_line_break_is_cleaned_when_read() -> None:
    raw = _mail(b"From: =?utf-8?q?Bob=0D=0ABcc=3A_victim=40elsewhere.test?= <bob@example.org>\n"
                b"Subject: =?utf-8?q?hi=0D=0ABcc:_x@y.test?=\nTo: new@hearts.example")
    mail = read_mail(raw)
    assert mail.from_name == "Bob Bcc: victim@elsewhere.test"
    assert mail.subject == "hi Bcc: x@y.test"
    assert mail.from_address == "bob@example.org"
    assert mail.problems == ("FROM_NAME_CLEANED", "SUBJECT_CLEANED")


def test_names_and_subjects_are_bounded() -> None:
    raw = _mail(b"From: " + b"Bob " * 200 + b"<bob@example.org>\nSubject: " + "é".encode() * 1000)
    mail = read_mail(raw)
    assert len(mail.from_name) <= MAX_NAME_CHARS and mail.from_name.startswith("Bob Bob")
    assert mail.subject == "é" * MAX_SUBJECT_CHARS
    assert set(mail.problems) == {"FROM_NAME_CLEANED", "SUBJECT_CLEANED"}


def test_an_honest_mail_has_no_problems() -> None:
    for raw in CORPUS_MAILS:
        assert read_mail(raw).problems == ()


def test_cleaning_rules() -> None:
    assert clean_display_name("  Ana  Maria ") == ("Ana  Maria", False)
    assert clean_display_name("Ana\x00\x01Maria") == ("Ana Maria", True)
    assert clean_display_name("Ana\u2028\ud800Maria\t") == ("Ana Maria", True)
    assert clean_display_name("x" * 500) == ("x" * MAX_NAME_CHARS, True)


# -- addresses ---------------------------------------------------------------------------------
def test_addresses_in_free_text() -> None:
    text = "new game with <Bob@Example.org>, mailto:c@d.pt. 'x@y.ro' and a@b@c.org, e@f, g@h.i."
    assert find_addresses(text) == ["Bob@Example.org", "c@d.pt", "'x@y.ro", "g@h.i"]
    assert find_addresses("a" * 64 + "@x.org " + "a" * 65 + "@x.org") == ["a" * 64 + "@x.org"]
    assert find_addresses("a" * 1_000_000) == [] and find_addresses("a." * 500_000 + "@x") == []


def test_whole_addresses() -> None:
    assert is_mail_address("ana@players.test") and is_mail_address("joão@exemplo.pt")
    for bad in ("ana", "a b@c.pt", "a\x00@b.pt", "a@b.pt\n", "a@b", "<a@b.pt>", "a@b.pt=Ana", "x" * 65 + "@a.pt"):
        assert not is_mail_address(bad), bad


def test_a_long_token_without_at_in_a_new_game_request() -> None:
    assert parse_command("new game " + "a" * 1_000_000, expected="new_game") == Unreadable("NO_PLAYERS")
    found = parse_command("bob@example.org " + "a" * 20_000 + "\ncarol@example.org", expected="new_game")
    assert found == NewGame(("bob@example.org", "carol@example.org"))


def test_a_from_without_spaces_is_cheap_and_absent() -> None:
    mail = read_mail(GENERATORS["from_without_spaces"](100_000))
    assert mail.from_address == "" and mail.problems == ("ADDRESS_UNPARSEABLE",)
    assert read_mail(_mail(b"From: MAILER-DAEMON (Mail Delivery System)")).from_address == "mailer-daemon"
    assert read_mail(_mail(b"From: <<bob@example.org>>")).from_address == "bob@example.org"


# -- the bots option ---------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "count"), [("3", 3), ("03", 3), (" 2 ", 2), ("1.", 1), ("0", 0), ("99", 99)])
def test_the_bots_count_is_read(value: str, count: int) -> None:
    command = parse_command(f"new game\nbots: {value}", expected="new_game")
    assert isinstance(command, NewGame) and command.bots == count and command.options["bots"] == str(count)


@pytest.mark.parametrize("value", ["three", "três", "trei", "lots", "-1", "3.5", "100", "٣", "x" * 200])
def test_a_bots_count_that_cannot_be_read_is_a_bad_option(value: str) -> None:
    command = parse_command(f"new game with bob@example.org\nbots: {value}", expected="new_game")
    assert command == Unreadable("BAD_OPTION", {"option": "bots", "value": value[:40]})


def test_a_new_game_without_bots_has_none() -> None:
    command = parse_command("new game with bob@example.org", expected="new_game")
    assert isinstance(command, NewGame) and command.bots == 0 and "bots" not in command.options


# -- bounded work (structure, not time) ----------------------------------------------------------
def test_only_the_start_of_a_reply_is_read_for_its_command() -> None:
    filler = "just talking about the weather today\n" * (commands.MAX_COMMAND_CHARS // 37 + 1)
    assert parse_command("QS\n" + filler) == Play("QS")
    assert parse_command(filler + "QS\n") == Unreadable("NO_COMMAND")
    assert table_talk(filler + "say hi\n") is None and table_talk("say hi\n" + filler) == "hi"


def test_only_the_first_lines_of_a_reply_are_read_for_its_command() -> None:
    filler = "hm\n\n" * commands.MAX_COMMAND_LINES
    assert len(filler) < commands.MAX_COMMAND_CHARS
    assert parse_command("QS\n" + filler) == Play("QS")
    assert parse_command(filler + "QS\n") == Unreadable("NO_COMMAND")
    assert table_talk(filler + "say hi\n") is None


def test_only_the_start_of_a_body_is_searched_for_the_new_text() -> None:
    filler = "> quoted\n" * (reply_text.MAX_REPLY_CHARS // 9 + 1)
    assert extract_reply("QS\n\n" + filler) == "QS"
    assert extract_reply(filler + "\nQS\n") == ""


def test_the_lines_of_the_mail_answered_are_read_from_a_bounded_prefix() -> None:
    """A reply that is nothing but the mail answered, a quarter of a megabyte of it, is nothing new;
    the mail's own lines are taken from a bounded prefix too (no timing: linear by construction)."""
    ours = "Your hand (9 cards) is below, and you may play any of them\n♠ 4 K A\n" * 20_000
    answered = reply_text.answered_lines(ours)
    assert len(answered) == 2
    assert extract_reply("QS\n" + ours, answered=answered) == "QS"
    assert extract_reply(ours + "\nQS\n", answered=answered) == ""  # past the prefix read


@settings(deadline=None, max_examples=200)
@given(text=st.text(max_size=400), mail=st.text(max_size=400))
def test_dropping_the_lines_of_the_mail_answered_never_raises(text: str, mail: str) -> None:
    answered = reply_text.answered_lines(mail)
    kept = reply_text.drop_answered(text, answered)
    assert len(kept) <= len(text)
    extract_reply(text, answered=answered)


def test_header_decoding_is_bounded() -> None:
    word = "=?utf-8?q?caf=C3=A9?= "
    decoded = decode_header_value(word * 100_000)
    assert decoded.startswith("café") and len(decoded) <= message.MAX_DECODED_HEADER_CHARS


def test_deep_html_quotes_do_not_grow_the_text() -> None:
    text = html_to_text("<div>QS</div>" + "<blockquote>" * 5000 + "x" + "</blockquote>" * 5000)
    assert text.split("\n")[0] == "QS" and len(text) < 100


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_every_hostile_generator_reads(name: str) -> None:
    for size in (2_000, 100_000):
        read_everything(GENERATORS[name](size))


# -- property: nothing raises ------------------------------------------------------------------
_CHARSETS = (b"uu", b"base64", b"undefined", b"zlib", b"utf\x008", b"\xff", b"utf-7", b"utf-16", b"x-unknown")
_INSERTS = (b"\x00", b"\r\n", b"\r\n\r\n", b"(" * 300, b")", b"=?", b"?=", b"=?uu?b?", b"=?utf-8?q?=0D=0A?=", b"--",
            b"Content-Type: multipart/mixed; boundary=z\r\n", b"\r\n--z\r\n", b"charset*=zlib''x;", b"<", b"&#99999999999;",
            b">" * 50, b"@", b"\xff\xfe", b"\xed\xa0\x80", b"begin 644 x\r\n", b"Content-Transfer-Encoding: base64\r\n")


@st.composite
def mutated_corpus_mail(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.sampled_from(CORPUS_MAILS)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(raw)))
        kind = draw(st.sampled_from(("insert", "delete", "charset", "bytes", "repeat")))
        if kind == "insert":
            raw[at:at] = draw(st.sampled_from(_INSERTS))
        elif kind == "delete":
            del raw[at : at + draw(st.integers(1, 200))]
        elif kind == "charset":
            raw = bytearray(re.sub(rb"(?i)charset=\"?[\w-]+\"?", b"charset=" + draw(st.sampled_from(_CHARSETS)),
                                   bytes(raw), count=draw(st.integers(0, 3))))
        elif kind == "bytes":
            raw[at:at] = draw(st.binary(max_size=40))
        else:
            piece = raw[at : at + draw(st.integers(1, 60))]
            raw[at:at] = piece * draw(st.integers(2, 50))
    return bytes(raw)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=2000), envelope=st.one_of(st.none(), st.just(""), st.text(max_size=30)))
def test_arbitrary_bytes_never_raise(raw: bytes, envelope: str | None) -> None:
    read_everything(raw, envelope)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=mutated_corpus_mail())
def test_mutated_corpus_mails_never_raise(raw: bytes) -> None:
    read_everything(raw)
