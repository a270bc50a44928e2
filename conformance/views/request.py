"""What a request body asks for: how many prompts and choices, its stop strings, and the
arrays of a logprobs object; pure readers the rules and the fuzz bindings share."""

from __future__ import annotations

from spec import JSON


def integer(value: JSON) -> int | None:
    """``value`` as JSON Schema counts integers (``2`` and ``2.0`` alike), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def prompt_count(body: JSON) -> int:
    """How many prompts a request holds (a list of token ids is one prompt)."""
    if not isinstance(body, dict):
        return 1
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt and integer(prompt[0]) is None:
        return len(prompt)
    return 1


def expected_choices(body: JSON) -> int:
    """How many choices a request asks for: ``n`` (1 when absent) for each prompt."""
    n = integer(body.get("n")) if isinstance(body, dict) else None
    return prompt_count(body) * (n if n is not None else 1)


def stop_strings(body: dict[str, JSON]) -> list[str]:
    """The request's non-empty stop strings (``stop`` is a string or a list of them)."""
    stop = body.get("stop")
    values = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    return [value for value in values if isinstance(value, str) and value]


def logprob_arrays(value: JSON) -> dict[str, list[JSON]] | None:
    """The four arrays of a logprobs object, when all four are arrays."""
    if not isinstance(value, dict):
        return None
    arrays = {k: value.get(k) for k in ("tokens", "token_logprobs", "top_logprobs", "text_offset")}
    if all(isinstance(v, list) for v in arrays.values()):
        return arrays  # type: ignore[return-value]
    return None
