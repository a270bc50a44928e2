"""Conformance harness for OpenAI-compatible text Completions servers, tested over real HTTP.

The public API, re-exported lazily (the pytest plugin imports this package in every pytest
run, so importing it must stay cheap)::

    from conformance import CATALOG, Settings, execute
    result = asyncio.run(execute(settings, CATALOG.select(profile=settings.profile)))

Layout: ``sse`` and ``transport`` read the wire; ``probes`` send the named requests;
``rules`` judge them (pure checks, one module per area); ``run`` ties both together (its
settings, the context a check reads, the runner); ``target`` opens the server under test (or the
embedded mock); ``contract`` says what the profile makes of a request body; ``bindings`` file
one fuzzed (``fuzz``) or recorded (``judge``) exchange where a rule reads it; ``reporting``
writes what a run found; ``cli`` and ``pytest_plugin`` are the entry points. Beside the packages
sit only what every part shares: ``client`` (the one way to send), ``errors`` (the two ways a
run ends early) and ``wire_json`` (the one JSON parser of the server's bytes).
The harness never imports ``mockserver`` or ``reference_engine``: it talks HTTP only.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CATALOG": "conformance.rules",
    "Settings": "conformance.run.settings",
    "execute": "conformance.run.runner",
    "RunResult": "conformance.model",
    "RuleResult": "conformance.model",
    "Rule": "conformance.model",
    "Verdict": "conformance.model",
    "Level": "conformance.model",
    "EmbeddedMock": "conformance.target.embedded",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
