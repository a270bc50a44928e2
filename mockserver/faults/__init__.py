"""Faults: the mock, wrong in one named way when asked.

Each fault is a small object named after its defect, with one narrow hook (``base``),
registered by name (``registry``). A request's faults come from ``--fault``, the
``X-Mock-Fault`` header and ``chaos``; ``active`` applies them. Every other module of this
package is a catalog module, one per area of the contract, whose faults register themselves
on import: this package imports them all (in name order), so a new area is a new module and
no list here. ``GET /mock/faults`` and ``mockserver --list-faults`` list the faults.
"""

import importlib
import pkgutil

from .active import ActiveFaults
from .base import (
    HOOK_METHODS,
    AbortConnection,
    ErrorReply,
    Fault,
    FaultContext,
    HookKind,
    Verdict,
    Write,
)
from .chaos import Chaos
from .registry import (
    UnknownFaultError,
    all_faults,
    fault_names,
    get_fault,
    parse_fault_names,
    register,
)

__all__ = [
    "HOOK_METHODS",
    "AbortConnection",
    "ActiveFaults",
    "Chaos",
    "ErrorReply",
    "Fault",
    "FaultContext",
    "HookKind",
    "UnknownFaultError",
    "Verdict",
    "Write",
    "all_faults",
    "fault_names",
    "get_fault",
    "parse_fault_names",
    "register",
]

for _module in pkgutil.iter_modules(__path__):  # the catalog modules register their faults
    importlib.import_module(f"{__name__}.{_module.name}")
