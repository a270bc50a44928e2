"""Refused is not judged: answers that say nothing about the behaviour a rule requires.

A server that refuses a request as a whole (the credentials, the path, the rate, its own
availability, or no answer at all) has shown nothing of how it completes text, streams or
counts tokens. A rule whose exchanges were all refused SKIPs naming the refusal; it never
PASSes. Only ERRORS-008 ("valid requests get 2xx") judges a refused valid request itself.

A valid request the server failed (a 5xx, or a 4xx that is about neither the request's form nor
the caller: 405, 409, 410, ...) is refused too, but it is a deviation, and one rule owns it:
ERRORS-008 fails it, a case each, and every other rule that needed its answer SKIPs naming
ERRORS-008, MUST and SHOULD alike (one cause, one finding). A status about the request's form
(400, 413, 415, 422, ...) is the server saying what it does not take: the rule that needed the
answer fails it, naming the feature (a server without prompt lists fails their rules).

The refusals (RFC 9110 section 15.5.2, 15.5.4, 15.5.5, 15.6.4; RFC 6585 section 4):

- 401 / 403: the API key (or its rights) was refused;
- 404 on the completions operation: the path or the model does not exist there;
- 429 / 503 after the run's retries: rate limited, or unavailable;
- no answer: the connection could not be made, or closed before a status line;
- a valid request failed (:data:`Refusal.FAILED`, ERRORS-008's): see above.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable

from conformance.transport import Exchange, Termination


class Refusal(str, enum.Enum):
    """How a server refused a request as a whole."""

    AUTH = "auth"
    NOT_FOUND = "not-found"
    RATE_LIMITED = "rate-limited"
    UNAVAILABLE = "unavailable"
    NO_ANSWER = "no-answer"
    FAILED = "failed"
    """A valid request answered with a status that fails it (:func:`failed_valid`)."""

    def __str__(self) -> str:
        return self.value


def retries_phrase(retries: int) -> str:
    """``1 retry``, ``3 retries``."""
    return f"{retries} {'retry' if retries == 1 else 'retries'}"


AUTH_STATUSES = frozenset({401, 403})
RETRY_LATER = frozenset({429, 503})
"""Answers that say "not now", not "no": the client retries them first."""
FORM_STATUSES = frozenset({400, 411, 413, 414, 415, 422, 431})
"""4xx statuses about the request's form (RFC 9110 section 15.5.1 Bad Request, 15.5.12 Length
Required, 15.5.14 Content Too Large, 15.5.15 URI Too Long, 15.5.16 Unsupported Media Type,
15.5.21 Unprocessable Content; RFC 6585 section 5): the server says what it does not take in
this request, which the rule needing the answer judges."""


def failed_valid(status: int | None) -> bool:
    """Whether ``status``, the answer to a valid request, fails it without being a refusal of
    the caller (401 / 403 / 404 / 429 / 503) or a word about the request's form
    (:data:`FORM_STATUSES`): a 5xx, or another 4xx. ERRORS-008 judges it alone."""
    if status is None or status in AUTH_STATUSES or status in RETRY_LATER or status == 404:
        return False
    return status >= 500 or (400 <= status < 500 and status not in FORM_STATUSES)


def refusal_of(exchange: Exchange, *, operation: bool = True,
               valid: bool = False) -> Refusal | None:
    """The refusal ``exchange`` is, or None when it is an answer to judge. ``operation``: the
    request went to the completions operation (there a 404 refuses it; elsewhere, a missing
    model listing say, a 404 is the answer a rule judges). ``valid``: a valid request of that
    operation, which a status of :func:`failed_valid` fails (:data:`Refusal.FAILED`)."""
    status = exchange.status
    if status is None:
        if exchange.termination in (Termination.CONNECT_ERROR, Termination.CONNECTION_ERROR):
            return Refusal.NO_ANSWER
        return None  # a limit of the harness ended it: the rule about limits judges that
    if status in AUTH_STATUSES:
        return Refusal.AUTH
    if status == 429:
        return Refusal.RATE_LIMITED
    if status == 503:
        return Refusal.UNAVAILABLE
    if status == 404 and operation:
        return Refusal.NOT_FOUND
    if valid and operation and failed_valid(status):
        return Refusal.FAILED
    return None


def describe(refusal: Refusal, exchange: Exchange, *, retries: int | None = None) -> str:
    """A short phrase for one refused exchange: ``API key refused (HTTP 401)``, ``rate limited
    (429) after 3 retries``."""
    after = f" after {retries_phrase(retries)}" if retries is not None else ""
    if refusal is Refusal.NO_ANSWER:
        judged = (", judged by ERRORS-008"
                  if exchange.termination is Termination.CONNECTION_ERROR else "")
        return f"no answer ({exchange.failure or exchange.termination}{judged})"
    if refusal is Refusal.RATE_LIMITED:
        return f"rate limited (429){after}"
    if refusal is Refusal.UNAVAILABLE:
        return f"unavailable (503){after}"
    if refusal is Refusal.AUTH:
        return f"API key refused (HTTP {exchange.status})"
    if refusal is Refusal.FAILED:
        return f"a valid request failed (HTTP {exchange.status}, judged by ERRORS-008)"
    return f"no such path or model (HTTP {exchange.status})"


NOT_JUDGED = "refused, not judged"
RATE_LIMIT_HINT = "lower --concurrency or raise --retries"


def summary(refused: Iterable[tuple[str, Exchange, Refusal]], *,
            retries: int | None = None) -> str:
    """Why a rule judged nothing: each kind of refusal with its count and first exchange,
    plus what to do about a rate limit."""
    tally: Counter[str] = Counter()
    first: dict[str, str] = {}
    rate_limited = False
    for label, exchange, refusal in refused:
        phrase = describe(refusal, exchange, retries=retries)
        tally[phrase] += 1
        first.setdefault(phrase, label)
        rate_limited = rate_limited or refusal is Refusal.RATE_LIMITED
    if not tally:
        return "nothing to judge: no exchange it reads was answered"
    parts = [f"{phrase} x{count} (first {first[phrase]})" if count > 1
             else f"{phrase} ({first[phrase]})" for phrase, count in tally.items()]
    hint = f": {RATE_LIMIT_HINT}" if rate_limited else ""
    return f"{NOT_JUDGED}: {'; '.join(parts)}{hint}"
