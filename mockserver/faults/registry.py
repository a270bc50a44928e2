"""The fault registry: every fault class registers itself under its kebab-case name.

Like schemathesis' check registry, it refuses duplicates and malformed entries at import time,
so ``--list-faults``, ``GET /mock/faults`` and the harness's rule table all read one list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import HOOK_METHODS, Fault

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REGISTRY: dict[str, Fault] = {}


class UnknownFaultError(ValueError):
    """A fault name that is not registered; the message lists the valid ones."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        super().__init__(
            f"unknown fault {', '.join(map(repr, self.names))} (GET /mock/faults or "
            f"`mockserver --list-faults` lists them); valid faults: {', '.join(sorted(_REGISTRY))}"
        )


def register(cls: type[Fault]) -> type[Fault]:
    """Class decorator: check the fault's shape and add one instance to the registry."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise TypeError(f"{cls.__name__}: `name` must be kebab-case, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"fault {name!r} is registered twice")
    for attribute in ("description", "breaks"):
        if not getattr(cls, attribute, "").strip():
            raise TypeError(f"fault {name!r} needs a one-line `{attribute}`")
    if cls.hook not in HOOK_METHODS:
        raise TypeError(f"fault {name!r}: unknown hook {cls.hook!r}")
    overridden = [
        kind for kind, method in HOOK_METHODS.items()
        if getattr(cls, method) is not getattr(Fault, method)
    ]
    if overridden != [cls.hook]:
        raise TypeError(
            f"fault {name!r} declares hook {cls.hook!r} but overrides {overridden}: "
            "a fault has exactly one hook"
        )
    _REGISTRY[name] = cls()
    return cls


def get_fault(name: str) -> Fault:
    """The registered fault called ``name``; raises :class:`UnknownFaultError`."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownFaultError([name]) from None


def parse_fault_names(values: Iterable[str]) -> tuple[Fault, ...]:
    """Faults from names, each value possibly comma-separated (``a,b``); unknown names raise."""
    names = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in _REGISTRY]
    if unknown:
        raise UnknownFaultError(unknown)
    return tuple(dict.fromkeys(_REGISTRY[name] for name in names))


def all_faults() -> tuple[Fault, ...]:
    """Every registered fault, sorted by name."""
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))


def fault_names() -> list[str]:
    return sorted(_REGISTRY)
