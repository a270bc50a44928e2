"""FriendliAI's structured outputs: one request per ``response_format`` type, greedy.

Spec: ``ResponseFormat`` in ``spec/completions.yaml`` (``json_object``: one JSON object;
``json_schema``: an object valid for ``json_schema.schema``; ``regex``: a match of ``schema``)
and FriendliAI's dedicated completions API, ``response_format``. The schema and the
pattern are small and bounded, so a server that honours them finishes well within the tokens
asked for; :data:`PATTERN_PREFIX` lets a rule judge an output cut by ``length`` too.
"""

from __future__ import annotations

from spec import JSON

from .friendli import FRIENDLI
from .model import ProbeSession
from .prompts import PROMPT_A
from .registry import probe

SCHEMA: JSON = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
PATTERN = "[a-c]{2,4}-[0-9]{1,3}"
PATTERN_PREFIX = "[a-c]{0,4}|[a-c]{2,4}-[0-9]{0,3}"
"""Every prefix of a match of :data:`PATTERN` (what an output cut by ``length`` may be)."""
MAX_TOKENS = 32


@probe("structured-outputs", "response_format json_object, json_schema and regex, greedy",
       features=("response_format",), traits=FRIENDLI)
async def structured(s: ProbeSession) -> None:
    common: dict[str, JSON] = {"max_tokens": MAX_TOKENS, "temperature": 0}
    await s.gather(
        s.complete("json_object", s.body(
            PROMPT_A, **common, response_format={"type": "json_object"})),
        s.complete("json_schema", s.body(
            PROMPT_A, **common,
            response_format={"type": "json_schema", "json_schema": {"schema": SCHEMA}})),
        s.complete("regex", s.body(
            PROMPT_A, **common, response_format={"type": "regex", "schema": PATTERN})),
    )
