"""Bindings (what a rule's ``fuzz`` names) register by decorator, a shape taken twice is
refused, and a rule naming a binding nobody registered is refused as the rule registers."""

from __future__ import annotations

import pytest

from conformance.bindings.binders import BINDERS, binder, binder_for
from conformance.model import Level, NamedRegistry, Registry, SourceKind
from conformance.rules import CATALOG
from conformance.run.check_context import CheckContext


def _check(ctx: CheckContext) -> None:
    """A check that never fails (the registry is what is tested)."""


def _register(registry: Registry, fuzz: str | None) -> None:
    registry.rule("TEST-001", Level.MUST, "A title", requirement="A requirement.",
                  citation="spec/completions.yaml", source=SourceKind.SPEC, fuzz=fuzz)(_check)


def test_every_rule_binding_is_a_registered_binder() -> None:
    bound = [rule for rule in CATALOG if rule.fuzz is not None]
    assert bound
    for rule in bound:
        assert rule.fuzz is not None and binder_for(rule) is BINDERS[rule.fuzz]


def test_a_shape_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="fuzz binding 'logprobs' is registered twice"):
        binder("logprobs")(lambda sample: None)


def test_a_rule_naming_an_unknown_binding_is_refused_as_it_registers() -> None:
    registry = Registry(fuzz_bindings=BINDERS)
    with pytest.raises(ValueError, match="TEST-001 names the fuzz binding 'logprob', which no "
                                         "binder registers"):
        _register(registry, "logprob")
    _register(registry, "logprobs")  # a registered one is taken
    assert registry.get("TEST-001").fuzz == "logprobs"


def test_a_registry_without_bindings_takes_any_name() -> None:
    """schemathesis' own checks name schemathesis checks, not bindings."""
    registry = Registry()
    _register(registry, "not_a_server_error")
    assert registry.get("TEST-001").fuzz == "not_a_server_error"


def test_named_registry_says_what_is_unknown() -> None:
    registry: NamedRegistry[int] = NamedRegistry("widget")
    registry.add("one", 1)
    with pytest.raises(KeyError, match="unknown widget 'two'"):
        registry["two"]
