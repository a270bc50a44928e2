"""A deterministic mock of the OpenAI-compatible text Completions API and FriendliAI's
dedicated completions, on top of the reference engine: strict when asked, wrong in one named
way when asked (``mockserver.faults``).

::

    from mockserver import MockConfig, create_app
    app = create_app(MockConfig(api_keys=("sk-test",), faults=("usage-total-wrong",)))

``mockserver.wire`` is the pure wire layer: importing it (``python -m mockserver.render`` does)
must not import aiohttp, so the names below are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .config import MockConfig
    from .errors import ApiError

__all__ = ["ApiError", "MockConfig", "create_app"]
_HOMES = {"create_app": ".app", "MockConfig": ".config", "ApiError": ".errors"}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
