"""Turning bytes of unknown honesty into text.

Mail declares its charset, and is often wrong: Latin-1 declared for Windows-1252 text (curly
quotes), a Latin charset declared for UTF-8, ``us-ascii`` for 8-bit bodies, names Python does not
know (``x-unknown``, ``iso-8859-8-i``). The rules here, in order:

1. bytes that are pure ASCII are ASCII, whatever is declared;
2. non-ASCII bytes that are valid UTF-8 are UTF-8 when the declared charset is a single-byte one
   (or missing, or unknown): valid multi-byte UTF-8 sequences almost never occur by accident in
   Latin text, while UTF-8 mislabelled as Latin-1 is common;
3. the declared charset, strictly, with ``iso-8859-1``/``us-ascii`` read as ``windows-1252``
   (what browsers do too);
4. ``windows-1252``, then ``latin-1`` (which cannot fail).

A declared name is only ever used when Python knows it as a *text* encoding of characters: mail may declare
``base64``, ``uu``, ``zlib``, ``hex``, ``rot13`` or ``undefined`` (codecs of the registry that are
not charsets: they raise when asked to decode bytes to text, or read escapes; see
:data:`_NOT_CHARSETS`), a name with a NUL or 8-bit bytes in
it; such a name counts as unknown. :func:`decode_bytes` never raises.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

# Names seen in real mail that Python's codec registry does not know, or knows differently.
_ALIASES = {
    "iso-8859-8-i": "iso8859_8",
    "iso-8859-6-i": "iso8859_6",
    "x-mac-roman": "mac_roman",
    "x-mac-ce": "mac_latin2",
    "cp-1250": "cp1250",
    "cp-1252": "cp1252",
    "x-user-defined": "cp1252",
    "unicode": "utf-8",
    "utf8mb4": "utf-8",
    "latin-1": "cp1252",
    "iso-8859-1": "cp1252",
    "iso_8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
}
#: Text codecs of Python's registry that no mail charset means: ``undefined`` refuses every
#: input, the escape codecs read backslashes, and ``punycode`` decodes in quadratic time.
_NOT_CHARSETS = frozenset({"undefined", "idna", "punycode", "unicode-escape", "raw-unicode-escape"})
# Codecs where UTF-8 look-alike bytes are plausible: never second-guess these.
_MULTIBYTE = frozenset({
    "utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-7", "euc_jp", "shift_jis",
    "iso2022_jp", "euc_kr", "gb2312", "gbk", "gb18030", "big5", "big5hkscs", "cp949", "cp932",
})


@lru_cache(maxsize=256)
def codec_name(declared: str | None) -> str | None:
    """Python's codec name for a declared charset, or None when unknown or missing."""
    if not declared:
        return None
    name = declared.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    if not name.isascii() or not name.isprintable():
        return None
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    # ``bytes.decode`` refuses codecs flagged as not text encodings (base64, zlib, rot13…).
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None
    return info.name


def decode_bytes(data: bytes, declared: str | None = None) -> str:
    """Decode ``data`` following the module's rules; never raises."""
    if data.isascii():
        return data.decode("ascii")
    codec = codec_name(declared)
    if codec not in _MULTIBYTE:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if codec is not None:
        try:
            return data.decode(codec)
        except (UnicodeError, LookupError, ValueError):  # a codec of the registry misbehaving
            pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")
