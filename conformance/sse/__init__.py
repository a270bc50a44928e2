"""Strict, incremental Server-Sent-Events parsing over raw bytes (WHATWG HTML section 9.2).

See https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation.
The parser accepts everything the standard allows and records each deviation as an observation;
judging them is the conformance rules' job.
"""

from . import codes
from .model import RAW_EXCERPT_BYTES, Comment, Observation, SSEEvent, is_done_sentinel
from .parser import DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES, SSEParser

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "RAW_EXCERPT_BYTES",
    "Comment",
    "Observation",
    "SSEEvent",
    "SSEParser",
    "codes",
    "is_done_sentinel",
]
