"""Probes: the named requests the rules read (see :mod:`conformance.probes.model`)."""

from __future__ import annotations

from . import core, errors, friendli, params, samplers, structured, text
from .model import Probe, ProbeOutcome, ProbeSession

PROBES: dict[str, Probe] = {
    probe.name: probe
    for module in (core, text, params, errors, friendli, structured, samplers)
    for probe in module.PROBES
}


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
