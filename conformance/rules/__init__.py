"""The rule catalog: one module per area, every rule registered in :data:`CATALOG`.

Importing this package imports every area module, so ``CATALOG`` is complete; IDs are stable
(``AREA-NNN``, never renumbered or reused) and the registry refuses duplicates.
"""

from __future__ import annotations

from . import (  # noqa: F401 - imported for their registrations
    content_type,
    determinism,
    echo,
    errors,
    extensions,
    finish,
    friendli,
    identity,
    indices,
    logprobs,
    models,
    params,
    samplers,
    sampling_fields,
    schema,
    schemathesis_checks,
    sse,
    stop,
    structured_outputs,
    usage,
)
from .base import CATALOG
from .schemathesis_checks import FUZZ_CHECKS

__all__ = ["CATALOG", "FUZZ_CHECKS"]
