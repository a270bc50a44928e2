"""The engine's exceptions; the mock maps them to 4xx answers with the error envelope.

::

    EngineError
    └── InvalidRequestError          cannot be served (400 / 422); .param names the field
        ├── TokenIdOutOfRangeError   a token id outside the vocabulary
        ├── ContextLengthError       prompt + max_tokens exceed the context length
        └── UnsupportedParameterError a field the model cannot honour (e.g. embeddings)

Cancellation needs no exception: the engine yields events from a generator, and a consumer
that stops iterating (or calls ``close()``) stops generation at once.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class InvalidRequestError(EngineError):
    """The request cannot be served as asked; ``param`` is the field at fault (or None)."""

    code = "invalid_value"

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class TokenIdOutOfRangeError(InvalidRequestError):
    """A token id (in a prompt, logit_bias, bad_word_tokens, ...) is not in the vocabulary."""

    code = "invalid_token_id"


class ContextLengthError(InvalidRequestError):
    """The prompt plus the requested completion do not fit the model's context."""

    code = "context_length_exceeded"


class UnsupportedParameterError(InvalidRequestError):
    """A valid field whose effect the reference model cannot produce."""

    code = "unsupported_parameter"
