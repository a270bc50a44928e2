"""The run's hooks: what is sent, and which of schemathesis' data failures stand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fuzz_support import settings
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as settings_
from hypothesis import strategies as st
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.openapi.checks import RejectedPositiveData

from conformance.fuzz.bodies import Caps
from conformance.fuzz.checks import FuzzRun, attach, detach, select_rules
from conformance.fuzz.document import fuzz_document
from conformance.fuzz.hooks import filter_failure, flatmap_body, map_case, prepare_body


@pytest.fixture
def friendli() -> Iterator[tuple[schemathesis.APIOperation, FuzzRun]]:
    chosen = settings("friendli", headers=(("X-Friendli-Team", "mine"),))
    run = FuzzRun(chosen, select_rules(chosen, strict=False), Caps(max_tokens=4),
                  operations={"POST /completions": "completions"})
    schema = schemathesis.openapi.from_dict(fuzz_document("friendli"))
    attach(schema, run)
    yield schema["/completions"]["POST"], run
    detach(schema)


def test_a_valid_body_is_capped_and_made_servable(friendli: tuple) -> None:
    _, run = friendli
    sent = prepare_body({"model": "x", "tokens": [9000], "n": 9, "seed": [1]}, run)
    assert sent == {"model": "reference-ngram", "tokens": [9000 % 256], "n": 2, "seed": [1, 1],
                    "max_tokens": 4}


def test_an_invalid_body_is_capped_and_stays_invalid(friendli: tuple) -> None:
    _, run = friendli
    sent = prepare_body({"model": "x", "tokens": [1], "temperature": "hot", "max_tokens": 99},
                        run)
    assert sent["max_tokens"] == 4 and sent["temperature"] == "hot"
    assert sent["model"] == "reference-ngram"


def test_an_invalid_body_is_also_drawn_streamed_and_still_invalid(friendli: tuple) -> None:
    operation, _ = friendli
    context = schemathesis.HookContext(operation=operation)
    invalid = {"model": "x", "tokens": [1], "temperature": "hot"}
    drawn = find_all(flatmap_body(context, invalid))
    assert drawn == [invalid, {**invalid, "stream": True}]
    # not when streaming would make it valid, nor when it says how to stream already
    lone_options = {"model": "x", "tokens": [1], "stream_options": {"include_usage": True}}
    assert find_all(flatmap_body(context, {**lone_options, "stream": False})) == [
        {**lone_options, "stream": False}]
    assert find_all(flatmap_body(context, {**invalid, "stream": "yes"})) == [
        {**invalid, "stream": "yes"}]


def find_all(strategy: st.SearchStrategy[object]) -> list[object]:
    """Every value ``strategy`` draws, in the order of its choices (small strategies only)."""
    seen: list[object] = []

    @settings_(max_examples=50, database=None, phases=[Phase.generate],
               suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: object) -> None:
        if value not in seen:
            seen.append(value)

    collect()
    return sorted(seen, key=len)  # type: ignore[arg-type]


def test_generated_routing_headers_are_dropped(friendli: tuple) -> None:
    operation, _ = friendli
    case = operation.Case(body={"model": "m", "tokens": [1]}, media_type="application/json",
                          headers={"X-Friendli-Team": "made-up", "Authorization": "Bearer x"})
    map_case(schemathesis.HookContext(operation=operation), case)
    assert not case.headers


@pytest.mark.parametrize(("body", "failure", "stands"), [
    ({"model": "m", "tokens": [1], "temperature": 9}, "negative", True),
    ({"model": "m", "tokens": [1], "n": 2, "seed": [1]}, "negative", True),
    ({"model": "m", "tokens": [1]}, "negative", False),
    ({"model": "m", "tokens": [1], "frobnicate": 1}, "negative", False),
    ({"model": "reference-ngram", "tokens": [1]}, "positive", True),
    ({"model": "reference-ngram", "tokens": [1], "n": 2, "seed": [1]}, "positive", False),
    # a model the run does not test may be refused with an unknown-model status (LiteLLM: 400)
    ({"model": "other", "tokens": [1]}, "positive-404", False),
    ({"model": "reference-ngram", "tokens": [1]}, "positive-404", True),
])
def test_data_failures_are_judged_on_the_body_sent(friendli: tuple, body: dict, failure: str,
                                                   stands: bool) -> None:
    operation, _ = friendli
    case = operation.Case(body=body, media_type="application/json")
    if failure == "negative":
        raised = AcceptedNegativeData(operation=operation.label, message="m", status_code=200,
                                      expected_statuses=["422"])
    else:
        status = 404 if failure == "positive-404" else 422
        raised = RejectedPositiveData(operation=operation.label, message="m", status_code=status,
                                      allowed_statuses=["2xx"])
    context = schemathesis.HookContext(operation=operation)
    assert filter_failure(context, raised, case, None) is stands  # type: ignore[arg-type]
