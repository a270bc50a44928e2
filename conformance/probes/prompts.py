"""The fixed inputs of the probes: prompts, seeds and token ids.

They are plain English (any model continues them) and were chosen so that the embedded mock's
greedy continuations exercise what the rules need: ``PROMPT_A`` and ``PROMPT_B`` continue
differently in ASCII, ``UNICODE_PROMPT`` continues in characters split across tokens, and
``BEST_OF_SEED`` makes the mock's best candidate not its first one. Against another server the
probes still run; a rule whose precondition the server's output does not meet SKIPs.
"""

from __future__ import annotations

PROMPT_A = "A list is"
PROMPT_B = "In the beginning"
UNICODE_PROMPT = "Japanese text 日本語"

SEED = 1234
OTHER_SEEDS = (11, 22)
BEST_OF_SEED = 4
BEST_OF = 3
SAMPLING_TEMPERATURE = 1.0
NEAR_GREEDY_TOP_P = 1e-6
"""A nucleus that keeps only the likeliest token: sampling that gives the greedy text, for a
server that refuses a request form at temperature 0 (``n > 1`` on vLLM)."""

VOCAB_FIRST_ID = 256
VOCAB_COUNT = 256
"""Token ids decoded by the ``vocab`` probe (echo of a token prompt): the first merges of a
byte-level BPE vocabulary, where frequent tokens live."""

TOKEN_PROMPT = tuple(range(300, 308))
"""A token-id prompt: valid ids in any vocabulary of more than 308 tokens."""

NEVER_MATCHES = "\u2603\u2603"
"""Appended to a text's tail to make a stop string that shares a prefix with the text's end
but never matches (a snowman pair no probe prompt leads to)."""
