"""Which rules can judge one exchange (fuzzed or recorded), and where to put it so they can.

A rule's check reads named probes (:class:`~conformance.run.check_context.CheckContext`). A
``scan`` rule judges every valid completion it is given, so one fuzzed exchange is simply a
probe of its own. Other rules read one exchange of a known shape (``greedy/s`` is a stream;
``logprobs/ln`` asks for ``logprobs`` N and notes N): for those a *binding* says which fuzzed
requests have that shape and files the exchange under that probe and key, with the notes the
probe would have taken. The check functions are the catalog's own; only the placing is new
here.

Bindings are conservative: a request is bound only when the rule's requirement holds for it as
it does for the probe (no stop strings where the tokens must spell the text, one choice where
usage is compared with ``max_tokens``), so a fuzz run reports only real deviations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from conformance.model import Rule
from conformance.model.named import NamedRegistry
from conformance.probes.model import ProbeOutcome, ok_json
from conformance.views import expected_choices, logprob_arrays, stop_strings
from spec import JSON

from .sample import NOT_JUDGED_STATUSES, Sample

Outcomes = Mapping[str, ProbeOutcome]
Binder = Callable[[Sample], Outcomes | None]

BINDERS: NamedRegistry[Binder] = NamedRegistry("fuzz binding")
"""The shapes of exchange a rule can name as its ``fuzz`` binding, and how a fuzzed exchange
gets each shape; the rule catalog checks each rule's binding against it as the rule registers."""


def binder(shape: str) -> Callable[[Binder], Binder]:
    """Decorator: register the decorated function as the binding of ``shape``."""

    def register(function: Binder) -> Binder:
        return BINDERS.add(shape, function)

    return register


def _filed(probe: str, key: str, sample: Sample, notes: dict[str, JSON] | None = None,
           *, invalid: bool = False) -> Outcomes:
    outcome = ProbeOutcome(probe, exchanges={key: sample.exchange}, requests={key: sample.body},
                           notes=notes or {}, invalid={key} if invalid else set())
    return {probe: outcome}


def scan(sample: Sample) -> Outcomes | None:
    """Every valid completion request: what ``scan`` rules read."""
    return _filed("fuzz", "case", sample) if sample.valid else None


@binder("invalid")
def invalid(sample: Sample) -> Outcomes | None:
    """A request the contract rejects, as one case of the ``invalid`` probe."""
    if sample.operation != "completions" or not sample.verdict.invalid or not sample.sent_json:
        return None
    if sample.exchange.status in NOT_JUDGED_STATUSES:
        return None
    case = {"kind": sample.verdict.kind, "why": sample.verdict.why, "stream": sample.streamed}
    return _filed("invalid", "case", sample, {"cases": {"case": case}}, invalid=True)


@binder("usage-stream")
def usage_stream(sample: Sample) -> Outcomes | None:
    """A stream with ``stream_options.include_usage`` true, as ``greedy/s``."""
    options = sample.request.get("stream_options")
    wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    if sample.valid and sample.streamed and wants_usage:
        return _filed("greedy", "s", sample)
    return None


@binder("usage-unrequested")
def usage_unrequested(sample: Sample) -> Outcomes | None:
    """A stream whose ``stream_options`` do not ask for usage, as ``usage-matrix/absent``,
    ``empty`` or ``false``."""
    if not sample.valid or not sample.streamed:
        return None
    options = sample.request.get("stream_options")
    if options is None:
        key = "absent"
    elif isinstance(options, dict) and options.get("include_usage") is False:
        key = "false"
    elif isinstance(options, dict) and options.get("include_usage") is None:
        key = "empty"
    else:
        return None
    return _filed("usage-matrix", key, sample)


@binder("any-plain")
def any_plain(sample: Sample) -> Outcomes | None:
    """Any valid non-streamed request, as ``greedy/ns``."""
    return _filed("greedy", "ns", sample) if sample.valid and not sample.streamed else None


@binder("any-stream")
def any_stream(sample: Sample) -> Outcomes | None:
    """Any valid stream, as ``greedy/s``."""
    return _filed("greedy", "s", sample) if sample.valid and sample.streamed else None


def _one_plain_choice(sample: Sample) -> bool:
    body = sample.request
    return (
        sample.valid and not sample.streamed and expected_choices(body) == 1
        and not body.get("echo") and body.get("best_of") in (None, 1)
        and isinstance(body.get("max_tokens"), int)
    )


@binder("length-short")
def length_short(sample: Sample) -> Outcomes | None:
    """One non-streamed choice with an explicit ``max_tokens``, as ``length/short``."""
    return _filed("length", "short", sample) if _one_plain_choice(sample) else None


@binder("greedy-plain")
def greedy_plain(sample: Sample) -> Outcomes | None:
    """One non-streamed choice with an explicit ``max_tokens``, as ``greedy/ns``."""
    return _filed("greedy", "ns", sample) if _one_plain_choice(sample) else None


STOP_BLIND = ("echo", "suffix", "min_tokens", "min_total_tokens", "forced_output_tokens",
              "include_stop_str_in_output")
"""Fields under which the returned text may hold a stop string: echo and a suffix add text
that was not generated, ``min_tokens`` / ``min_total_tokens`` hold stop strings off,
FriendliAI says nothing of stop strings inside ``forced_output_tokens``, and vLLM's
``include_stop_str_in_output`` keeps the matched one by design (EXT rules judge it)."""


@binder("stopped")
def stopped(sample: Sample) -> Outcomes | None:
    """A request with stop strings, as ``stop/ns``, or ``stop/s`` when streamed: no choice's
    text, joined from a stream or not, may contain them (not under :data:`STOP_BLIND`)."""
    body = sample.request
    if not sample.valid or any(body.get(name) for name in STOP_BLIND):
        return None
    if not stop_strings(sample.request):
        return None
    return _filed("stop", "s" if sample.streamed else "ns", sample)


SAMPLING_FIELDS = frozenset({"model", "prompt", "tokens", "max_tokens", "n", "temperature", "seed",
                             "logprobs", "stream", "user", "top_p"})
"""What a request may hold for its choices' chance of coinciding to be read from their logprobs:
no truncation but a neutral ``top_p``, no penalty, bias, ban, stop or grammar."""
COINCIDENCE = -20.0
"""A first choice whose tokens' summed logprob is below this (a joint probability under
2e-9) is one an independent second choice repeats only by a chance no run will meet."""


def _unlikely_to_repeat(choice: JSON) -> bool:
    arrays = logprob_arrays(choice.get("logprobs")) if isinstance(choice, dict) else None
    values = arrays["token_logprobs"] if arrays is not None else []
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return bool(values) and len(numbers) == len(values) and all(v <= 0 for v in numbers) and (
        sum(numbers) < COINCIDENCE)


@binder("independent-samples")
def independent_samples(sample: Sample) -> Outcomes | None:
    """A non-streamed ``n`` >= 2 at temperature 1 on one prompt, unseeded or with one integer
    seed, as ``n-sampling/first`` and ``second`` (and ``seeded`` when seeded): its choices may
    all be equal only by a chance its logprobs show to be negligible (:data:`COINCIDENCE`), so
    it is bound only when they do."""
    body = sample.request
    n, seed = body.get("n"), body.get("seed")
    if not sample.valid or sample.streamed or not set(body) <= SAMPLING_FIELDS:
        return None
    if not isinstance(n, int) or isinstance(n, bool) or n < 2 or body.get("temperature") != 1:
        return None
    if body.get("top_p") not in (None, 1) or isinstance(seed, (bool, list)):
        return None
    if expected_choices(body) != n:  # one prompt: its n choices are the ones compared
        return None
    answer = ok_json(sample.exchange)
    choices = answer.get("choices") if answer is not None else None
    if not isinstance(choices, list) or not choices or not _unlikely_to_repeat(choices[0]):
        return None
    keys = ("first", "second", "seeded") if isinstance(seed, int) else ("first", "second")
    outcome = ProbeOutcome("n-sampling", exchanges=dict.fromkeys(keys, sample.exchange),
                           requests=dict.fromkeys(keys, sample.body))
    return {"n-sampling": outcome}


@binder("no-repeat-ngram")
def no_repeat_ngram(sample: Sample) -> Outcomes | None:
    """A non-streamed FriendliAI request with ``no_repeat_ngram`` >= 2, as
    ``no-repeat-ngram/banned``: no n-gram of its generated ids may occur twice. Not with
    ``forced_output_tokens``, which may force one, nor a ``response_format``, whose grammar
    may leave a repeat the only way on."""
    body = sample.request
    size = body.get("no_repeat_ngram")
    if not sample.valid or sample.streamed or any(
            body.get(name) for name in ("forced_output_tokens", "response_format")):
        return None
    if not isinstance(size, int) or isinstance(size, bool) or size < 2:
        return None
    return _filed("no-repeat-ngram", "banned", sample)


@binder("forced-output")
def forced_output(sample: Sample) -> Outcomes | None:
    """A non-streamed FriendliAI request with ``forced_output_tokens``, as
    ``forced-output/forced``: its choice's tokens begin with them. Not where something else
    may end the output before they are all out: ``max_tokens`` below their number (or left to
    the server's default), a total-token bound, stop strings or tokens, banned words, or a
    ``response_format`` grammar."""
    body = sample.request
    forced = body.get("forced_output_tokens")
    if not sample.valid or sample.streamed or not isinstance(forced, list) or not forced:
        return None
    if any(body.get(name) is not None for name in (
            "max_total_tokens", "stop", "stop_tokens", "bad_words", "bad_word_tokens",
            "response_format")):
        return None
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < len(forced):
        return None
    return _filed("forced-output", "forced", sample, notes={"forced": forced})


@binder("plain")
def plain(sample: Sample) -> Outcomes | None:
    """Any valid non-streamed request, as ``batch/ns``."""
    return _filed("batch", "ns", sample) if sample.valid and not sample.streamed else None


def _first_prompt(body: Mapping[str, JSON]) -> str | None:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        prompt = prompt[0]
    return prompt if isinstance(prompt, str) else None


TOKENS_AS_IDS = "return_tokens_as_token_ids"
"""vLLM's switch that names every logprobs token ``token_id:{id}`` instead of its text: the
tokens then spell no text by design (EXT rules judge the switch)."""
TEXT_CHANGERS = ("echo", "suffix", "stop", "stop_tokens", "eos_token", "bad_words",
                 "bad_word_tokens", "forced_output_tokens", TOKENS_AS_IDS)
"""Fields after which the logprobs tokens need not spell exactly the generated text."""


@binder("logprobs")
def logprobs(sample: Sample) -> Outcomes | None:
    """``logprobs`` N on a text prompt, as ``logprobs/l0`` (N = 0), ``ln`` or ``ln_s``."""
    body = sample.request
    top, prompt = body.get("logprobs"), _first_prompt(body)
    if not sample.valid or not isinstance(top, int) or prompt is None:
        return None
    if any(body.get(name) not in (None, False, [], "") for name in TEXT_CHANGERS):
        return None
    if sample.streamed:
        key = "ln_s" if top >= 1 else None
    else:
        key = "ln" if top >= 1 else "l0"
    if key is None:
        return None
    return _filed("logprobs", key, sample, {"prompt": prompt, "top": top})


@binder("echo-scored")
def echo_scored(sample: Sample) -> Outcomes | None:
    """A non-streamed ``echo`` with ``logprobs`` on a non-empty text prompt, as ``echo/ns``
    (an empty prompt echoes nothing, so its first logprob is a generated token's)."""
    body = sample.request
    prompt = _first_prompt(body)
    if not sample.valid or sample.streamed or body.get("echo") is not True or not prompt:
        return None
    if not isinstance(body.get("logprobs"), int) or body.get("suffix") or body.get(TOKENS_AS_IDS):
        return None
    return _filed("echo", "ns", sample, {"prompt": prompt})


@binder("models-list")
def models_list(sample: Sample) -> Outcomes | None:
    """``GET /models``, as ``models/list``."""
    return _filed("models", "list", sample) if sample.operation == "models" else None


def binder_for(rule: Rule) -> Binder | None:
    """How ``rule`` reads a fuzzed exchange (its ``fuzz`` shape); None when it needs more than
    one."""
    if rule.scan:
        return scan
    return BINDERS[rule.fuzz] if rule.fuzz is not None else None
