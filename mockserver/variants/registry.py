"""The variant registry: every variant registers itself under its kebab-case name.

Like the fault registry, it refuses duplicates and malformed entries at import time, so
``--list-variants``, the ``X-Mock-Variant`` header and the tests read one list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import Variant

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REGISTRY: dict[str, Variant] = {}


class UnknownVariantError(ValueError):
    """A variant name that is not registered; the message lists the valid ones."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        super().__init__(
            f"unknown variant {', '.join(map(repr, self.names))} (`mockserver "
            f"--list-variants` lists them); valid variants: {', '.join(sorted(_REGISTRY))}"
        )


def register(cls: type[Variant]) -> type[Variant]:
    """Class decorator: check the variant's shape and add one instance to the registry."""
    if not _NAME.match(cls.name):
        raise TypeError(f"{cls.__name__}: `name` must be kebab-case, got {cls.name!r}")
    if cls.name in _REGISTRY:
        raise ValueError(f"variant {cls.name!r} is registered twice")
    for attribute in ("imitates", "description"):
        if not getattr(cls, attribute).strip():
            raise TypeError(f"variant {cls.name!r} needs a one-line `{attribute}`")
    _REGISTRY[cls.name] = cls()
    return cls


def parse_variant_names(values: Iterable[str]) -> tuple[Variant, ...]:
    """Variants from names, each value possibly comma-separated (``a,b``); unknown names
    raise :class:`UnknownVariantError`."""
    names = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in _REGISTRY]
    if unknown:
        raise UnknownVariantError(unknown)
    return tuple(dict.fromkeys(_REGISTRY[name] for name in names))


def all_variants() -> tuple[Variant, ...]:
    """Every registered variant, sorted by name."""
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))
