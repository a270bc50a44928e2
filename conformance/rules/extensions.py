"""vLLM's request extensions on OpenAI's wire: each has the effect vLLM's docs state.

Spec: the ``x-extension`` fields of ``CompletionRequest`` in ``spec/completions.yaml``, which
are vLLM's "Extra parameters" of the Completions API
(https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#completions-api) with the
meanings of vLLM's ``SamplingParams``
(https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html): ``min_tokens`` ("Minimum
number of tokens to generate per output sequence before EOS or stop_token_ids can be
generated"), ``ignore_eos`` ("Whether to ignore the EOS token and continue generating tokens
after the EOS token is generated"), ``stop_token_ids`` ("Token IDs that stop the generation
when they are generated"), ``include_stop_str_in_output`` ("Whether to include the stop
strings in output text"), ``prompt_logprobs`` ("Number of log probabilities to return per
prompt token") and the Completions API's ``return_tokens_as_token_ids`` ("tokens that are not
JSON-encodable can be identified" as ``token_id:{token_id}``); vLLM's response extensions are
``CompletionResponseChoice.stop_reason`` and ``prompt_logprobs``
(``VllmCompletionChoice`` in ``spec/completions.yaml``).

Where vLLM's words and its server differ, both are valid: ``SamplingParams`` says the stop
token stays in the output ("unless the stop tokens are special tokens"), vLLM's server leaves
it out, so EXT-003 takes either.

A rule here runs for a profile that claims the extension's feature (``spec/profiles/vllm.yaml``
claims them); FriendliAI's wire has its own rules for the fields it shares
(``samplers_huggingface.py``).
"""

from __future__ import annotations

import re

from conformance.model import NotApplicable, Violation
from conformance.probes.extensions import PROMPT_LOGPROBS
from conformance.probes.samplers_huggingface import MAX_TOKENS
from conformance.run.check_context import CheckContext
from conformance.views import compact
from spec import JSON

from .base import API, MUST, OPENAI_WIRE, SCHEMAS, rule
from .common import assembled, choice_of, choices_of, judgeable, text_of, usage_of
from .shared_checks import min_tokens_held

REQUEST = f"{SCHEMAS}/CompletionRequest/properties"
VLLM_REQUEST = f"{SCHEMAS}/VllmCompletionRequest/properties"
VLLM_CHOICE = f"{SCHEMAS}/VllmCompletionChoice/properties"
VLLM_SAMPLING = "https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html (2026-12)"
VLLM_SERVER = ("https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html"
               "#completions-api (2026-12)")
TOKEN_ID_NAME = re.compile(r"token_id:[0-9]+")


@rule(
    "EXT-001", MUST, "min_tokens holds off the end",
    requirement=f"With min_tokens N (and max_tokens {MAX_TOKENS}, no stop), at least "
    f"min(N, {MAX_TOKENS}) tokens are generated, where the greedy answer alone may end sooner.",
    citation=f"{REQUEST}/min_tokens; {VLLM_SAMPLING}, min_tokens (\"Minimum number of tokens "
    "to generate per output sequence before EOS or stop_token_ids can be generated\")",
    source=API, probes=("min-tokens",), traits=OPENAI_WIRE, features=("min_tokens",),
    faults=("min-tokens-ignored",),
)
def min_tokens_holds_off_the_end(ctx: CheckContext) -> None:
    min_tokens_held(ctx)


@rule(
    "EXT-002", MUST, "ignore_eos runs to max_tokens",
    requirement=f"With ignore_eos (max_tokens {MAX_TOKENS}, no stop), the end-of-sequence token "
    f"does not end the choice: {MAX_TOKENS} tokens are generated, where the greedy answer alone "
    "may end sooner.",
    citation=f"{VLLM_REQUEST}/ignore_eos; {VLLM_SAMPLING}, ignore_eos (\"Whether to ignore the "
    "EOS token and continue generating tokens after the EOS token is generated\")",
    source=API, probes=("ignore-eos",), traits=OPENAI_WIRE, features=("ignore_eos",),
    faults=("ignore-eos-ignored",),
)
def ignore_eos_runs_to_max_tokens(ctx: CheckContext) -> None:
    _, completion, _ = usage_of(ctx, "ignore-eos", "ignore")
    if completion < MAX_TOKENS:
        raise Violation(
            f"the choice ended after {completion} of max_tokens {MAX_TOKENS} under ignore_eos",
            expected=MAX_TOKENS, actual=completion, path="usage.completion_tokens",
            exchange="ignore-eos/ignore", evidence=compact(choice_of(ctx, "ignore-eos", "ignore")),
        )


def _stop_token_outcome(ctx: CheckContext) -> tuple[dict[str, JSON], str, tuple[str, ...]]:
    """The stop-token choice, its text and the texts it may have: the greedy answer up to the
    stop token, without or with the token's own text."""
    before, token_text = ctx.note("stop-token-ids", "before"), ctx.note("stop-token-ids",
                                                                       "token_text")
    if not isinstance(before, str) or not isinstance(token_text, str):
        raise NotApplicable("stop-token-ids noted no greedy text before the stop token")
    choice = choice_of(ctx, "stop-token-ids", "stopped")
    return choice, text_of(choice, "stop-token-ids/stopped"), (before, before + token_text)


@rule(
    "EXT-003", MUST, "stop_token_ids end generation",
    requirement="With stop_token_ids naming a token of the greedy answer, the choice ends there "
    "with finish_reason \"stop\": its text is the greedy answer up to that token (with or "
    "without the token's own text).",
    citation=f"{VLLM_REQUEST}/stop_token_ids; {VLLM_SAMPLING}, stop_token_ids (\"Token IDs that "
    "stop the generation when they are generated\")",
    source=API, probes=("stop-token-ids",), traits=OPENAI_WIRE,
    features=("stop_token_ids", "return_tokens_as_token_ids"),
    faults=("stop-token-ids-ignored",),
)
def stop_token_ids_end_generation(ctx: CheckContext) -> None:
    choice, text, allowed = _stop_token_outcome(ctx)
    if text not in allowed:
        raise Violation(
            "the text does not end at the stop token",
            expected=" or ".join(repr(t) for t in allowed), actual=repr(text),
            path="choices[0].text", exchange="stop-token-ids/stopped", evidence=compact(choice),
        )
    if choice.get("finish_reason") != "stop":
        raise Violation(
            "the choice ended at the stop token without finish_reason \"stop\"",
            expected="stop", actual=choice.get("finish_reason"),
            path="choices[0].finish_reason", exchange="stop-token-ids/stopped",
            evidence=compact(choice),
        )


def _stop_token_reason(ctx: CheckContext) -> tuple[dict[str, JSON], JSON]:
    """The stop-token choice and the id that must be its stop_reason (if it stopped there)."""
    choice, text, allowed = _stop_token_outcome(ctx)
    if text not in allowed or choice.get("finish_reason") != "stop":
        raise NotApplicable("stop-token-ids/stopped did not end at the stop token (EXT-003)")
    ids = ctx.request("stop-token-ids", "stopped").get("stop_token_ids")
    return choice, ids[0] if isinstance(ids, list) and ids else None


def _stop_string_reason(ctx: CheckContext) -> tuple[dict[str, JSON], JSON]:
    """The include-stop choice and its stop string, if it ended with finish_reason stop."""
    choice = choice_of(ctx, "include-stop", "ns")
    if choice.get("finish_reason") != "stop":
        raise NotApplicable("include-stop/ns did not end on its stop string (EXT-005)")
    stops = ctx.request("include-stop", "ns").get("stop")
    return choice, stops[0] if isinstance(stops, list) and stops else None


@rule(
    "EXT-004", MUST, "stop_reason names what stopped the choice",
    requirement="A choice that a stop token id or a stop string ended carries that id or that "
    "string as stop_reason.",
    citation=f"{VLLM_CHOICE}/stop_reason; vLLM CompletionResponseChoice.stop_reason (\"The stop "
    "string or token id that caused the completion to stop\"), {VLLM_SERVER}",
    source=API, probes=("stop-token-ids", "include-stop"), traits=OPENAI_WIRE,
    features=("stop_token_ids", "include_stop_str_in_output"),
    faults=("stop-reason-null",),
)
def stop_reason_names_the_stop(ctx: CheckContext) -> None:
    readers = {"stop-token-ids/stopped": lambda: _stop_token_reason(ctx),
               "include-stop/ns": lambda: _stop_string_reason(ctx)}
    for label, (choice, expected) in judgeable(readers):
        actual = choice.get("stop_reason", "(absent)")
        if actual != expected or isinstance(actual, bool):
            raise Violation(
                "stop_reason does not name the stop that ended the choice",
                expected=expected, actual=actual, path="choices[0].stop_reason",
                exchange=label, evidence=compact(choice),
            )


def _with_stop_string(ctx: CheckContext) -> str:
    """The greedy answer up to and with the first occurrence of the probe's stop string."""
    baseline = text_of(choice_of(ctx, "include-stop", "baseline"), "include-stop/baseline")
    stops = ctx.request("include-stop", "ns").get("stop")
    stop = stops[0] if isinstance(stops, list) and stops else None
    if not isinstance(stop, str) or stop not in baseline:
        raise NotApplicable("include-stop's stop string is not in its greedy answer")
    return baseline[:baseline.index(stop) + len(stop)]


@rule(
    "EXT-005", MUST, "include_stop_str_in_output keeps the stop string",
    requirement="With a stop string taken from the greedy answer and include_stop_str_in_output, "
    "the text (streamed or not) is the greedy answer up to and including the stop string.",
    citation=f"{VLLM_REQUEST}/include_stop_str_in_output; {VLLM_SAMPLING}, "
    "include_stop_str_in_output (\"Whether to include the stop strings in output text\")",
    source=API, probes=("include-stop",), traits=OPENAI_WIRE,
    features=("include_stop_str_in_output", "stop"),
    faults=("stop-string-left-out",),
)
def include_stop_str_keeps_the_stop_string(ctx: CheckContext) -> None:
    expected = _with_stop_string(ctx)
    readers = {
        "include-stop/ns": lambda: text_of(choice_of(ctx, "include-stop", "ns"),
                                           "include-stop/ns"),
        "include-stop/s": lambda: assembled(ctx, "include-stop", "s")[0].text,
    }
    for label, text in judgeable(readers):
        if text != expected:
            raise Violation(
                "the text is not the greedy answer through the stop string",
                expected=repr(expected), actual=repr(text), path="choices[0].text",
                exchange=label,
            )


@rule(
    "EXT-006", MUST, "return_tokens_as_token_ids names tokens by id",
    requirement="With return_tokens_as_token_ids, every token of logprobs.tokens and every key "
    "of logprobs.top_logprobs is \"token_id:N\".",
    citation=f"{VLLM_REQUEST}/return_tokens_as_token_ids; {VLLM_SERVER}, Extra parameters, "
    "return_tokens_as_token_ids",
    source=API, probes=("token-id-names",), traits=OPENAI_WIRE,
    features=("return_tokens_as_token_ids", "logprobs"),
    faults=("tokens-named-by-text",),
)
def tokens_named_by_id(ctx: CheckContext) -> None:
    for index, choice in choices_of(ctx, "token-id-names", "ids").items():
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            raise NotApplicable("token-id-names/ids has no logprobs object (LOGPROBS rules)")
        names: list[tuple[str, JSON]] = []
        tokens = logprobs.get("tokens")
        if isinstance(tokens, list):
            names.extend((f"choices[{index}].logprobs.tokens[{i}]", t)
                         for i, t in enumerate(tokens))
        tops = logprobs.get("top_logprobs")
        if isinstance(tops, list):
            names.extend((f"choices[{index}].logprobs.top_logprobs[{i}]", key)
                         for i, top in enumerate(tops) if isinstance(top, dict) for key in top)
        for path, name in names:
            if not isinstance(name, str) or TOKEN_ID_NAME.fullmatch(name) is None:
                raise Violation(
                    "a token is not named token_id:N", expected="token_id:N", actual=name,
                    path=path, exchange="token-id-names/ids",
                )


def _prompt_logprobs(ctx: CheckContext) -> dict[int, tuple[dict[str, JSON], JSON]]:
    return {index: (choice, choice.get("prompt_logprobs", "(absent)"))
            for index, choice in choices_of(ctx, "prompt-logprobs", "ranked").items()}


def _position_problem(entry: JSON, position: int) -> str | None:
    """What is wrong with one prompt position's entry, or None."""
    if position == 0:
        return None if entry is None else "the first prompt token's entry is not null"
    if not isinstance(entry, dict) or not 1 <= len(entry) <= PROMPT_LOGPROBS + 1:
        return (f"not an object of 1 to {PROMPT_LOGPROBS + 1} tokens (the prompt token and "
                f"the top {PROMPT_LOGPROBS})")
    for key, value in entry.items():
        if not key.isascii() or not key.isdigit():
            return f"key {key!r} is not a token id"
        logprob = value.get("logprob") if isinstance(value, dict) else None
        rank = value.get("rank") if isinstance(value, dict) else None
        if isinstance(logprob, bool) or not isinstance(logprob, (int, float)) or logprob > 0:
            return f"token {key}: logprob {logprob!r} is not a number <= 0"
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int)
                                 or rank < 1):
            return f"token {key}: rank {rank!r} is not an integer >= 1"
    return None


@rule(
    "EXT-007", MUST, "prompt_logprobs are shaped as vLLM's",
    requirement=f"With prompt_logprobs {PROMPT_LOGPROBS}, each choice's prompt_logprobs is a list "
    "whose first entry is null and whose others map token ids to {logprob <= 0, rank >= 1, "
    f"decoded_token}}, the prompt token and at most {PROMPT_LOGPROBS} more.",
    citation=f"{SCHEMAS}/VllmPromptLogprobs; {VLLM_SAMPLING}, prompt_logprobs (\"Number of log "
    "probabilities to return per prompt token\")",
    source=API, probes=("prompt-logprobs",), traits=OPENAI_WIRE, features=("prompt_logprobs",),
    faults=("prompt-logprobs-keyed-by-text",),
)
def prompt_logprobs_shaped(ctx: CheckContext) -> None:
    for index, (_, entries) in _prompt_logprobs(ctx).items():
        if not isinstance(entries, list):
            raise Violation(
                "prompt_logprobs was asked for and is not a list", expected="a list",
                actual=entries, path=f"choices[{index}].prompt_logprobs",
                exchange="prompt-logprobs/ranked",
            )
        for position, entry in enumerate(entries):
            problem = _position_problem(entry, position)
            if problem is not None:
                raise Violation(
                    f"prompt_logprobs[{position}]: {problem}", expected="vLLM's shape",
                    actual=entry, path=f"choices[{index}].prompt_logprobs[{position}]",
                    exchange="prompt-logprobs/ranked",
                )


@rule(
    "EXT-008", MUST, "prompt_logprobs has one entry per prompt token",
    requirement="Each choice's prompt_logprobs has as many entries as the prompt has tokens "
    "(usage.prompt_tokens of a one-prompt request).",
    citation=f"{SCHEMAS}/VllmPromptLogprobs (\"One entry per prompt token\"); {VLLM_SAMPLING}, "
    "prompt_logprobs (\"per prompt token\")",
    source=API, probes=("prompt-logprobs",), traits=OPENAI_WIRE, features=("prompt_logprobs",),
    faults=("prompt-logprobs-last-missing",),
)
def prompt_logprobs_per_prompt_token(ctx: CheckContext) -> None:
    prompt, _, _ = usage_of(ctx, "prompt-logprobs", "ranked")
    for index, (_, entries) in _prompt_logprobs(ctx).items():
        if not isinstance(entries, list):
            raise NotApplicable("prompt_logprobs is not a list (judged by EXT-007)")
        if len(entries) != prompt:
            raise Violation(
                f"{len(entries)} prompt_logprobs entries for {prompt} prompt tokens",
                expected=prompt, actual=len(entries),
                path=f"choices[{index}].prompt_logprobs", exchange="prompt-logprobs/ranked",
            )
