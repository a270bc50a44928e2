"""Fuzz benchmark: examples per second against the mock, with and without the catalog's rules.

Run: ``python benchmarks/bench_fuzz.py [--max-examples N] [--rounds R] [--workers W]``. Starts
the embedded mock once, then fuzzes it in this process, alternating two configurations that
differ only in the checks: schemathesis' six checks plus every rule the profile can fuzz
(what ``conformance fuzz`` runs), and schemathesis' six checks alone (``--deselect '*'``). Same
seed, same hooks, same caps and deserializer, so both send the same requests; the ratio is the
price of judging each response with the rules. Prints a Markdown table (best of ``rounds``).
Not a test: timings belong in benchmarks, not in CI.
"""

from __future__ import annotations

import argparse
import time

import spec
from conformance.fuzz import Caps, FuzzConfig, fuzz
from conformance.run.settings import Settings
from conformance.target.embedded import EmbeddedMock

CONFIGURATIONS = {
    "schemathesis checks + catalog rules": (),
    "schemathesis checks only": ("*",),
}


def _settings(mock: EmbeddedMock, profile_name: str) -> Settings:
    chosen = spec.get_profile(profile_name)
    return Settings(base_url=mock.url_for(chosen), profile=chosen, model="reference-ngram",
                    features=chosen.features)


def _rate(settings: Settings, *, max_examples: int, workers: int, phases: tuple[str, ...],
          deselect: tuple[str, ...]) -> tuple[float, int, int]:
    """(examples per second, examples, rules judged) of one fuzz run."""
    config = FuzzConfig(max_examples=max_examples, seed=1, workers=workers, phases=phases,
                        caps=Caps(max_tokens=16), deselect=deselect, shrink=False)
    started = time.perf_counter()
    result = fuzz(settings, config)
    elapsed = time.perf_counter() - started
    if result.findings or result.errors:
        raise SystemExit(f"the clean mock should pass: {result.findings[:1]} {result.errors[:1]}")
    rules = sum(1 for name in result.checks if name[:1].isupper())
    return result.examples / elapsed, result.examples, rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", default="openai")
    parser.add_argument("--phases", default="coverage,fuzzing")
    args = parser.parse_args()
    phases = tuple(args.phases.split(","))
    best: dict[str, tuple[float, int, int]] = {}
    with EmbeddedMock() as mock:
        settings = _settings(mock, args.profile)
        _rate(settings, max_examples=20, workers=args.workers, phases=phases, deselect=())
        for _ in range(args.rounds):
            for name, deselect in CONFIGURATIONS.items():
                rate = _rate(settings, max_examples=args.max_examples, workers=args.workers,
                             phases=phases, deselect=deselect)
                if name not in best or rate[0] > best[name][0]:
                    best[name] = rate
    with_rules, alone = (best[name] for name in CONFIGURATIONS)
    print(f"profile {args.profile}, phases {args.phases}, --max-examples {args.max_examples}, "
          f"--workers {args.workers}, best of {args.rounds}\n")
    print("| configuration | rules | examples | examples/s |")
    print("|---|---:|---:|---:|")
    for name, (rate, examples, rules) in best.items():
        print(f"| {name} | {rules} | {examples} | {rate:.0f} |")
    print(f"\nratio (with rules / without): {with_rules[0] / alone[0]:.2f}")


if __name__ == "__main__":
    main()
