"""One cause, one finding: a valid request the server fails is ERRORS-008's alone.

llama-cpp-python answers 500 to prompt lists: ERRORS-008 listed the refused requests, and every
rule of prompt lists failed again (INDICES-003, USAGE-007) or went NON_STRICT (INDICES-004),
each "refused with HTTP 500 (a valid request, see ERRORS-008)". Here a gatekeeper before the
mock refuses the prompt lists alike: with a 5xx or a 4xx about neither the form nor the caller,
ERRORS-008 fails with a case per refused request and every rule that needed them SKIPs naming
it, MUST and SHOULD alike; with a 400 (the server says it does not take prompt lists) the
rules of prompt lists fail, naming the feature ``--no-feature`` would disclaim.
"""

from __future__ import annotations

import json

import pytest
from first_contact_support import Refuse, catalog, gatekeeper

from conformance.model import Verdict
from conformance.model.coverage import dangling_pointers
from conformance.target.embedded import EmbeddedMock

PROMPT_LIST_RULES = {"INDICES-003", "INDICES-004", "USAGE-007"}


def _prompt_lists(status: int) -> Refuse:
    """Refuse every completion request whose prompt is a list of strings with ``status``."""
    error = {"error": {"message": "prompt lists are not supported", "type": "server_error",
                       "param": None, "code": None}}

    def refuse(path: str, body: bytes) -> tuple[int, object] | None:
        try:
            prompt = json.loads(body).get("prompt") if body else None
        except ValueError:
            return None
        if path.endswith("/completions") and isinstance(prompt, list) and len(prompt) > 1 \
                and all(isinstance(each, str) for each in prompt):
            return status, error
        return None
    return refuse


@pytest.mark.parametrize("status", [500, 502, 409])
def test_a_valid_request_the_server_fails_is_one_finding(mock: EmbeddedMock,
                                                         status: int) -> None:
    with gatekeeper(mock, _prompt_lists(status)) as (url, gate):
        result = catalog(url)
    assert gate.refused > 0
    verdicts = {r.rule.id: r for r in result.results}
    not_passing = {rule: r.verdict for rule, r in verdicts.items()
                   if r.verdict in (Verdict.FAIL, Verdict.NON_STRICT, Verdict.ERROR)}
    assert not_passing == {"ERRORS-008": Verdict.FAIL}, {
        rule: verdicts[rule].message[:160] for rule in not_passing}
    errors = verdicts["ERRORS-008"]
    # a case per refused request
    assert len(errors.findings) == errors.message.count(f"({status})") == gate.refused
    for rule in PROMPT_LIST_RULES:
        assert verdicts[rule].verdict is Verdict.SKIP, verdicts[rule].message
        assert f"a valid request failed (HTTP {status}, judged by ERRORS-008)" in (
            verdicts[rule].message)
    assert dangling_pointers(result.results) == {}


def test_a_valid_request_rejected_for_its_form_fails_the_rule_that_needed_it(
        mock: EmbeddedMock) -> None:
    with gatekeeper(mock, _prompt_lists(400)) as (url, _):
        result = catalog(url)
    verdicts = {r.rule.id: r for r in result.results}
    for rule in PROMPT_LIST_RULES:
        assert verdicts[rule].verdict in (Verdict.FAIL, Verdict.NON_STRICT), verdicts[rule]
        assert "--no-feature" in verdicts[rule].message
    assert verdicts["ERRORS-008"].verdict is Verdict.FAIL
