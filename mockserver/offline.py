"""The mock's answer to one request without a server: validation, the engine, the wire.

What ``python -m mockserver.render`` prints: exactly what the mock would send, so the mock's
own pipeline (its validator and the pure ``mockserver.wire``) is reused here, not copied.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from reference_engine import Engine
from reference_engine.errors import InvalidRequestError
from spec import JSON

from . import sse
from .contracts import builtin_contract
from .errors import ApiError
from .validation import RequestValidator
from .wire import Identity, WireOptions, build_request, completion_body, stream_chunks, wire_of


@functools.cache
def _engine() -> Engine:
    return Engine()


def offline_answer(
    body: Mapping[str, JSON],
    *,
    profile_name: str,
    stream: bool,
    response_id: str = "cmpl-reference",
    created: int = 0,
    engine: Engine | None = None,
) -> str:
    """The response body (JSON, one line) or the SSE stream the mock would send for ``body``.

    ``profile_name`` is a contract profile's name: the built-in route of its wire (``/v1`` or
    ``/dedicated/v1``) validates and renders. The body's own ``stream`` is replaced by
    ``stream``. Raises ValueError with the error envelope's message (and ``param``) for a
    request the mock would reject.
    """
    engine = engine or _engine()
    request_body = {**body, "stream": stream}
    validator = RequestValidator(builtin_contract(wire_of(profile_name)),
                                 model_id=engine.model_id)
    wire = validator.wire
    try:
        valid = validator.validate(request_body)
        try:
            request = build_request(valid, wire=wire)
            options = WireOptions.from_body(valid, wire=wire)
            identity = Identity(response_id, created, valid["model"], engine.fingerprint)
            if not stream:
                completion = engine.complete(request)
                rendered = completion_body(completion, identity, wire=wire,
                                           suffix=options.suffix)
                return sse.encode_json(rendered).decode("utf-8") + "\n"
            chunks = stream_chunks(engine.stream(request), identity, wire=wire,
                                   include_usage=options.include_usage,
                                   logprobs=options.logprobs, suffix=options.suffix)
            return b"".join(frame.data for frame in sse.frames(chunks)).decode("utf-8")
        except InvalidRequestError as error:
            raise validator.engine_error(error) from None
    except ApiError as error:
        raise ValueError(f"{error.status} {error.message} (param: {error.param})") from None
