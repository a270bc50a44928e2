"""schemathesis' own checks, as rule records of their own: what ``conformance fuzz`` judges
besides the catalog.

Each fuzzed exchange is judged by the catalog's rules that one exchange can judge and by six
checks of schemathesis, which read the exchange against the OpenAPI document the fuzzer
generates from (``spec.profile_document``). Those six get records here (ID, level, the
requirement, where it comes from, the mock faults that make them fail) so that a fuzz run
reports through the same result model and reporters as ``conformance run``. They live in their
own registry, :data:`FUZZ_CHECKS`, not in the catalog: they judge single fuzzed exchanges,
and ``conformance run`` has nothing for them to read. ``Rule.fuzz`` holds the schemathesis
check's name.

Source: https://schemathesis.readthedocs.io/en/stable/reference/checks/ and the responses of
each operation in ``spec/completions.yaml``.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Registry
from conformance.run.check_context import CheckContext

from .base import DOC, MUST, SPEC

FUZZ_CHECKS = Registry()
"""schemathesis' checks as rules (``FUZZ-NNN``), by the same registry rules the catalog keeps."""
CHECKS_DOC = "https://schemathesis.readthedocs.io/en/stable/reference/checks/"
RESPONSES = f"{DOC}#/paths/~1v1~1completions/post/responses"


def judged_while_fuzzing(ctx: CheckContext) -> None:
    """The check of every record here: schemathesis judges these, during ``conformance fuzz``."""
    raise NotApplicable("judged by schemathesis during conformance fuzz")


def _record(rule_id: str, check: str, title: str, requirement: str, *faults: str) -> None:
    FUZZ_CHECKS.rule(
        rule_id, MUST, title, requirement=requirement,
        citation=f"{CHECKS_DOC} ({check}); {RESPONSES}", source=SPEC, faults=faults,
        fuzz=check,
    )(judged_while_fuzzing)


_record("FUZZ-001", "not_a_server_error", "No request gets a server error",
        "No fuzzed request, valid or not, is answered with a 5xx status.",
        "invalid-input-500")
_record("FUZZ-002", "response_schema_conformance", "Responses match the documented schema",
        "Every response body matches the schema the document gives its status and media type.",
        "field-wrong-type")
_record("FUZZ-003", "negative_data_rejection", "Requests the schema forbids are rejected",
        "A request the document's schema rejects is answered with a 4xx status.",
        "invalid-input-200")
_record("FUZZ-004", "positive_data_acceptance", "Requests the schema allows are accepted",
        "A request the document's schema and cross-field rules allow is answered 2xx.",
        "best-of-equal-n-rejected", "token-prompt-rejected")
_record("FUZZ-005", "content_type_conformance", "Responses have a documented media type",
        "Every response's Content-Type is one the document lists for its status.",
        "content-type-json-wrong")
_record("FUZZ-006", "status_code_conformance", "Responses have a documented status",
        "Every response's status is one the document lists for the operation.",
        "invalid-input-500")

BY_CHECK: dict[str, str] = {rule.fuzz: rule.id for rule in FUZZ_CHECKS if rule.fuzz}
"""The record of each schemathesis check, by the check's name."""
