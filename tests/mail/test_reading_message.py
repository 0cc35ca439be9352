"""read_mail: raw bytes of any charset and transfer encoding to an IncomingMail."""

from __future__ import annotations

import base64

import pytest

from pbem.mail.reading.charsets import codec_name, decode_bytes
from pbem.mail.reading.html_text import html_to_text
from pbem.mail.reading.message import decode_header_value, read_mail, unflow


def _mail(headers: str, body: bytes = b"hello\r\n") -> bytes:
    return headers.strip().replace("\n", "\r\n").encode("utf-8", "surrogateescape") + b"\r\n\r\n" + body


def test_envelope_and_identity_fields() -> None:
    raw = _mail(
        """
From: "Smith, Bob" <Bob.Smith@Example.COM>
To: hearts+1.0.0.aaaaaaaaaaaaaaaa@hearts.example
Subject: Re: [Hearts #1] Your turn
Message-ID: <abc@mail.example>
In-Reply-To: <x1@hearts.example> (sent by Hearts)
References: <x0@hearts.example>
 <x1@hearts.example>
Content-Type: text/plain
"""
    )
    mail = read_mail(raw, "<Bob.Smith@Example.COM>")
    assert mail.envelope_sender == "bob.smith@example.com"
    assert mail.from_address == "bob.smith@example.com"
    assert mail.from_name == "Smith, Bob"
    assert mail.message_id == "<abc@mail.example>"
    assert mail.in_reply_to == "<x1@hearts.example>"
    assert mail.references == ("<x0@hearts.example>", "<x1@hearts.example>")
    assert mail.subject == "Re: [Hearts #1] Your turn"
    assert mail.text == "hello\n"
    assert mail.header("TO") == "hearts+1.0.0.aaaaaaaaaaaaaaaa@hearts.example"
    assert mail.to == ("hearts+1.0.0.aaaaaaaaaaaaaaaa@hearts.example",)
    assert mail.cc == ()


def test_to_and_cc_lists() -> None:
    raw = _mail(
        """
From: a@b.example
To: New game <new@hearts.example>
Cc: "Carol, C." <Carol@Example.org>, dave@example.net,
 =?utf-8?q?Jo=C3=A3o?= <joao@example.pt>
Cc: erin@example.com
"""
    )
    mail = read_mail(raw)
    assert mail.to == ("new@hearts.example",)
    assert mail.cc == ("carol@example.org", "dave@example.net", "joao@example.pt", "erin@example.com")


def test_null_and_unknown_envelope_sender() -> None:
    raw = _mail("From: a@b.example")
    assert read_mail(raw, "<>").envelope_sender == ""
    assert read_mail(raw, "").envelope_sender == ""
    assert read_mail(raw).envelope_sender is None


def test_missing_headers_give_empty_fields() -> None:
    mail = read_mail(b"\r\njust a body\r\n")
    assert (mail.from_address, mail.message_id, mail.in_reply_to, mail.references, mail.subject) == (
        "", None, None, (), ""
    )
    assert mail.text == "just a body\n"


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("=?utf-8?q?Jo=C3=A3o?= Silva", "João Silva"),
        ("=?ISO-8859-1?Q?Jo=E3o?=", "João"),
        ("=?iso-8859-2?Q?Dam=E3_de_pic=E3?=", "Damă de pică"),
        ("=?windows-1250?B?" + base64.b64encode("Popă".encode("cp1250")).decode() + "?=", "Popă"),
        ("Re: =?UTF-8?B?UsOibmR1bA==?= =?UTF-8?B?IHTEg3U=?=", "Re: Rândul tău"),
        ("=?x-unknown?Q?caf=C3=A9?=", "café"),  # unknown charset: UTF-8 bytes still read
        ("=?utf-8?B?not base64!?=", "=?utf-8?B?not base64!?="),
        ("folded\r\n subject", "folded subject"),
        ("plain", "plain"),
    ],
)
def test_decode_header_value(raw: str, decoded: str) -> None:
    assert decode_header_value(raw) == decoded


def test_raw_8bit_headers_in_utf8_and_latin1() -> None:
    utf8 = b"From: Jo\xc3\xa3o <joao@example.pt>\r\nSubject: \xc3\x81s de copas\r\n\r\nx"
    latin1 = b"From: Jo\xe3o <joao@example.pt>\r\nSubject: \xc1s de copas\r\n\r\nx"
    for raw in (utf8, latin1):
        mail = read_mail(raw)
        assert mail.from_name == "João"
        assert mail.from_address == "joao@example.pt"
        assert mail.subject == "Ás de copas"


@pytest.mark.parametrize(
    ("charset", "cte", "text"),
    [
        ("utf-8", "base64", "ás de copas ♠"),
        ("utf-8", "quoted-printable", "damă de pică ♠"),
        ("utf-8", "8bit", "ás de copas ♠"),
        ("iso-8859-1", "quoted-printable", "ás de copas"),
        ("iso-8859-1", "base64", "Às 10h, ás de copas"),
        ("iso-8859-2", "8bit", "damă de pică, roşie"),
        ("windows-1250", "quoted-printable", "popă de treflă, şapte"),
        ("windows-1252", "8bit", "“ten of hearts” – thanks"),
        ("iso-8859-15", "8bit", "ás de copas €"),
        ("koi8-r", "8bit", "дама пик"),
        ("utf-16", "base64", "ás de copas ♠"),
    ],
)
def test_body_charsets_and_encodings(charset: str, cte: str, text: str) -> None:
    data = text.encode(charset)
    if cte == "base64":
        body = base64.encodebytes(data)
    elif cte == "quoted-printable":
        import quopri

        body = quopri.encodestring(data)
    else:
        body = data
    raw = _mail(f"From: a@b.example\nContent-Type: text/plain; charset={charset}\nContent-Transfer-Encoding: {cte}", body)
    assert read_mail(raw).text.strip() == text


@pytest.mark.parametrize(
    ("declared", "data", "text"),
    [
        ("iso-8859-1", "ás ♠".encode(), "ás ♠"),  # UTF-8 sent as Latin-1
        ("utf-8", "ás de copas".encode("cp1252"), "ás de copas"),  # Latin sent as UTF-8
        ("us-ascii", "ás".encode(), "ás"),  # 8-bit sent as ASCII
        ("x-unknown", "damă".encode(), "damă"),
        ("iso-8859-1", "“hi”".encode("cp1252"), "“hi”"),  # Latin-1 is read as Windows-1252
        ("bogus\"charset", b"caf\xe9", "café"),
        (None, "pică".encode(), "pică"),
    ],
)
def test_charsets_that_lie(declared: str | None, data: bytes, text: str) -> None:
    assert decode_bytes(data, declared) == text


def test_codec_names() -> None:
    assert codec_name("UTF8") == "utf-8"
    assert codec_name("Windows-1250") == "cp1250"
    assert codec_name("iso-8859-8-i") == "iso8859-8"
    assert codec_name("x-unknown") is None
    assert codec_name(None) is None


def test_plain_text_is_preferred_and_attachments_and_attached_messages_are_skipped() -> None:
    raw = _mail(
        """
From: a@b.example
Content-Type: multipart/mixed; boundary="M"
""",
        b"--M\r\nContent-Type: message/rfc822\r\n\r\nFrom: x@y\r\nContent-Type: text/plain\r\n\r\nAS\r\n"
        b"--M\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nKS\r\n"
        b"--M\r\nContent-Type: multipart/alternative; boundary=\"A\"\r\n\r\n"
        b"--A\r\nContent-Type: text/html\r\n\r\n<p>HTML QS</p>\r\n"
        b"--A\r\nContent-Type: text/plain\r\n\r\nplain QS\r\n--A--\r\n"
        b"--M--\r\n",
    )
    mail = read_mail(raw)
    assert mail.text.strip() == "plain QS"
    assert not mail.text_from_html


def test_html_only_and_empty_plain_part_use_the_html() -> None:
    html_only = _mail("From: a@b.example\nContent-Type: text/html; charset=utf-8", b"<p>Q&spades;</p>")
    mail = read_mail(html_only)
    assert mail.text == "Q♠"
    assert mail.text_from_html
    empty_plain = _mail(
        'From: a@b.example\nContent-Type: multipart/alternative; boundary="A"',
        b"--A\r\nContent-Type: text/plain\r\n\r\n \r\n--A\r\nContent-Type: text/html\r\n\r\n<b>KS</b>\r\n--A--\r\n",
    )
    assert read_mail(empty_plain).text == "KS"


def test_format_flowed_is_undone() -> None:
    raw = _mail(
        "From: a@b.example\nContent-Type: text/plain; charset=utf-8; format=flowed; delsp=no",
        b"I will play the ten of \r\nhearts now.\r\n\r\nOn 6/3/24 10:15, Hearts \r\nwrote:\r\n"
        b"> Your turn, \r\n> Alice.\r\n>> older \r\n>> text\r\n-- \r\nBob\r\n",
    )
    assert read_mail(raw).text == (
        "I will play the ten of hearts now.\n\nOn 6/3/24 10:15, Hearts wrote:\n"
        "> Your turn, Alice.\n>> older text\n-- \nBob\n"
    )
    assert unflow("ab \ncd", delsp=True) == "abcd"
    assert unflow(" >not a quote") == ">not a quote"  # space stuffing


def test_zero_width_characters_are_removed() -> None:
    raw = _mail("From: a@b.example\nContent-Type: text/plain; charset=utf-8", "Q\u200bS\ufeff".encode())
    assert read_mail(raw).text == "QS"


def test_garbage_does_not_raise() -> None:
    for raw in (b"", b"\x00\xff\xfe", b"Content-Type: multipart/mixed\r\n\r\nno boundary",
                b"Content-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!",
                b"Content-Type: text/plain; charset=\xff\xfe\r\n\r\nabc"):
        read_mail(raw)


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<div>QS</div><div><br></div><blockquote>You may play Q&spades;</blockquote>", "QS\n\n> You may play Q♠"),
        ("<p>a</p><p>b</p>", "a\nb"),
        ("a<br>b<br/>c", "a\nb\nc"),
        ("<head><style>p{}</style><title>t</title></head><body>x</body>", "x"),
        ("<script>alert(1)</script>ok", "ok"),
        ('<div class="gmail_quote">On x wrote:<blockquote>old</blockquote></div>', "> On x wrote:\n> > old"),
        ('<div>new</div><div class="gmail_signature">--<br>Bob QS</div>', "new"),
        ('new<div id="appendonsend"></div><hr><div id="divRplyFwdMsg">From: x</div><div>old QS</div>',
         "new\n> " + "_" * 32 + "\n> From: x\n> old QS"),
        ("<pre>a\n  b</pre>", "a\n  b"),
        ("x&nbsp;&amp;&lt;y", "x &<y"),
        ("<p>unclosed<div>tags</span></p>", "unclosed\ntags"),
    ],
)
def test_html_to_text(html: str, text: str) -> None:
    assert html_to_text(html) == text
