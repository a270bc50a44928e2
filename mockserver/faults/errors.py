"""Faults in how invalid input is answered: wrongly rejected, wrongly accepted, badly reported.

Spec: the 400 / 422 responses of the completions operations (``BadRequest``,
``UnprocessableEntity``: the error envelope, ``error.param`` naming the field), the rules
``stream-options-need-stream`` and ``best-of-at-least-n`` ("OpenAI accepts ``best_of == n``")
and ``CompletionRequest.prompt`` (token-id prompts are valid); bug classes 12, 20, 31 and 32 of
the research notes.
"""

from __future__ import annotations

import json
import time

from spec import JSON

from .. import sse
from ..errors import SERVER_ERROR, ApiError
from ..validation import INVALID_STATUS
from .base import OPENAI, ErrorReply, Fault, FaultContext, Verdict
from .registry import register

INVALID_INPUT = frozenset({400, 422})
ERROR_TTL = 5.0
"""Seconds an ``error-cached`` error answers the corrected request."""


def _with_param(error: ApiError, param: str | None) -> ApiError:
    """A copy of ``error`` whose envelope names ``param``."""
    return ApiError(error.status, error.message, type=error.type, param=param, code=error.code,
                    headers=error.headers, rule=error.rule)


def _is_token_prompt(body: JSON) -> bool:
    if not isinstance(body, dict):
        return False
    prompt = body.get("prompt")
    return body.get("tokens") is not None or (
        isinstance(prompt, list) and bool(prompt) and not isinstance(prompt[0], str)
    )


@register
class TokenPromptRejected(Fault):
    name = "token-prompt-rejected"
    description = "Token-id prompts (`[int]`, `[[int]]`, FriendliAI `tokens`) are rejected."
    breaks = "Token-id prompts are accepted (200, prompt_tokens == len(ids))."
    hook = "validation"

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        if verdict.error is None and _is_token_prompt(verdict.body):
            error = ApiError(
                INVALID_STATUS[ctx.wire],
                "prompt must be a string or an array of strings.",
                param="tokens" if isinstance(verdict.body, dict) and "tokens" in verdict.body
                else "prompt",
                code="invalid_type",
            )
            return Verdict(verdict.body, error)
        return verdict


def _holds_a_prompt_list(body: object) -> bool:
    """Whether ``body`` asks for two or more text prompts at once (``"prompt": ["A", "B"]``):
    the request that the prompt-list faults fail."""
    prompt = body.get("prompt") if isinstance(body, dict) else None
    return isinstance(prompt, list) and len(prompt) > 1 and all(
        isinstance(p, str) for p in prompt)


@register
class PromptList500(Fault):
    name = "prompt-list-500"
    description = (
        "A valid prompt list (`\"prompt\": [\"A\", \"B\"]`) is answered 500 with the error "
        "envelope, as llama-cpp-python does."
    )
    breaks = "A valid request gets 2xx."
    hook = "validation"

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        if verdict.error is None and _holds_a_prompt_list(verdict.body):
            error = ApiError(500, "Internal server error: prompt lists are not supported.",
                             type=SERVER_ERROR, code="internal_error")
            return Verdict(verdict.body, error)
        return verdict


@register
class GreedyNRefused(Fault):
    name = "greedy-n-refused"
    description = (
        "`n > 1` at temperature 0 is refused with 400 (\"n must be 1 when using greedy "
        "sampling\"), as vLLM does; sampled, `n > 1` is served."
    )
    breaks = "A valid request gets 2xx."
    hook = "validation"

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        body = verdict.body
        if verdict.error is None and isinstance(body, dict) and _greedy_n(body):
            error = ApiError(INVALID_STATUS[ctx.wire],
                             f"n must be 1 when using greedy sampling, got {body['n']}.",
                             param="n", code="invalid_value")
            return Verdict(body, error)
        return verdict


def _greedy_n(body: dict[str, JSON]) -> bool:
    n, temperature = body.get("n"), body.get("temperature", 1.0)
    return (isinstance(n, int) and not isinstance(n, bool) and n > 1
            and isinstance(temperature, (int, float)) and temperature == 0)


@register
class UnknownFieldsIgnored(Fault):
    name = "unknown-fields-ignored"
    description = (
        "Unknown request fields are ignored (the request is served without them) instead of "
        "rejected, as most OpenAI-compatible servers do."
    )
    breaks = "Under the openai profile, a request with an unknown field gets 400."
    hook = "validation"
    wires = OPENAI
    on_invalid = True

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        error = verdict.error
        if error is not None and error.code == "unknown_parameter" and isinstance(
            verdict.body, dict
        ):
            unknown = set(error.unknown or (error.param,))
            body = {k: v for k, v in verdict.body.items() if k not in unknown}
            return Verdict(body, None)
        return verdict


STREAM_OPTIONS_RULES = ("stream-options-need-stream", "vllm-stream-options-need-stream")
"""The cross-field rules of ``stream_options`` without ``stream``: the wires' and vLLM's own."""


@register
class StreamOptionsIgnoredError(Fault):
    name = "stream-options-ignored-error"
    description = "`stream_options` without `stream: true` is accepted (200) instead of rejected."
    breaks = "`stream_options` is only allowed when `stream` is true (400 / 422 otherwise)."
    hook = "validation"
    stream = False

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        error = verdict.error
        if error is not None and error.rule in STREAM_OPTIONS_RULES:
            body = {k: v for k, v in verdict.body.items() if k != "stream_options"}
            return Verdict(body, None)
        return verdict


@register
class InvalidInput200(Fault):
    name = "invalid-input-200"
    description = "Invalid input is answered 200 with a normal completion (of a default request)."
    breaks = "Invalid input gets a 4xx with the error envelope."
    hook = "validation"
    on_invalid = True

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        if verdict.error is None or verdict.error.status not in INVALID_INPUT:
            return verdict
        body = verdict.body if isinstance(verdict.body, dict) else {}
        prompt = body.get("prompt")
        fallback: dict[str, JSON] = {
            "model": body.get("model") if isinstance(body.get("model"), str) else "",
            "prompt": prompt if isinstance(prompt, str) and len(prompt) < 2000 else "Hello",
            "max_tokens": 16,
        }
        if body.get("stream") is True:
            fallback["stream"] = True
        return Verdict(fallback, None)


@register
class InvalidInput500(Fault):
    name = "invalid-input-500"
    description = "Invalid input is answered 500 (a server error) instead of 400 / 422."
    breaks = "Invalid input gets a 4xx, never a 5xx."
    hook = "error"
    on_invalid = True

    def alter_error(self, reply: ErrorReply, ctx: FaultContext) -> ErrorReply:
        if reply.status not in INVALID_INPUT:
            return reply
        error = ApiError(500, "Internal server error", type=SERVER_ERROR, code="internal_error")
        return ErrorReply(500, reply.content_type, sse.encode_json(error.envelope()),
                          reply.headers, error)


@register
class ErrorNoEnvelope(Fault):
    name = "error-no-envelope"
    description = "Errors are plain text (`text/plain`), not the JSON error envelope."
    breaks = 'Every error body is {"error": {"message", "type", "param", "code"}}.'
    hook = "error"
    on_invalid = True

    def alter_error(self, reply: ErrorReply, ctx: FaultContext) -> ErrorReply:
        message = reply.error.message if reply.error is not None else "error"
        return ErrorReply(reply.status, "text/plain; charset=utf-8", message.encode("utf-8"),
                          reply.headers, reply.error)


@register
class ErrorInStream(Fault):
    name = "error-in-stream"
    description = (
        "Invalid input with `stream: true` is answered 200 `text/event-stream` with an error "
        "event and `[DONE]`."
    )
    breaks = "Invalid input gets a 4xx with a JSON error body before any SSE bytes."
    hook = "error"
    on_invalid = True

    def alter_error(self, reply: ErrorReply, ctx: FaultContext) -> ErrorReply:
        if not ctx.stream or reply.status not in INVALID_INPUT or reply.error is None:
            return reply
        data = sse.error_ending(reply.error.envelope())
        return ErrorReply(200, sse.CONTENT_TYPE, data, reply.headers, reply.error)


@register
class BestOfEqualNRejected(Fault):
    name = "best-of-equal-n-rejected"
    description = (
        "`best_of` equal to `n` is rejected (400), as OpenAI's text \"greater than n\" reads."
    )
    breaks = "`best_of == n` is accepted (OpenAI accepts it)."
    hook = "validation"
    wires = OPENAI

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        body = verdict.body
        if verdict.error is not None or not isinstance(body, dict):
            return verdict
        best_of = body.get("best_of")
        if isinstance(best_of, int) and not isinstance(best_of, bool) and best_of == ctx.n:
            error = ApiError(INVALID_STATUS[ctx.wire], "`best_of` must be greater than `n`.",
                             param="best_of", code="invalid_value")
            return Verdict(body, error)
        return verdict


@register
class ErrorParamMissing(Fault):
    name = "error-param-missing"
    description = "Invalid-input errors say `param: null` even when one field is at fault."
    breaks = "error.param names the request field at fault."
    hook = "error"
    on_invalid = True

    def alter_error(self, reply: ErrorReply, ctx: FaultContext) -> ErrorReply:
        error = reply.error
        if error is None or error.param is None or reply.status not in INVALID_INPUT:
            return reply
        error = _with_param(error, None)
        return ErrorReply(reply.status, reply.content_type, sse.encode_json(error.envelope()),
                          reply.headers, error)


def _request_key(ctx: FaultContext, body: dict[str, JSON], without: str | None) -> str:
    fields = {name: value for name, value in body.items() if name != without}
    return json.dumps([ctx.wire, fields], sort_keys=True, default=str)


@register
class ErrorCached(Fault):
    name = "error-cached"
    description = (
        "An invalid request's error is cached under the request without the field at fault, "
        f"so for {ERROR_TTL:g} s the corrected request gets the same error."
    )
    breaks = "After invalid input, a valid request is answered normally."
    hook = "validation"
    chaos = False  # the defect spans two requests

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        body, error = verdict.body, verdict.error
        cache = ctx.memory.setdefault(self.name, {})
        if not isinstance(body, dict) or not isinstance(cache, dict):
            return verdict
        now = time.monotonic()
        if error is not None:
            if error.status in INVALID_INPUT and error.param in body:
                for key in [k for k, (until, _) in cache.items() if until <= now]:
                    del cache[key]
                copy = _with_param(error, error.param)  # not the raised one: no frames kept
                cache[_request_key(ctx, body, error.param)] = (now + ERROR_TTL, copy)
            return verdict
        until, cached = cache.get(_request_key(ctx, body, None), (0.0, None))
        if cached is None or until <= now:
            return verdict
        return Verdict(body, _with_param(cached, cached.param))


SUBSTITUTE_MODEL = "text-davinci-003"
"""The model the Portkey gateway (1.15) puts in a body that names none."""


@register
class ModelSubstituted(Fault):
    name = "model-substituted"
    description = (
        f"A body without `model` is served as if it named `{SUBSTITUTE_MODEL}`, as the Portkey "
        "gateway forwards it: 404 for a model the client never named."
    )
    breaks = "A body without model gets the profile's 4xx naming model (or the served model)."
    hook = "validation"
    on_invalid = True

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        error, body = verdict.error, verdict.body
        if (error is not None and error.code == "missing_required_parameter"
                and error.param == "model" and isinstance(body, dict)):
            return Verdict({**body, "model": SUBSTITUTE_MODEL}, None)  # validated again
        return verdict


class _GatewayPage(ApiError):
    """An error a gateway words itself: JSON, but not the envelope (its ``html-message``)."""

    def envelope(self) -> dict[str, JSON]:
        return {"html-message": self.message}


@register
class UpstreamDownPage(Fault):
    name = "upstream-down-page"
    description = (
        "A valid prompt list is answered 503 `{\"html-message\": \"... ECONNREFUSED ...\"}`, "
        "as a gateway whose upstream is down words it (Retry-After 0), not the error envelope."
    )
    breaks = "A server's own 5xx answer is the error envelope."
    hook = "validation"

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        if verdict.error is None and _holds_a_prompt_list(verdict.body):
            page = _GatewayPage(
                503, "upstream request failed: connect ECONNREFUSED 127.0.0.1:8000",
                type=SERVER_ERROR, headers={"Retry-After": "0"})
            return Verdict(verdict.body, page)
        return verdict
