"""Hypothesis strategies for completion requests, valid and invalid, per profile.

Public API for the fuzzer, this project's property tests and users' own tests::

    import spec
    from hypothesis import given
    from conformance.strategies import completion_requests, invalid_completion_requests

    @given(completion_requests(spec.get_profile("openai"), model="my-model", max_tokens=8))
    def test_my_server(body): ...

    @given(invalid_completion_requests(spec.get_profile("friendli"), model="my-endpoint"))
    def test_my_server_rejects(case):  # case.body, case.param, case.reason, case.kind
        ...

Valid requests combine stream x n x prompt lists x echo x logprobs x stop x seed (and the
profile's other fields: sampling knobs with their boundary values and ``null``, FriendliAI's
``tokens``, ``bad_words``, ``bad_word_tokens``, ``stop_tokens``, ``eos_token``,
``response_format``, ``min_tokens`` and seed lists) and satisfy the contract's cross-field rules;
invalid ones break exactly one constraint, say which field is at fault, and are only those every
server of the profile must reject. Token ids are below 256, which every byte-level tokenizer
has. Only fields the profile lists (and features it claims) are generated. ``profile`` is the
:class:`spec.Profile` that ``spec.get_profile`` returns for a name or a profile file's path (a
name itself is refused with a ``TypeError`` that says so). Arguments are checked when the
strategy is built, with an error naming the argument.

Stop strings can be taken from text the server wrote (``texts=``, :func:`stop_pieces`), and two
strategies aim at what random requests seldom show (:mod:`.focused`): :func:`stop_requests`
(a known prompt with stop strings from its answer) and :func:`independent_samples` (``n`` >= 2
at temperature 1, mostly seeded).
"""

from .focused import independent_samples, repeat_bans, scored_echoes, stop_requests
from .invalid import InvalidRequest, invalid_completion_requests
from .requests import completion_requests, prompt_texts, prompts, stop_pieces, stop_sequences

__all__ = [
    "InvalidRequest",
    "completion_requests",
    "independent_samples",
    "invalid_completion_requests",
    "prompt_texts",
    "prompts",
    "repeat_bans",
    "scored_echoes",
    "stop_pieces",
    "stop_requests",
    "stop_sequences",
]
