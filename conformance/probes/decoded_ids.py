"""Token ids decoded by echo: a token-id prompt with ``max_tokens: 0``, ``echo`` and
``logprobs: 0`` comes back as one logprobs token per id, so a server that takes token-id prompts
tells the text of any id range (``CompletionRequest.echo`` and ``prompt`` in
``spec/completions.yaml``).

The ``vocab`` probe decodes ids 256-511, where a byte-level BPE vocabulary keeps its first
merges. Another vocabulary keeps its frequent words elsewhere (a word-level one below 256), so
when the greedy token is not among them ``logit-bias`` decodes further pages from 0 upwards,
at most :data:`FURTHER_PAGES` requests, as auxiliary requests (an id past the vocabulary's end
is the harness's guess, not a request the server must take).
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from .logprob_tokens import generated_tokens
from .model import ProbeSession, first_choice
from .prompts import VOCAB_COUNT, VOCAB_FIRST_ID

FURTHER_PAGES = 4
"""At most this many further pages of :data:`VOCAB_COUNT` ids are decoded per run: ids 0-255,
then 512-767, 768-1023 and 1024-1279."""

Table = dict[str, str]
"""Token text by token id (the id as a string, as ``logit_bias`` keys it)."""


def page_ids(first: int) -> list[int]:
    return list(range(first, first + VOCAB_COUNT))


def further_pages() -> Iterator[int]:
    """The first id of each further page, from 0 upwards, the ``vocab`` probe's page left out."""
    first, given = 0, 0
    while given < FURTHER_PAGES:
        if first != VOCAB_FIRST_ID:
            yield first
            given += 1
        first += VOCAB_COUNT


def decode_body(s: ProbeSession, ids: list[int]) -> dict[str, JSON]:
    return s.body(ids, max_tokens=0, echo=True, logprobs=0, temperature=0)


def table_of(choice: dict[str, JSON] | None, ids: list[int]) -> Table | None:
    """The decoded ids of an echo answer: one logprobs token per id (either shape:
    :func:`generated_tokens`), else None."""
    tokens = generated_tokens(choice.get("logprobs") if choice else None)
    if tokens is not None and len(tokens) == len(ids):
        return {str(i): t for i, t in zip(ids, tokens, strict=True)}
    return None


async def decode_page(s: ProbeSession, first: int) -> Table | None:
    """Decode ids ``first`` .. ``first + VOCAB_COUNT - 1`` (recorded as ``decode-FIRST``, an
    auxiliary request: never judged)."""
    ids = page_ids(first)
    exchange = await s.post_auxiliary(f"decode-{first}", s.settings.url("completions"),
                                      decode_body(s, ids))
    return table_of(first_choice(exchange), ids)


def ids_of(table: Table, token: str) -> list[str]:
    return [token_id for token_id, text in table.items() if text == token]
