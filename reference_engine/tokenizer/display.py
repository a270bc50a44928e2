"""How a token is shown in ``logprobs.tokens`` and as a ``top_logprobs`` key, and back.

Decision: a token whose bytes are valid UTF-8 on their own is shown as that text. A token whose
bytes are not (a byte-level BPE token can hold part of a multi-byte character, e.g. the first two
bytes of ``…``) is shown as ``bytes:`` followed by one ``\\xNN`` escape per byte in lower-case hex,
e.g. ``bytes:\\xe2\\x80``. That is what OpenAI's API does, so clients written against it can
parse ours, and it keeps every display string valid JSON text without U+FFFD, which would lose the
bytes. :func:`display_to_bytes` inverts it, so a client can rebuild the exact byte stream from the
tokens of a response.
"""

from __future__ import annotations

import re

BYTES_PREFIX = "bytes:"
_ESCAPED = re.compile(r"(?:\\x[0-9a-f]{2})+")


def bytes_to_display(data: bytes) -> str:
    """Return the display form of a token's bytes (see the module docstring)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return BYTES_PREFIX + "".join(f"\\x{byte:02x}" for byte in data)


def display_to_bytes(display: str) -> bytes:
    """Invert :func:`bytes_to_display`: the bytes a displayed token stands for.

    A string is read as escaped bytes only when it is ``bytes:`` followed by nothing but
    ``\\xNN`` escapes (lower-case hex); anything else is taken as text and encoded as UTF-8. No
    token of the shipped vocabulary has text of that escaped shape, so the inverse is exact for
    every token id (a test checks all of them).
    """
    if display.startswith(BYTES_PREFIX):
        rest = display[len(BYTES_PREFIX) :]
        if _ESCAPED.fullmatch(rest):
            return bytes.fromhex(rest.replace("\\x", ""))
    return display.encode("utf-8")
