"""Incremental ``Content-Encoding`` decoding with a bound on the output.

The recorder asks for ``Accept-Encoding: identity`` and reads with aiohttp's
``auto_decompress=False`` so the recorded body is the wire bytes. Should a server compress
anyway, the SSE parser still needs the decoded text: gzip and deflate are decoded here, chunk by
chunk, never producing more than the caller's budget (a small compressed body can expand a
thousandfold).
"""

from __future__ import annotations

import zlib


class ContentDecoder:
    """Decodes one response body; :func:`make_decoder` picks the codec."""

    def __init__(self, wbits: int, *, sniff_deflate: bool = False) -> None:
        self._wbits = wbits
        self._prefix = b""
        self._decomp = None if sniff_deflate else zlib.decompressobj(wbits)

    def decode(self, chunk: bytes, budget: int) -> bytes:
        """Decode ``chunk``; returns at most ``budget + 1`` bytes (more than ``budget`` means the
        budget is exhausted and the caller must stop). Raises ``zlib.error`` on corrupt input."""
        if self._decomp is None:
            self._prefix += chunk
            if len(self._prefix) < 2:
                return b""
            # "deflate" is zlib-wrapped per RFC 9110, but some servers send raw deflate
            first, second = self._prefix[0], self._prefix[1]
            zlib_header = (first & 0x0F) == 8 and ((first << 8) | second) % 31 == 0
            self._decomp = zlib.decompressobj(self._wbits if zlib_header else -zlib.MAX_WBITS)
            chunk, self._prefix = self._prefix, b""
        data = self._decomp.unconsumed_tail + chunk
        return self._decomp.decompress(data, max(budget, 0) + 1)


def make_decoder(content_encoding: str | None) -> ContentDecoder | None:
    """A decoder for the response's encoding; ``None`` for identity or unsupported codings."""
    if content_encoding is None:
        return None
    coding = content_encoding.strip().lower()
    if coding in ("gzip", "x-gzip"):
        return ContentDecoder(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return ContentDecoder(zlib.MAX_WBITS, sniff_deflate=True)
    return None
