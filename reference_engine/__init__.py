"""Deterministic reference engine behind the mock Completions server.

A small byte-level BPE tokenizer and an interpolated Kneser-Ney n-gram language model, trained
from a corpus shipped in the package, so the mock produces real tokens with real probabilities
without downloads, network access or an accelerator. The same artifact version, request and
seed give the same output in any process, on any machine.

::

    from reference_engine import Engine, GenerationRequest, SamplingParams

    engine = Engine()
    completion = engine.complete(GenerationRequest(prompts=("The Python",), seed=1))
    for event in engine.stream(GenerationRequest(prompts=("The Python",), seed=1)):
        ...

Nothing here imports aiohttp or knows JSON: the mock server's wire layer turns the results
into the wire format (its ``render`` command prints what it would send).
"""

from .engine import CONTEXT_LENGTH, MODEL_ID, Engine
from .errors import (
    ContextLengthError,
    EngineError,
    InvalidRequestError,
    TokenIdOutOfRangeError,
    UnsupportedParameterError,
)
from .request import GenerationRequest, PromptInput
from .results import (
    Choice,
    Completion,
    Event,
    FinishEvent,
    LogprobEntry,
    TextEvent,
    Usage,
    UsageEvent,
)
from .sampling import SamplingParams

__all__ = [
    "CONTEXT_LENGTH",
    "MODEL_ID",
    "Choice",
    "Completion",
    "ContextLengthError",
    "Engine",
    "EngineError",
    "Event",
    "FinishEvent",
    "GenerationRequest",
    "InvalidRequestError",
    "LogprobEntry",
    "PromptInput",
    "SamplingParams",
    "TextEvent",
    "TokenIdOutOfRangeError",
    "UnsupportedParameterError",
    "Usage",
    "UsageEvent",
]
