"""Probes: the named requests the rules read (see :mod:`conformance.probes.model`).

Every other module of this package is a probe module, one per area of the contract, whose
probes register themselves on import (:mod:`.registry`): this package imports them all, in
name order, so a new area is a new module and no list here.
"""

from __future__ import annotations

import importlib
import pkgutil

from .model import Probe, ProbeOutcome, ProbeSession
from .registry import PROBES, ProbeRegistry, probe

for _module in pkgutil.iter_modules(__path__):  # the probe modules register their probes
    importlib.import_module(f"{__name__}.{_module.name}")


def probe_closure(names: set[str]) -> list[str]:
    """``names`` and every probe they need, in registry order (the runner awaits each
    probe's needs before it starts)."""
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


__all__ = ["PROBES", "Probe", "ProbeOutcome", "ProbeRegistry", "ProbeSession", "probe",
           "probe_closure"]
