"""Short, printable excerpts of what the server sent, for Violation.evidence."""

from __future__ import annotations

import json

from spec import JSON

MAX_EVIDENCE = 600


def clip(text: str, limit: int = MAX_EVIDENCE) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more)"


def raw_text(raw: bytes, limit: int = MAX_EVIDENCE) -> str:
    """Raw wire bytes as text; invalid UTF-8 shown as ``\\xNN`` escapes."""
    return clip(raw.decode("utf-8", "backslashreplace"), limit)


def compact(value: JSON, limit: int = MAX_EVIDENCE) -> str:
    return clip(json.dumps(value, ensure_ascii=False, separators=(",", ":")), limit)
