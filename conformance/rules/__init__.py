"""The rule catalog: one module per area, every rule registered in :data:`CATALOG`.

Every other module of this package is an area module whose rules register themselves on
import (:mod:`.base`): this package imports them all, in name order, so ``CATALOG`` is
complete and a new area is a new module and no list here. IDs are stable (``AREA-NNN``, never
renumbered or reused) and the registry refuses duplicates.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import CATALOG
from .schemathesis_checks import FUZZ_CHECKS

for _module in pkgutil.iter_modules(__path__):  # the area modules register their rules
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["CATALOG", "FUZZ_CHECKS"]
