"""A fuzzed request the server fails with a 5xx is held to the error envelope (ERRORS-011).

The fuzzer judges each exchange by every scan rule, so a gateway whose upstream fails one kind
of request answers with its own page (``{"html-message": ...}``), and fuzzing finds it where the
run's probes never sent that kind: a NON_STRICT of ERRORS-011 under ``--strict``."""

from __future__ import annotations

import json

from fuzz_support import MODEL, completion, sample, settings

from conformance.fuzz.bodies import Caps
from conformance.fuzz.checks import FuzzRun, judge, select_rules
from conformance.rules import CATALOG

BODY = {"model": MODEL, "prompt": "Hi there", "max_tokens": 3}
RULE = CATALOG.get("ERRORS-011")


def _run() -> FuzzRun:
    chosen = settings("openai")
    return FuzzRun(chosen, select_rules(chosen, strict=True), Caps(),
                   operations={"POST /v1/completions": "completions"})


def test_a_gateway_page_for_a_5xx_is_found() -> None:
    fuzz = _run()
    page = json.dumps({"html-message": "connect ECONNREFUSED 127.0.0.1:8000"}).encode()
    violation = judge(RULE, fuzz, sample(BODY, page, status=500))
    assert violation is not None and "not the error envelope" in violation.message


def test_an_enveloped_5xx_and_an_answer_pass() -> None:
    fuzz = _run()
    envelope = json.dumps({"error": {"message": "upstream down", "type": "server_error",
                                     "param": None, "code": None}}).encode()
    assert judge(RULE, fuzz, sample(BODY, envelope, status=502)) is None
    assert judge(RULE, fuzz, sample(BODY, json.dumps(completion("ab")).encode())) is None
    assert fuzz.judged.get("ERRORS-011") == 2
