"""The catalog as records: stable IDs, sources, coverage of every researched bug class."""

from __future__ import annotations

import re
from pathlib import Path

import spec
from conformance.probes import PROBES
from conformance.rules import CATALOG

BUG_CLASSES = Path(__file__).parents[3] / "docs" / "bug-classes.md"

STABLE_IDS = """
CONTENT-TYPE-001 CONTENT-TYPE-002 CONTENT-TYPE-003 DET-001 DET-002 DET-003 DET-004 DET-005
ECHO-001 ECHO-002 ECHO-003 ECHO-004 ECHO-005 ERRORS-001 ERRORS-002 ERRORS-003 ERRORS-004
ERRORS-005 ERRORS-006 ERRORS-007 FINISH-001 FINISH-002 FINISH-003 FINISH-004 FINISH-005
FRIENDLI-001 FRIENDLI-002 FRIENDLI-003 FRIENDLI-004 FRIENDLI-005 FRIENDLI-006 IDENTITY-001
IDENTITY-002 IDENTITY-003 IDENTITY-004 INDICES-001 INDICES-002 INDICES-003 INDICES-004
LOGPROBS-001 LOGPROBS-002 LOGPROBS-003 LOGPROBS-004 LOGPROBS-005 LOGPROBS-006 LOGPROBS-007
LOGPROBS-008 LOGPROBS-009 MODELS-001 MODELS-002 PARAMS-001 PARAMS-002 PARAMS-003 PARAMS-004
PARAMS-005 PARAMS-006 PARAMS-007 SCHEMA-001 SSE-001 SSE-002 SSE-003 SSE-004 SSE-005 SSE-006
SSE-007 SSE-008 SSE-009 STOP-001 STOP-002 STOP-003 USAGE-001 USAGE-002 USAGE-003 USAGE-004
USAGE-005 USAGE-006 USAGE-007 USAGE-008 USAGE-009 USAGE-010 USAGE-011 USAGE-012
""".split()
"""IDs are never renumbered or reused: every ID ever published stays in the catalog."""


def test_published_ids_stay() -> None:
    assert sorted(set(STABLE_IDS) - {r.id for r in CATALOG}) == []


def test_every_rule_cites_a_source() -> None:
    sources = ("spec/", "WHATWG", "OpenAI", "docs/bug-classes.md")
    for rule in CATALOG:
        assert any(s in rule.citation for s in sources), rule.id
        assert "shared/" not in rule.citation, f"{rule.id} cites outside the repository"
        assert rule.requirement.endswith((".", ")")) and len(rule.title) < 70, rule.id


def test_every_bug_class_is_covered_and_every_cited_class_exists() -> None:
    text = BUG_CLASSES.read_text(encoding="utf-8")
    classes = {int(n) for n in re.findall(r"^\*\*(\d+)\. ", text, flags=re.M)}
    assert classes == set(range(1, 35))
    cited = {
        int(n)
        for rule in CATALOG
        if "bug-classes.md" in rule.citation
        for n in re.findall(r"#(\d+)", rule.citation.split("bug-classes.md", 1)[1])
    }
    assert sorted(classes - cited) == []
    assert sorted(cited - classes) == []


def test_rules_read_known_probes_and_features() -> None:
    features = set(spec.all_features())
    for rule in CATALOG:
        assert set(rule.probes) <= set(PROBES), rule.id
        assert set(rule.features) <= features, rule.id


def test_probes_use_known_features() -> None:
    features = set(spec.all_features())
    for probe in PROBES.values():
        assert set(probe.features) <= features and set(probe.needs) <= set(PROBES), probe.name


def test_every_profile_has_rules() -> None:
    for profile in spec.profiles().values():
        assert len(CATALOG.select(profile=profile)) > 50


def test_the_harness_never_imports_the_mock_or_the_engine() -> None:
    import subprocess
    import sys

    modules = ("conformance.cli", "conformance.run.runner", "conformance.rules",
               "conformance.probes", "conformance.reporting", "conformance.pytest_plugin.support")
    code = (f"import importlib, sys; [importlib.import_module(m) for m in {modules!r}]; "
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('mockserver', 'reference_engine')])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == "[]"
