"""Pure readers of recorded exchanges: streams, assembled choices, logprob tokens, paths, and
what a request asks for."""

from .choices import (
    AssembledChoice,
    Unassemblable,
    assemble,
    is_finish,
    repeats_finish,
    response_choices,
)
from .evidence import clip, compact, raw_text
from .paths import json_path
from .request import expected_choices, integer, logprob_arrays, prompt_count, stop_strings
from .stream import DONE, Payload, StreamView, parse_payload
from .tokens import char_offsets, decode_complete, joined_bytes, joined_text_matches, token_bytes

__all__ = [
    "DONE",
    "AssembledChoice",
    "Payload",
    "StreamView",
    "Unassemblable",
    "assemble",
    "char_offsets",
    "clip",
    "compact",
    "decode_complete",
    "expected_choices",
    "integer",
    "is_finish",
    "joined_bytes",
    "joined_text_matches",
    "json_path",
    "logprob_arrays",
    "parse_payload",
    "prompt_count",
    "raw_text",
    "repeats_finish",
    "response_choices",
    "stop_strings",
    "token_bytes",
]
