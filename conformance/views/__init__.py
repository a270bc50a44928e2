"""Pure readers of recorded exchanges: streams, assembled choices, logprob tokens, paths."""

from .choices import AssembledChoice, Unassemblable, assemble, is_finish, response_choices
from .evidence import clip, compact, raw_text
from .paths import json_path
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
    "is_finish",
    "joined_bytes",
    "joined_text_matches",
    "json_path",
    "parse_payload",
    "raw_text",
    "response_choices",
    "token_bytes",
]
