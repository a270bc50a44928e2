"""Reference engine benchmark: tokens/s per sampling path, load time and resident memory.

Run: ``python benchmarks/bench_engine.py [--tokens N]``. Prints a Markdown table for the
performance page (``docs/performance.md``). Targets (issue 11, the 2-core machine, one stream):
>= 50,000 tokens/s at temperature 1; >= 30,000 at temperature 0.8 and at top_p 0.9;
>= 10,000 with every processor on; greedy >= 100,000; load < 0.5 s, engine memory < 100 MB.
Not a test: timings belong in benchmarks, not in CI.

Tokens/s move with whatever else runs on the machine; instructions do not. Instructions per
token of one path: run it under callgrind with ``--tokens N`` and with ``--tokens 0`` (both
after the same ``--warmup``, which builds the per-temperature tables and fills the caches) and
divide the difference by N. Even with a fixed hash seed and no address randomisation the
count moves by a few percent from run to run (object addresses still vary), so compare
alternated runs of both versions::

    PYTHONHASHSEED=0 setarch -R valgrind --tool=callgrind \
        python benchmarks/bench_engine.py --only "top_p 0.9" --warmup 2000 --tokens 2000

Each path is measured as the issue measures it: ``Engine.complete`` in a loop, one request
at a time (at most 1,000 tokens each, a new seed per request), end-of-text allowed, until
``--tokens`` tokens were generated. Requests reach the engine's per-context caches as the
mock's requests do: one engine serves them all, in the order of the table. "every processor
on" bans end-of-text with logit_bias (a processor like the others), so it runs its full length.
The ``response_format`` rows (FriendliAI's structured outputs) run the same way; their tokens/s
include compiling the grammar (cached after the first request) and every grammar check.

Where a path's time goes: ``--only NAME --stages`` times the engine's stages of that path
(the model's distribution, the processors, the draw and its truncation, the top logprobs)
and prints microseconds per token for each, the generation loop's own work (stops, UTF-8
state, decoding, events) being the rest. Each stage is timed by a wrapper around the function
that does it (~0.2 us per call of its own), so the stages add up to a little more than a run
without them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from reference_engine import Engine, GenerationRequest, SamplingParams

PROMPT = ("The Python language",)


def _throughput(engine: Engine, tokens: int, first_seed: int, **kwargs: Any) -> float:
    """Tokens per second of requests of at most 1,000 tokens until ``tokens`` were made."""
    generated, elapsed, seed = 0, 0.0, first_seed
    while generated < tokens:
        request = GenerationRequest(
            prompts=PROMPT, seed=seed, max_tokens=min(1000, tokens - generated), **kwargs
        )
        start = time.perf_counter()
        completion = engine.complete(request)
        elapsed += time.perf_counter() - start
        generated += completion.usage.completion_tokens
        seed += 1
    return generated / elapsed if elapsed else 0.0


def _paths(eot: int) -> list[tuple[str, dict[str, Any], str]]:
    """(row name, request fields, target) per measured path."""
    every = SamplingParams(
        temperature=0.8, top_p=0.9, top_k=50, min_p=0.01, presence_penalty=0.5,
        frequency_penalty=0.5, repetition_penalty=1.1, no_repeat_ngram=4,
        logit_bias={eot: -100.0}, bad_word_tokens=((5, 6),), xtc_threshold=0.3,
        xtc_probability=0.5)
    return [
        ("temperature 1 (default sampling)", {}, ">= 50,000"),
        ("temperature 0.8", {"sampling": SamplingParams(temperature=0.8)}, ">= 30,000"),
        ("temperature 0.8 + min_tokens (end-of-text banned)",
         {"sampling": SamplingParams(temperature=0.8, min_tokens=1000)}, ""),
        ("top_p 0.9", {"sampling": SamplingParams(top_p=0.9)}, ">= 30,000"),
        ("temperature 0.8 + top_p 0.9", {"sampling": SamplingParams(temperature=0.8, top_p=0.9)},
         ""),
        ("top_k 40", {"sampling": SamplingParams(top_k=40)}, ""),
        ("greedy (temperature 0)", {"sampling": SamplingParams(temperature=0.0)}, ">= 100,000"),
        ("logprobs 5 (temperature 1)", {"logprobs": 5}, ""),
        ("every processor on (penalties, bans, logit_bias, top_k, top_p, min_p, XTC, "
         "logprobs 5)", {"logprobs": 5, "stop": ("\x00",), "sampling": every}, ">= 10,000"),
        *((f"response_format {name}", {"sampling": SamplingParams(**fields)}, "")
          for name, fields in RESPONSE_FORMATS.items()),
    ]


RESPONSE_FORMATS: dict[str, dict[str, Any]] = {
    "json_object": {"response_format": "json_object"},
    "json_schema": {"response_format": "json_schema", "response_schema": {
        "type": "object", "required": ["name", "tags", "count"], "properties": {
            "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
            "count": {"type": "integer"}}}},
    "regex": {"response_format": "regex", "response_schema": "[a-c]{2,4}-[0-9]+"},
}


# (label, module, attribute): where each stage's function is looked up on the token loop's
# path. A label with a colon names a part of the stage before the colon (the draw's parts also
# run inside the sparse draw when it falls back to the dense one).
STAGES = (
    ("model's dense distribution", "reference_engine.model.language_model",
     "LanguageModel.logprobs"),
    ("model's sparse view", "reference_engine.model.language_model",
     "LanguageModel.sparse_logprobs"),
    ("processors and normalisation", "reference_engine.generation.choice", "process_logits"),
    ("processors and normalisation: the sparse log-softmax",
     "reference_engine.sampling.logprobs", "_sparse_log_softmax"),
    ("dense draw", "reference_engine.generation.choice", "sample"),
    ("sparse draw", "reference_engine.generation.choice", "sample_sparse"),
    ("draw: the weights (exp)", "reference_engine.sampling.sampler", "_weights"),
    ("draw: the sort for top_p", "reference_engine.sampling.sampler", "_descending"),
    ("draw: the top_k head", "reference_engine.sampling.sampler", "_top_k_candidates"),
    ("draw: the truncation filters", "reference_engine.sampling.sampler", "_truncate"),
    ("draw: the inverse CDF", "reference_engine.sampling.sampler", "_draw"),
    ("top logprobs (dense)", "reference_engine.generation.choice", "top_logprobs"),
)


@contextlib.contextmanager
def _timed_stages() -> Iterator[dict[str, float]]:
    """Wrap every function of ``STAGES`` with a timer; yields seconds spent per label."""
    import importlib

    spent: dict[str, float] = {}
    restore: list[tuple[Any, str, Any]] = []

    def timer(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
        return timed

    for label, module_name, attribute in STAGES:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)
        restore.append((owner, name, original))
        setattr(owner, name, timer(label, original))
    try:
        yield spent
    finally:
        for owner, name, original in reversed(restore):
            setattr(owner, name, original)


def _print_stages(engine: Engine, tokens: int, fields: dict[str, Any]) -> None:
    """Microseconds per token of each stage of one path (see the module docstring)."""
    with _timed_stages() as spent:
        start = time.perf_counter()
        generated = 0
        seed = 1
        while generated < tokens:
            request = GenerationRequest(prompts=PROMPT, seed=seed,
                                        max_tokens=min(1000, tokens - generated), **fields)
            generated += engine.complete(request).usage.completion_tokens
            seed += 1
        total = time.perf_counter() - start
    print("| stage | us per token |")
    print("|---|---|")
    print(f"| everything | {total / generated * 1e6:.1f} |")
    top_level = 0.0
    for label, _, _ in STAGES:
        seconds = spent.get(label, 0.0)
        if not seconds:
            continue
        if ":" not in label:
            top_level += seconds
        print(f"| {label} | {seconds / generated * 1e6:.1f} |")
    rest = (total - top_level) / generated * 1e6
    print(f"| the generation loop's own work (the rest) | {rest:.1f} |")


_LOAD_PROBE = """
import time, json
def rss_mb():
    # Current resident set (ru_maxrss would carry the parent's peak across fork/exec).
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
t0 = time.perf_counter()
from reference_engine import Engine, GenerationRequest
import_done = time.perf_counter()
engine = Engine(); engine.load()
loaded = time.perf_counter()
rss_loaded = rss_mb()
engine.complete(GenerationRequest(prompts=("The Python language",), seed=1, max_tokens=2000))
rss_run = rss_mb()
print(json.dumps({"import_s": import_done - t0, "load_s": loaded - import_done,
                  "rss_loaded_mb": rss_loaded, "rss_after_run_mb": rss_run}))
"""

_BASELINE_PROBE = """
import json, numpy
rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:"))
print(json.dumps({"rss_mb": rss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20000, help="tokens per measured path")
    parser.add_argument("--only", metavar="NAME", help="measure only the path of this row name, "
                        "without the load and memory probes (for callgrind)")
    parser.add_argument("--warmup", type=int, default=0,
                        help="tokens generated per path (other seeds) before measuring it")
    parser.add_argument("--stages", action="store_true",
                        help="with --only: microseconds per token of each of the engine's "
                        "stages on that path, instead of tokens/s")
    args = parser.parse_args()
    if args.stages and args.only is None:
        parser.error("--stages needs --only NAME (one path)")
    engine = Engine()
    engine.load()
    for number, (name, fields, _) in enumerate(_paths(engine.tokenizer.eot_id)):
        if args.warmup and (args.only is None or args.only == name):
            _throughput(engine, args.warmup, 10**6 + 1000 * number, **fields)
    if args.stages:
        fields = next(fields for name, fields, _ in _paths(engine.tokenizer.eot_id)
                      if name == args.only)
        _print_stages(engine, args.tokens, fields)
        return
    rows = [
        (name, _throughput(engine, args.tokens, 1000 * number, **fields), target)
        for number, (name, fields, target) in enumerate(_paths(engine.tokenizer.eot_id))
        if args.only is None or args.only == name
    ]
    if args.only is not None:
        for name, value, _ in rows:
            print(f"| {name} | {value:,.0f} tokens/s |")
        return
    probe = json.loads(subprocess.run([sys.executable, "-c", _LOAD_PROBE], capture_output=True,
                                      text=True, check=True).stdout)
    baseline = json.loads(subprocess.run([sys.executable, "-c", _BASELINE_PROBE],
                                         capture_output=True, text=True, check=True).stdout)
    print("| measurement | result | target |")
    print("|---|---|---|")
    for name, value, target in rows:
        print(f"| {name} | {value:,.0f} tokens/s | {target} |")
    print(f"| artifact load (fresh process) | {probe['load_s'] * 1000:.0f} ms | < 500 ms |")
    print(f"| import of reference_engine | {probe['import_s'] * 1000:.0f} ms | |")
    engine_mb = probe["rss_after_run_mb"] - baseline["rss_mb"]
    print(f"| engine memory (RSS after a 2,000-token run minus Python+numpy) | {engine_mb:.0f} MB "
          f"(process {probe['rss_after_run_mb']:.0f} MB) | < 100 MB |")


if __name__ == "__main__":
    main()
