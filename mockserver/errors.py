"""The error envelope: every 4xx/5xx the mock sends is ``{"error": {message, type, param, code}}``.

Spec: ``components/schemas/ErrorResponse`` in ``spec/completions.yaml`` ("The error envelope
``{"error": {"message", "type", "param", "code"}}``"). Code anywhere in the mock raises
:class:`ApiError`; only the error middleware (``mockserver.http.middleware``) turns it into a
response, so the envelope is built in one place. This module is pure (no aiohttp) because the
wire layer's CLI front end reports the same errors.

::

    ApiError                       any answer other than 2xx
    ├── status 400 / 422           invalid input (422 on FriendliAI's route); .param names the field
    ├── 401                        missing or wrong API key
    ├── 404 / 405                  unknown model, path or method
    ├── 408                        the body did not arrive within --read-timeout
    ├── 413 / 415                  body too large / not application/json
    ├── 429                        rate limited (with Retry-After)
    └── 500                        a bug in the mock (the middleware's catch-all)
"""

from __future__ import annotations

from collections.abc import Mapping

from spec import JSON

INVALID_REQUEST = "invalid_request_error"
AUTHENTICATION = "authentication_error"
RATE_LIMIT = "rate_limit_error"
SERVER_ERROR = "server_error"
MAX_MESSAGE_CHARS = 2000
"""Messages quote request values; a 1 MB prompt must not come back in an error."""


class ApiError(Exception):
    """An HTTP error answer with the envelope's four fields (and optional extra headers).

    ``rule`` names the cross-field rule that failed, if one did (faults that ignore a
    particular validation key on it); ``unknown`` lists every unknown field of a body refused
    for them (``param`` names the first), so a fault that ignores them can drop them all.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = INVALID_REQUEST,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        rule: str | None = None,
        unknown: tuple[str, ...] = (),
    ) -> None:
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 3] + "..."
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = dict(headers or {})
        self.rule = rule
        self.unknown = unknown

    def envelope(self) -> dict[str, JSON]:
        """The JSON body: ``{"error": {"message", "type", "param", "code"}}``."""
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }

    def __repr__(self) -> str:
        return (f"ApiError({self.status}, {self.message!r}, param={self.param!r}, "
                f"code={self.code!r})")


def server_error(message: str = "The mock server failed unexpectedly; this is a bug.") -> ApiError:
    """The catch-all 500 (the tests prove no input reaches it)."""
    return ApiError(500, message, type=SERVER_ERROR, code="internal_error")
