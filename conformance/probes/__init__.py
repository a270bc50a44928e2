"""Probes: the named requests the rules read (see :mod:`conformance.probes.model`)."""

from __future__ import annotations

from types import ModuleType

from . import (
    core,
    errors,
    extensions,
    friendli,
    params,
    samplers,
    sampling_fields,
    structured,
    text,
)
from .model import Probe, ProbeOutcome, ProbeSession


def _registry(*modules: ModuleType) -> dict[str, Probe]:
    """Every module's probes by name, in module order; a name taken twice is an error at
    import (as the rule catalog and the fault registry refuse duplicates)."""
    probes: dict[str, Probe] = {}
    for module in modules:
        for probe in module.PROBES:
            if probe.name in probes:
                raise ValueError(f"probe {probe.name!r} is registered twice")
            probes[probe.name] = probe
    return probes


PROBES = _registry(core, text, params, errors, friendli, structured, samplers, extensions,
                   sampling_fields)


def probe_closure(names: set[str]) -> list[str]:
    """``names`` and every probe they need, dependencies first, in catalog order."""
    wanted: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in PROBES:
            raise KeyError(f"unknown probe {name!r}")
        wanted.add(name)
        pending.extend(PROBES[name].needs)
    return [name for name in PROBES if name in wanted]


__all__ = ["PROBES", "Probe", "ProbeOutcome", "ProbeSession", "probe_closure"]
