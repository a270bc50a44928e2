"""Hypothesis strategies for completion requests, valid and invalid, per profile.

Public API for the fuzzer, this project's property tests and users' own tests::

    from hypothesis import given
    from conformance.strategies import completion_requests, invalid_completion_requests

    @given(completion_requests("openai", model="my-model", max_tokens=8))
    def test_my_server(body): ...

Valid requests combine stream x n x prompt lists x echo x logprobs x stop x seed (and the
profile's other fields) and satisfy the contract's cross-field rules; invalid ones break
exactly one constraint and say which field is at fault. Token-id prompts use ids below 256,
which every byte-level tokenizer has. Only fields the profile lists (and features it claims)
are generated.
"""

from .invalid import InvalidRequest, invalid_completion_requests
from .requests import completion_requests, prompts, stop_sequences

__all__ = [
    "InvalidRequest",
    "completion_requests",
    "invalid_completion_requests",
    "prompts",
    "stop_sequences",
]
