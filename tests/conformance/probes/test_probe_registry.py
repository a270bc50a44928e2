"""The probe registry: one decorator registers a probe, a name taken twice is refused, and
the package finds every probe module without a list."""

from __future__ import annotations

import pkgutil

import pytest

import conformance.probes as probes_package
from conformance.probes import PROBES, ProbeRegistry, ProbeSession


async def _body(s: ProbeSession) -> None:
    """A probe body that sends nothing."""


def test_decorator_registers_and_returns_the_body() -> None:
    registry = ProbeRegistry()
    decorated = registry.probe("quiet", "sends nothing", features=("seed",), needs=("greedy",))(
        _body)
    assert decorated is _body  # probe bodies stay callable as they are
    probe = registry["quiet"]
    assert (probe.name, probe.run, probe.features, probe.needs) == (
        "quiet", _body, ("seed",), ("greedy",))
    assert list(registry) == ["quiet"] and len(registry) == 1


def test_a_name_taken_twice_is_refused() -> None:
    registry = ProbeRegistry()
    registry.probe("quiet", "first")(_body)
    with pytest.raises(ValueError, match="probe 'quiet' is registered twice"):
        registry.probe("quiet", "second")(_body)


def test_every_probe_module_is_found_without_a_list() -> None:
    """Each module of the package that defines probe bodies registered them on import."""
    modules = {module.name for module in pkgutil.iter_modules(probes_package.__path__)}
    registering = {PROBES[name].run.__module__.rsplit(".", 1)[-1] for name in PROBES}
    assert registering <= modules
    assert {"core", "errors", "extensions", "friendli", "params", "samplers_huggingface",
            "sampling_fields", "structured", "text"} <= registering


def test_every_needed_probe_is_registered() -> None:
    for probe in PROBES.values():
        assert set(probe.needs) <= set(PROBES), probe.name
