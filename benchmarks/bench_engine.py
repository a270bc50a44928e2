"""Reference engine benchmark: single-stream tokens/s, load time and resident memory.

Run: ``python benchmarks/bench_engine.py [--tokens N]``. Prints a Markdown table for the
README's performance section. Targets (issue 3, one core of the 2-core CI machine):
>= 20,000 tokens/s with default sampling, >= 5,000 tokens/s with every processor on,
load < 0.5 s, engine memory < 100 MB. Not a test: timings belong in benchmarks, not in CI.

End-of-text is banned with logit_bias -100 in the throughput runs (except where noted) so every
run generates exactly the requested number of tokens; the bias alone costs one processor pass,
so the "default sampling" row also reports a run without it (stopping at EOS, restarted
until the token count is reached). The ``response_format`` rows cannot ban EOS (the grammar
decides when it may come), so they run like that row too: requests with seeds 0, 1, ... until
the token count is reached; their tokens/s include compiling the grammar (cached after the
first request) and every grammar check.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from reference_engine import Engine, GenerationRequest, SamplingParams

PROMPT = ("The Python language",)


def _throughput(engine: Engine, tokens: int, **kwargs: object) -> float:
    """Tokens per second of one stream of ``tokens`` tokens (best of three)."""
    best = 0.0
    for seed in range(3):
        request = GenerationRequest(  # type: ignore[arg-type]
            prompts=PROMPT, seed=seed, max_tokens=tokens, **kwargs
        )
        start = time.perf_counter()
        completion = engine.complete(request)
        elapsed = time.perf_counter() - start
        best = max(best, completion.usage.completion_tokens / elapsed)
    return best


RESPONSE_FORMATS: dict[str, dict[str, object]] = {
    "json_object": {"response_format": "json_object"},
    "json_schema": {"response_format": "json_schema", "response_schema": {
        "type": "object", "required": ["name", "tags", "count"], "properties": {
            "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
            "count": {"type": "integer"}}}},
    "regex": {"response_format": "regex", "response_schema": "[a-c]{2,4}-[0-9]+"},
}


def _default_without_bias(engine: Engine, tokens: int,
                          sampling: SamplingParams | None = None) -> float:
    """Tokens per second over requests run until ``tokens`` tokens (EOS ends each one)."""
    generated, elapsed, seed = 0, 0.0, 0
    while generated < tokens:
        request = GenerationRequest(
            prompts=PROMPT, seed=seed, max_tokens=min(1000, tokens - generated),
            sampling=sampling or SamplingParams(),
        )
        start = time.perf_counter()
        completion = engine.complete(request)
        elapsed += time.perf_counter() - start
        generated += completion.usage.completion_tokens
        seed += 1
    return generated / elapsed


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
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per measured stream")
    args = parser.parse_args()
    engine = Engine()
    engine.load()
    eot = engine.tokenizer.eot_id
    no_eos = {eot: -100.0}
    rows = [
        ("default sampling (temperature 1)", _default_without_bias(engine, args.tokens),
         ">= 20,000"),
        ("default sampling, EOS banned by logit_bias", _throughput(
            engine, args.tokens, sampling=SamplingParams(logit_bias=no_eos)), ""),
        ("greedy (temperature 0)", _throughput(
            engine, args.tokens, sampling=SamplingParams(temperature=0.0, logit_bias=no_eos)), ""),
        ("top_p + penalties + logit_bias", _throughput(engine, args.tokens, sampling=SamplingParams(
            top_p=0.9, presence_penalty=0.5, frequency_penalty=0.5, logit_bias=no_eos)), ""),
        ("logprobs=5", _throughput(engine, args.tokens, logprobs=5,
                                   sampling=SamplingParams(logit_bias=no_eos)), ""),
        ("every processor on", _throughput(engine, args.tokens, logprobs=5, stop=("\x00",),
                                           sampling=SamplingParams(
            temperature=0.8, top_p=0.9, top_k=50, min_p=0.01, presence_penalty=0.5,
            frequency_penalty=0.5, repetition_penalty=1.1, no_repeat_ngram=4,
            logit_bias=no_eos, bad_word_tokens=((5, 6),), xtc_threshold=0.3,
            xtc_probability=0.5)), ">= 5,000"),
    ]
    for name, fields in RESPONSE_FORMATS.items():
        params = SamplingParams(**fields)  # type: ignore[arg-type]
        rows.append((f"response_format {name}", _default_without_bias(
            engine, args.tokens, params), ""))
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
