"""Faults: the mock, wrong in one named way when asked.

Each fault is a small object named after its defect (``usage-before-finish``), with one narrow
hook (``base``), registered by name (``registry``). A request's faults come from ``--fault``,
the ``X-Mock-Fault`` header and ``chaos``; ``active`` applies them. The catalog modules below
register themselves on import::

    framing     done-missing, done-doubled, done-early, data-after-done, event-unterminated,
                events-not-separated, json-split, invalid-utf8
    ordering    usage-before-finish, text-after-finish, finish-doubled, finish-missing
    usage       usage-unrequested, usage-missing, usage-total-wrong, usage-prompt-times-n, ...
    identity    id-changes, created-changes, model-changes, object-wrong, field-wrong-type
    choices     finish_reason values, indices and their order, FriendliAI token / seed fields
    text        stop-leak, stop-leak-stream, prompt-leak-stream, utf8-split-replacement
    parameters  seed-ignored, stop-ignored, stop-tokens-ignored, max-tokens-overrun, ...
    logprobs    the logprobs object, with and without echo
    errors      how invalid input is answered (and what it leaves behind)
    transport   content types, disconnect-mid-stream, slow-drip, stall
    models      models-shape-wrong, model-unlisted
"""

# The catalog modules register their faults on import.
from . import (  # noqa: F401
    choices,
    errors,
    framing,
    identity,
    logprobs,
    models,
    ordering,
    parameters,
    text,
    transport,
    usage,
)
from .active import ActiveFaults
from .base import (
    HOOK_METHODS,
    AbortConnection,
    ErrorReply,
    Fault,
    FaultContext,
    HookKind,
    Verdict,
    Write,
)
from .chaos import Chaos
from .registry import (
    UnknownFaultError,
    all_faults,
    fault_names,
    get_fault,
    parse_fault_names,
    register,
)

__all__ = [
    "HOOK_METHODS",
    "AbortConnection",
    "ActiveFaults",
    "Chaos",
    "ErrorReply",
    "Fault",
    "FaultContext",
    "HookKind",
    "UnknownFaultError",
    "Verdict",
    "Write",
    "all_faults",
    "fault_names",
    "get_fault",
    "parse_fault_names",
    "register",
]
