"""JSON paths as people read them: ``choices[1].finish_reason``, ``usage.total_tokens``."""

from __future__ import annotations

from collections.abc import Iterable


def json_path(parts: Iterable[str | int]) -> str:
    """Join keys and indices: ``("choices", 1, "text")`` -> ``choices[1].text``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out or "$"
