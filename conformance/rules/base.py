"""The catalog every rule module registers into, and the names rule modules share."""

from __future__ import annotations

from conformance.bindings.binders import BINDERS
from conformance.model import Level, Registry, SourceKind

CATALOG = Registry(fuzz_bindings=BINDERS)
"""Every rule; a rule's ``fuzz`` must name a registered fuzz binding."""
rule = CATALOG.rule

MUST, SHOULD, MAY = Level.MUST, Level.SHOULD, Level.MAY
SPEC = SourceKind.SPEC
API = SourceKind.API_REFERENCE
WHATWG = SourceKind.WHATWG
OBSERVED = SourceKind.OBSERVED

OPENAI_WIRE = ("wire=openai",)
"""Rules of OpenAI's shapes (``echo``, ``created``, ``best_of``, ...): see ``spec/profiles``."""
FRIENDLI_WIRE = ("wire=friendli",)
"""Rules of FriendliAI's shapes (``tokens`` prompts, per-chunk ``token``, choice ``seed``)."""

DOC = "spec/completions.yaml"
SCHEMAS = f"{DOC}#/components/schemas"
BUGS = "docs/bug-classes.md"
WHATWG_SSE = (
    "WHATWG HTML §9.2.6, https://html.spec.whatwg.org/multipage/server-sent-events.html"
    "#event-stream-interpretation"
)
OPENAI_STREAM = "OpenAI openapi.yaml 2.3.0, CreateCompletionRequest.stream"
