"""A fast "is it valid?" for the profile schemas, before the slow "why not?".

``jsonschema`` explains every error and is the validator whose verdict counts; it is also slow,
and a fuzz run asks it about every body and every chunk. ``jsonschema_rs`` (a dependency of
schemathesis) answers "valid" about fifty times faster. It validates ``format`` keywords that
``jsonschema`` ignores, so it can only be stricter: when it says "valid", so would
``jsonschema``; when it says "invalid", the caller asks ``jsonschema`` why (and may find that
nothing is wrong). Without ``jsonschema_rs``, :func:`surely_valid` always answers False.
"""

from __future__ import annotations

import functools
from typing import Any

import spec
from spec import JSON

jsonschema_rs: Any
try:
    import jsonschema_rs
except ImportError:  # pragma: no cover - schemathesis brings it
    jsonschema_rs = None


@functools.cache
def _validator(profile_name: str, role: str) -> Any:
    if jsonschema_rs is None:
        return None
    schema = spec.get_profile(profile_name).schema(role)  # type: ignore[arg-type]
    return jsonschema_rs.Draft202012Validator(schema)


def surely_valid(profile_name: str, role: str, value: JSON) -> bool:
    """True when ``value`` is valid for the ``role`` schema of the profile ``profile_name``
    (False: ask jsonschema)."""
    validator = _validator(profile_name, role)
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(value))
    except Exception:  # values jsonschema_rs cannot read (lone surrogates, huge integers)
        return False
