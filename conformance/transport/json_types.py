"""The ``JSON`` type: what ``json.loads`` returns and ``json.dumps`` accepts."""

from __future__ import annotations

from typing import Union

JSON = Union[dict[str, "JSON"], list["JSON"], str, int, float, bool, None]  # noqa: UP007
