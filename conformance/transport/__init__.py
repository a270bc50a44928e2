"""Recording HTTP exchanges over real connections, with hard limits, for the harness.

:func:`record` sends one request with aiohttp and keeps the response bytes, their timings and,
for ``text/event-stream`` responses, the events and observations of the strict SSE parser
(:mod:`conformance.sse`, after WHATWG HTML 9.2,
https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
:func:`to_curl` turns a recording into a command that reproduces it.
"""

from .budget import MemoryBudget
from .curl import AUTH_VARIABLE, secret_variable, to_curl
from .exchange import Exchange, RecordedRequest, Timings
from .failures import Failure, classify
from .json_types import JSON
from .limits import Limits, Termination, lost_before_answer, lost_on_reused_connection
from .network import DIRECT, PROXY_VARIABLE, Network
from .proxies import proxy_for
from .recorder import DEFAULT_LIMITS, open_session, record
from .redact import REDACTED, is_secret_header, redact_headers, redact_url

__all__ = [
    "AUTH_VARIABLE",
    "DEFAULT_LIMITS",
    "DIRECT",
    "JSON",
    "PROXY_VARIABLE",
    "REDACTED",
    "Exchange",
    "Failure",
    "Limits",
    "MemoryBudget",
    "Network",
    "RecordedRequest",
    "Termination",
    "Timings",
    "classify",
    "is_secret_header",
    "lost_before_answer",
    "lost_on_reused_connection",
    "open_session",
    "proxy_for",
    "record",
    "redact_headers",
    "redact_url",
    "secret_variable",
    "to_curl",
]
