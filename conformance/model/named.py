"""A name -> item registry that refuses a name taken twice: the one shape the probe and fuzz
binding registries share (the rule catalog is a :class:`~conformance.model.Registry`, keyed
by rule ID, with selection on top)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class NamedRegistry(Mapping[str, T], Generic[T]):
    """Items by name, in the order they registered; ``kind`` names them in errors."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
