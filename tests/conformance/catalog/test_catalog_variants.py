"""No rule fails a valid rendering: the whole catalog against every variant of the mock.

A variant (``python -m mockserver --list-variants``, chosen here per request with the
``X-Mock-Variant`` header) writes the answer as a real server does and the contract allows
(issue 37, part 4): a rule that fails one is a false alarm. By default each variant runs on
one profile (they take turns); the ``slow`` run covers every profile with every variant.
A profile that forbids a variant outright (``NOT_ALLOWED``) fails exactly the rules saying so.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
from harness_support import not_passing, run_catalog

import spec
from conformance.target.embedded import EmbeddedMock

VARIANTS = [
    line.split("\t", 1)[0]
    for line in subprocess.run(
        [sys.executable, "-m", "mockserver", "--list-variants"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()
]
PROFILES = spec.profile_names()
NOT_ALLOWED = {
    ("null-usage-absent", "openai"): {"USAGE-011": "FAIL"},
}
"""Variants a profile forbids, with the rules that say so: the strict ``openai`` profile
requires ``"usage": null`` on every other chunk (``stream.usage_key_on_chunks: "null"``,
after OpenAI's text), which the other profiles relax."""


def test_the_mock_lists_the_variants_of_issue_37() -> None:
    assert {"finish-on-last-token", "usage-every-chunk", "no-space-after-colon", "crlf",
            "comments", "split-utf8-held", "empty-text-chunks", "null-usage-absent",
            "extra-fields"} <= set(VARIANTS)


def check_variant(served: Callable[[str], EmbeddedMock], variant: str, profile_name: str) -> None:
    mock = served(profile_name)
    result = run_catalog(mock.url_for(spec.get_profile(profile_name)), profile_name,
                         headers=[("X-Mock-Variant", variant)])
    expected = NOT_ALLOWED.get((variant, profile_name), {})
    assert {rule: text.split(":", 1)[0] for rule, text in not_passing(result).items()} == \
        expected, not_passing(result)


@pytest.mark.parametrize(
    ("variant", "profile_name"),
    [(variant, PROFILES[at % len(PROFILES)]) for at, variant in enumerate(VARIANTS)],
)
def test_a_variant_fails_no_rule(served: Callable[[str], EmbeddedMock], variant: str,
                                 profile_name: str) -> None:
    check_variant(served, variant, profile_name)


@pytest.mark.slow
@pytest.mark.parametrize("profile_name", PROFILES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_fails_no_rule_on_any_profile(
    served: Callable[[str], EmbeddedMock], variant: str, profile_name: str
) -> None:
    check_variant(served, variant, profile_name)


@pytest.mark.parametrize("profile_name", ["openai", "openai-compatible"])
def test_openai_repeated_length_finish_is_judged_not_skipped(
    served: Callable[[str], EmbeddedMock], profile_name: str
) -> None:
    """OpenAI's stream cut by max_tokens repeats its ``length`` on one more empty chunk
    (issue 49): the determinism rules judge it (they skipped it as "a chunk after its finish
    chunk" before), and FINISH-002 passes it."""
    url = served(profile_name).url_for(spec.get_profile(profile_name))
    result = run_catalog(url, profile_name,
                         headers=[("X-Mock-Variant", "finish-repeated-on-length")])
    verdicts = {r.rule.id: (r.verdict.value, r.message) for r in result.results}
    for rule_id in ("FINISH-002", "FINISH-004", "DET-001", "DET-002", "DET-004", "DET-005",
                    "USAGE-005", "USAGE-006"):
        assert verdicts[rule_id][0] == "PASS", (rule_id, verdicts[rule_id])
    repeated = [label for label, exchange in result.exchanges.items() if exchange.is_sse
                and exchange.body.count(b'"finish_reason":"length"') == 2]
    assert repeated, "no stream of the run ended by length"
