"""``render_cli``: one request through validation, the engine and the renderers, as text.

The front end of ``python -m reference_engine`` (see its module docstring): it prints exactly
what the mock would send, so the mock's own pipeline is reused here rather than copied.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from reference_engine import Engine
from reference_engine.errors import InvalidRequestError
from spec import JSON

from .. import sse
from .chunks import stream_chunks
from .identity import Identity
from .options import WireOptions
from .requests import build_request
from .responses import completion_body


@functools.cache
def _engine() -> Engine:
    return Engine()


def render_cli(
    body: Mapping[str, JSON],
    *,
    profile: str,
    stream: bool,
    response_id: str = "cmpl-reference",
    created: int = 0,
    engine: Engine | None = None,
) -> str:
    """The response body (JSON, one line) or the SSE stream the mock would send for ``body``.

    The body's own ``stream`` is replaced by ``stream``. Raises ValueError with the error
    envelope's message (and ``param``) for a request the mock would reject.
    """
    from ..errors import ApiError  # late: keeps ``mockserver.wire`` importable on its own
    from ..validation import RequestValidator

    engine = engine or _engine()
    request_body = {**body, "stream": stream}
    validator = RequestValidator(profile, model_id=engine.model_id)
    try:
        valid = validator.validate(request_body)
        try:
            request = build_request(valid, profile=profile)
            options = WireOptions.from_body(valid, profile=profile)
            identity = Identity(response_id, created, valid["model"], engine.fingerprint)
            if not stream:
                completion = engine.complete(request)
                rendered = completion_body(completion, identity, profile=profile,
                                           suffix=options.suffix)
                return sse.encode_json(rendered).decode("utf-8") + "\n"
            chunks = stream_chunks(engine.stream(request), identity, profile=profile,
                                   include_usage=options.include_usage,
                                   logprobs=options.logprobs, suffix=options.suffix)
            return b"".join(frame.data for frame in sse.frames(chunks)).decode("utf-8")
        except InvalidRequestError as error:
            raise validator.engine_error(error) from None
    except ApiError as error:
        raise ValueError(f"{error.status} {error.message} (param: {error.param})") from None
