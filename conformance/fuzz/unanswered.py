"""Which rule a fuzzed request that got no whole answer breaks: the rule that judges *that*
request.

``conformance run`` judges a request the server never wholly answered by what was asked: a
valid request fails ERRORS-008 ("valid requests get 2xx"; SSE-008 when a stream was cut short),
an invalid one fails the invalid-input rule of its kind (the recorded ``malformed-json ... got
HTTP None`` is ERRORS-001). The fuzzer sends both kinds, so it must tell them apart too.

Filing every unanswered request under ERRORS-008 / SSE-008 was a false alarm on a real defect,
found fuzzing the lab's Prism: it never answers a body that is not JSON (``\\0``), which the
report called "a valid request did not get 2xx"; and a non-ASCII unknown field name makes it
exit before answering, which the report called "the connection was dropped mid-stream" although
no stream had begun. Neither request was valid: both break "invalid input gets the profile's
4xx" (ERRORS-001), as ``conformance run`` says of the same behaviour.
"""

from __future__ import annotations

import spec
from conformance.contract.validity import classify
from conformance.transport import RecordedRequest

JSON_MEDIA = "application/json"

INVALID_RULES: dict[str, str] = {
    "schema": "ERRORS-001",
    "cross-field": "ERRORS-004",
    "limit": "ERRORS-007",
    "unknown-field": "ERRORS-009",
}
"""The invalid-input rule of each kind of invalid body, as ``conformance run`` files them
(:func:`conformance.rules.errors._status_rule`'s kinds); a malformed body is ERRORS-001's."""


def _media(request: RecordedRequest) -> str:
    value = next((value for name, value in request.headers if name.lower() == "content-type"),
                 "")
    return value.split(";")[0].strip().lower()


def unanswered_rule(request: RecordedRequest, *, streamed: bool, completions: bool,
                    profile: spec.Profile) -> str:
    """The rule ID a request that got no whole answer fails (see the module docstring).

    ``completions``: the request was sent to the profile's completions operation, with its
    method (the only operation whose bodies the contract judges). A body the
    contract rejects (none, not JSON, not sent as JSON, or invalid for ``profile``) fails the
    invalid-input rule of its kind; anything else, a valid request or one of another
    operation, fails ERRORS-008, or SSE-008 when it asked for a stream.
    """
    if completions:
        body = request.json()
        if body is None or _media(request) != JSON_MEDIA:
            return "ERRORS-001"  # malformed JSON, or a body the contract does not take
        rule = INVALID_RULES.get(classify(body, profile).kind)
        if rule is not None:
            return rule
    return "SSE-008" if streamed else "ERRORS-008"
