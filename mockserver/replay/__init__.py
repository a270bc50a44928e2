"""Replay: serve the exchanges a ``conformance run --json`` report recorded, exactly as recorded.

``mockserver --replay REPORT.json [--replay-timing recorded|none]`` lets a client's test suite
run against what a real server sent (its quirks included) with no network and no GPU, and lets
the harness's own tests judge recordings of real servers in CI (``tests/fixtures/lab/``).

- :mod:`.recording` reads the report into :class:`RecordedExchange` values;
- :mod:`.matching` picks the recorded answer for a request, or the closest one when none fits;
- :mod:`.app` serves them over aiohttp.
"""

from .app import TIMINGS, create_replay_app
from .matching import Matcher, canonical_body
from .recording import RecordedExchange, RecordingError, load_recording, parse_recording

__all__ = [
    "TIMINGS",
    "Matcher",
    "RecordedExchange",
    "RecordingError",
    "canonical_body",
    "create_replay_app",
    "load_recording",
    "parse_recording",
]
