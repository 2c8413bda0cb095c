"""A saved log's bytes as text, whatever the shell that saved it wrote.

Windows PowerShell 5.1's `>` redirect (Out-File) writes UTF-16LE with a byte-order mark; Notepad and some
editors save UTF-8 with a BOM; everything else on a training cluster writes UTF-8 (or plain ASCII). Read as
UTF-8, a UTF-16 log is every character followed by a NUL byte and no reader's pattern matches it.
Pure: bytes in, str out (the CLI reads the file)."""

from __future__ import annotations

import codecs

# BOMs in the order they must be tried: UTF-32LE's BOM begins with UTF-16LE's (FF FE), so UTF-32 first.
BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# Without a BOM, text that is UTF-16 has a NUL in (nearly) every other byte when it is ASCII, as logs are:
# when at least this share of the odd (LE) or even (BE) bytes are NUL, the bytes are read as UTF-16.
# UTF-8 text never contains NUL bytes, so any share well above 0 cannot be UTF-8 log text; 0.9 leaves room
# for a few non-ASCII characters (a µ, a box-drawing progress bar) in an otherwise ASCII log.
UTF16_NUL_SHARE = 0.9
BYTE_ORDER_MARK = "\ufeff"
REPLACEMENT = "\ufffd"  # what a UTF-8 decoder with errors="replace" makes of the UTF-16 BOM's bytes


def decode_log(data: bytes) -> str:
    """The log's text: by its BOM if it has one, as BOM-less UTF-16 if its NULs say so, else UTF-8 (an
    undecodable byte becomes U+FFFD rather than an error: a log's throughput lines are ASCII)."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace")
    pairs = len(data) // 2
    if pairs:
        if data[1::2].count(0) >= UTF16_NUL_SHARE * pairs:
            return data.decode("utf-16-le", errors="replace")
        if data[0::2].count(0) >= UTF16_NUL_SHARE * pairs:
            return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


def _utf16_as_bytes(chars: str) -> bool:
    """NULs in (nearly) every other place: UTF-16 text that a client read one byte per character."""
    pairs = len(chars) // 2
    return pairs > 0 and (chars[1::2].count("\x00") >= UTF16_NUL_SHARE * pairs
                          or chars[0::2].count("\x00") >= UTF16_NUL_SHARE * pairs)


def as_pasted(text: str) -> str:
    """Text pasted or sent as a string, as the log it was: without the BOM its file had (a client that read a
    UTF-8-BOM file as UTF-8), and, when a client read a UTF-16 file one byte per character (NULs between the
    characters), decoded again: exactly when every character is a byte (read as Latin-1), else with the NULs and
    the undecodable BOM bytes (U+FFFD) dropped, which keeps an ASCII log whole."""
    if _utf16_as_bytes(text.lstrip(BYTE_ORDER_MARK + REPLACEMENT)):
        if all(ord(c) < 0x100 for c in text):
            return decode_log(text.encode("latin-1"))
        text = text.lstrip(REPLACEMENT).replace("\x00", "")
    return text[1:] if text.startswith(BYTE_ORDER_MARK) else text
