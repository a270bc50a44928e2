"""The harness proves itself on the mock: clean passes everything, each fault fails its rules.

For every fault of ``python -m mockserver --list-faults`` and every wire it bends, the
whole catalog runs against the session's mock with the fault in ``X-Mock-Fault``: the rules
naming the fault (that apply to the profile and whose features it claims) FAIL (NON_STRICT for
SHOULD rules), and no other MUST rule FAILs and nothing ERRORs.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
from harness_support import FAST_LIMITS, not_passing, run_catalog

import spec
from conformance.model import Level, Verdict
from conformance.model.coverage import dangling_pointers
from conformance.rules import CATALOG, FUZZ_CHECKS
from conformance.target.embedded import EmbeddedMock
from conformance.transport import Limits

FAULTS = subprocess.run(
    [sys.executable, "-m", "mockserver", "--list-faults"],
    capture_output=True, text=True, check=True, timeout=60,
).stdout.split()

VALID = {"slow-drip": "bytes one at a time are valid SSE; clients must cope"}
"""Faults that bend the transport in ways the contract allows: nothing may fail."""

SLOW_SELECTION = ("SSE-*", "DET-001", "FINISH-*", "USAGE-003", "USAGE-004", "USAGE-005",
                  "CONTENT-TYPE-001", "IDENTITY-*")
PROFILES = spec.profile_names()
WIRES = sorted({spec.get_profile(name).wire for name in PROFILES})
"""Every shipped profile and every wire they use: new ones join the proofs below unlisted."""


def test_the_mock_lists_faults() -> None:
    assert len(FAULTS) >= 60 and "done-missing" in FAULTS


def test_each_wire_has_a_profile_of_its_own_name() -> None:
    """The strict profile of a wire is named after it: the fault proofs below run there."""
    assert all(spec.get_profile(wire).wire == wire for wire in WIRES)


@pytest.mark.parametrize("profile_name", PROFILES)
def test_the_clean_mock_passes_every_rule(
    served: Callable[[str], EmbeddedMock], profile_name: str
) -> None:
    url = served(profile_name).url_for(spec.get_profile(profile_name))
    result = run_catalog(url, profile_name)
    assert not_passing(result) == {}
    skipped = {r.rule.id: r.message for r in result.results if r.verdict is Verdict.SKIP}
    assert all("not claimed" in reason for reason in skipped.values()), skipped


RULES = [*CATALOG, *FUZZ_CHECKS]
"""The catalog and schemathesis' checks as the fuzzer reports them (FUZZ-NNN): both must fail
under their faults (tests/conformance/fuzz/test_fuzz_long.py proves the FUZZ ones)."""


def test_every_rule_names_a_fault() -> None:
    """Principle 1: every MUST and SHOULD rule can fail (a MAY rule would need no fault)."""
    bare = [r.id for r in RULES if r.level in (Level.MUST, Level.SHOULD) and not r.faults]
    assert bare == []


def test_every_named_fault_exists() -> None:
    unknown = {(r.id, f) for r in RULES for f in r.faults if f not in FAULTS}
    assert unknown == set()


def test_every_fault_is_named_or_valid() -> None:
    named = {f for r in RULES for f in r.faults}
    assert sorted(set(FAULTS) - named - set(VALID)) == []


LENIENT_FAULTS = sorted({
    fault
    for rule in CATALOG
    if {name for name in spec.profile_names()
        if rule.applies_to(spec.get_profile(name))} == {"openai-compatible"}
    for fault in rule.faults
})
"""Faults named by rules of the lenient profile only: checked against it as well."""


@pytest.mark.parametrize("fault", LENIENT_FAULTS)
def test_lenient_rules_fail_under_their_faults(
    mock: EmbeddedMock, mock_faults: dict[str, dict], fault: str
) -> None:
    check_fault(mock, mock_faults, fault, "openai", "openai-compatible")


def judged(fault: str, profile_name: str) -> bool:
    """Whether a rule of ``profile`` whose features it claims names ``fault``."""
    chosen = spec.get_profile(profile_name)
    return any(fault in rule.faults and rule.applies_to(chosen)
               and all(chosen.claims(feature) for feature in rule.features) for rule in CATALOG)


VLLM_FAULTS = sorted(fault for fault in FAULTS if judged(fault, "vllm")
                     and not judged(fault, "openai") and not judged(fault, "openai-compatible"))
"""Faults of vLLM's extensions on OpenAI's wire (``min_tokens``): judged under ``vllm``."""


@pytest.mark.parametrize("fault", VLLM_FAULTS)
def test_vllm_rules_fail_under_their_faults(
    served: Callable[[str], EmbeddedMock], mock_faults: dict[str, dict], fault: str
) -> None:
    check_fault(served("vllm"), mock_faults, fault, "openai", "vllm")


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_fails_exactly_its_rules(
    mock: EmbeddedMock, mock_faults: dict[str, dict], fault: str, wire: str
) -> None:
    if wire == "openai" and fault in VLLM_FAULTS:
        pytest.skip(f"{fault} bends vLLM's extensions on this wire: test_vllm_rules_fail_...")
    check_fault(mock, mock_faults, fault, wire, wire)


LENIENT_ALLOWS = {
    "logprobs-offsets-from-completion": "vLLM counts text_offset from the completion's start",
}
"""Faults that break the strict profiles but are what the openai-compatible profile allows."""


@pytest.mark.parametrize("fault", sorted(LENIENT_ALLOWS))
def test_what_the_lenient_profile_allows_fails_nothing_there(
    mock: EmbeddedMock, fault: str
) -> None:
    result = run_catalog(mock.url_for(spec.get_profile("openai-compatible")),
                         "openai-compatible", faults=[fault])
    assert not_passing(result) == {}


def check_fault(
    mock: EmbeddedMock, mock_faults: dict[str, dict], fault: str, wire: str, profile_name: str
) -> None:
    if wire not in mock_faults[fault]["wires"]:
        pytest.skip(f"{fault} does not apply to {wire}")
    select: tuple[str, ...] = ()
    limits = FAST_LIMITS
    if fault in VALID:
        select, limits = SLOW_SELECTION, Limits(total_time=60.0, idle_timeout=5.0)
    result = run_catalog(mock.url_for(spec.get_profile(profile_name)), profile_name,
                         faults=[fault], select=select, limits=limits)
    by_id = {r.rule.id: r for r in result.results}
    named = [
        r.rule.id for r in result.results
        if fault in r.rule.faults and "not claimed" not in r.message
    ]
    if fault not in VALID:
        assert named, f"no rule applicable to {profile_name} names {fault}"
    for rule_id in named:
        want = Verdict.FAIL if by_id[rule_id].rule.level is Level.MUST else Verdict.NON_STRICT
        assert by_id[rule_id].verdict is want, f"{rule_id}: {by_id[rule_id].message}"
    others = {
        r.rule.id: r.message for r in result.results
        if r.rule.id not in named
        and (r.verdict is Verdict.ERROR
             or (r.verdict is Verdict.FAIL and r.rule.level is Level.MUST))
    }
    assert others == {}
    if not select:
        assert dangling_pointers(result.results) == {}, "SKIPs pointing at no failure"
