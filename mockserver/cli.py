"""``mockserver``: run the mock Completions server.

Prints ``mockserver: serving http://HOST:PORT/v1 (FriendliAI: http://HOST:PORT/dedicated/v1)``
(``https://`` with ``--tls-cert``) once, flushed, when it accepts connections (with ``--port 0``
that line tells a parent process which port was picked), and shuts down cleanly on SIGINT or
SIGTERM. ``--list-faults | head`` ends quietly with status 141 when the reader goes away.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from procutil.broken_pipe import quiet_on_broken_pipe

from .config import (
    API_KEYS_ENV,
    DEFAULT_HOST,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_PROMPT_CHARS,
    DEFAULT_PORT,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_REQUEST_BUDGET,
    MockConfig,
    api_keys_from_env,
)
from .faults import UnknownFaultError, all_faults
from .logs import configure_logging
from .variants import UnknownVariantError, all_variants


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mockserver",
        description="A deterministic mock of POST /v1/completions (OpenAI) and POST "
        "/dedicated/v1/completions (FriendliAI), backed by the reference n-gram engine. It "
        "follows spec/completions.yaml strictly unless faults are selected.",
        epilog="Faults can also be chosen per request with the header `X-Mock-Fault: NAME[,NAME]`."
        " GET /mock/faults lists them with descriptions. Valid rendering variants likewise, with "
        "`X-Mock-Variant: NAME[,NAME]` and GET /mock/variants.",
    )
    add = parser.add_argument
    add("--host", default=DEFAULT_HOST,
        help=f"address to bind (default {DEFAULT_HOST}: loopback only; use 0.0.0.0 to expose)")
    add("--port", type=int, default=DEFAULT_PORT,
        help=f"port to bind (default {DEFAULT_PORT}; 0 picks a free port, shown in the ready line)")
    add("--workers", type=int, default=1,
        help="worker processes sharing the port (gunicorn if installed, else forked "
        "SO_REUSEPORT workers); rate limits are per worker")
    add("--worker-backend", choices=["auto", "gunicorn", "fork"], default="auto",
        help="how --workers > 1 runs: gunicorn, fork, or auto (gunicorn when importable)")
    add("--api-key", action="append", default=[], metavar="KEY",
        help=f"accept `Authorization: Bearer KEY` (repeatable; also {API_KEYS_ENV}, "
        "comma-separated); without any key, no authentication is required")
    add("--fault", action="append", default=[], metavar="NAME",
        help="apply this fault to every request it applies to (repeatable or comma-separated; "
        "see --list-faults)")
    add("--variant", action="append", default=[], metavar="NAME",
        help="render every answer in this valid variant, as a real server does (repeatable or "
        "comma-separated; see --list-variants)")
    add("--profile", action="append", default=[], metavar="NAME_OR_FILE",
        help="also serve this contract profile (a shipped name, or a YAML file shaped like "
        "spec/profiles/*.yaml) on its own paths, with its status for invalid input and its "
        "policy on unknown fields; it takes over a built-in route on the same path "
        "(repeatable)")
    add("--ttft-ms", type=float, default=0.0,
        help="simulated time to first token, in milliseconds (default 0)")
    add("--itl-ms", type=float, default=0.0,
        help="simulated time between tokens, in milliseconds (default 0); non-streamed answers "
        "wait TTFT + ITL per further token")
    add("--jitter-ms", type=float, default=0.0,
        help="uniform +/- jitter added to every simulated delay, in milliseconds")
    add("--latency-seed", type=int, default=0, help="seed of the latency jitter RNG (default 0)")
    add("--rate-limit-rpm", type=int, default=None, metavar="N",
        help="requests per minute per configured API key (else per client address; other "
        "Bearer tokens get no bucket of their own); 429 beyond it")
    add("--rate-limit-tpm", type=int, default=None, metavar="N",
        help="prompt + completion tokens per minute per configured API key (else per client "
        "address); 429 beyond it")
    add("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="N",
        help="largest accepted request body in bytes; larger ones get 413 "
        f"(default {DEFAULT_MAX_BODY_BYTES})")
    add("--max-prompt-chars", type=int, default=DEFAULT_MAX_PROMPT_CHARS, metavar="N",
        help="characters of prompt text a request may carry (all prompts together); more get "
        f"the invalid-request status before any tokenizing (default {DEFAULT_MAX_PROMPT_CHARS})")
    add("--request-budget", type=float, default=DEFAULT_REQUEST_BUDGET, metavar="S",
        help="seconds of engine work one request may take; beyond it the work is stopped and "
        f"the answer is 503 (default {DEFAULT_REQUEST_BUDGET:g})")
    add("--read-timeout", type=float, default=DEFAULT_READ_TIMEOUT, metavar="S",
        help="seconds a request body may take to arrive; slower ones get 408 and the "
        f"connection is closed (default {DEFAULT_READ_TIMEOUT:g})")
    add("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT, metavar="S",
        help="seconds a connection may stay open without a complete request (before the first "
        f"one or between keep-alive requests) before it is closed (default "
        f"{DEFAULT_IDLE_TIMEOUT:g})")
    add("--cache-entries", type=int, default=4096, metavar="N",
        help="results of deterministic requests (temperature 0 or a seed) kept to answer repeats "
        "without the engine (default 4096; 0 disables)")
    add("--chaos-every", type=int, default=None, metavar="K",
        help="give every K-th completion request one fault, chosen deterministically")
    add("--chaos-probability", type=float, default=0.0, metavar="P",
        help="give each completion request a fault with probability P (seeded by --chaos-seed)")
    add("--chaos-seed", type=int, default=0, help="seed of the chaos RNG (default 0)")
    add("--chaos-faults", action="append", default=[], metavar="NAMES",
        help="the faults chaos picks from (repeatable or comma-separated; default: all but "
        "`stall`)")
    add("--replay", metavar="REPORT.json",
        help="serve the exchanges a `conformance run --json` report recorded, exactly as "
        "recorded (status, headers, body bytes), instead of the engine; a request the recording "
        "does not hold gets 404 naming the closest recorded one")
    add("--replay-timing", choices=["recorded", "none"], default="recorded",
        help="with --replay: send each piece of a body when it arrived in the recording "
        "(recorded, the default) or at once (none)")
    add("--tls-cert", metavar="FILE",
        help="serve HTTPS with this PEM certificate (chain), e.g. one made by a private CA, so "
        "clients can test their TLS settings; the ready line then says https://")
    add("--tls-key", metavar="FILE",
        help="the PEM private key of --tls-cert (leave out when the certificate file holds it)")
    add("--tls-client-ca", metavar="FILE",
        help="with --tls-cert: require a client certificate signed by a CA in this PEM bundle "
        "(mutual TLS); a client without one fails the handshake")
    add("--list-faults", action="store_true", help="print every fault name, one per line, and exit")
    add("--list-variants", action="store_true",
        help="print every rendering variant with the server it imitates, one per line, and exit")
    add("--log-level", default="WARNING",
        help="logging level (default WARNING); INFO adds one access line per request")
    add("--log-format", choices=["text", "json"], default="text",
        help="log lines as text (default) or one JSON object per line")
    return parser


def config_from_args(args: argparse.Namespace) -> MockConfig:
    """The :class:`MockConfig` for parsed arguments (API keys also from the environment)."""
    return MockConfig(
        host=args.host,
        port=args.port,
        workers=args.workers,
        api_keys=tuple(args.api_key) + api_keys_from_env(),
        faults=tuple(args.fault),
        variants=tuple(args.variant),
        ttft_ms=args.ttft_ms,
        itl_ms=args.itl_ms,
        jitter_ms=args.jitter_ms,
        latency_seed=args.latency_seed,
        rate_limit_rpm=args.rate_limit_rpm,
        rate_limit_tpm=args.rate_limit_tpm,
        max_body_bytes=args.max_body_bytes,
        cache_entries=args.cache_entries,
        max_prompt_chars=args.max_prompt_chars,
        request_budget=args.request_budget,
        read_timeout=args.read_timeout,
        idle_timeout=args.idle_timeout,
        chaos_every=args.chaos_every,
        chaos_probability=args.chaos_probability,
        chaos_seed=args.chaos_seed,
        chaos_faults=tuple(args.chaos_faults),
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_client_ca=args.tls_client_ca,
        profile_refs=tuple(args.profile),
    )


def announce(line: str) -> None:
    print(line, flush=True)


@quiet_on_broken_pipe
def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list_faults:
        for fault in all_faults():
            print(fault.name)
        return 0
    if args.list_variants:
        for variant in all_variants():
            print(f"{variant.name}\t{variant.imitates}")
        return 0
    try:
        config = config_from_args(args)
    except (UnknownFaultError, UnknownVariantError, ValueError) as error:
        parser.error(str(error))
    # after the usage errors: a refused command line leaves the process's logging as it was
    # (run in-process, as tests do, it bound the root logger to a stream closed after them)
    configure_logging(args.log_level, args.log_format)
    if args.replay:
        return _replay(args, config)
    if config.workers > 1:
        from .workers import run_workers

        return run_workers(config, backend=args.worker_backend, announce=announce)
    from .serve import TLSError, ready_line, serve

    try:
        asyncio.run(serve(config, on_ready=lambda host, port: announce(
            ready_line(host, port, scheme=config.scheme, config=config))))
    except TLSError as error:
        print(f"mockserver: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"mockserver: cannot listen on {config.host}:{config.port}: {error}",
              file=sys.stderr)
        return 1
    return 0


def _replay(args: argparse.Namespace, config: MockConfig) -> int:
    """Serve a recording (one process: the order of repeated requests is per process)."""
    from .replay import RecordingError, create_replay_app, load_recording
    from .serve import TLSError, ready_line, serve

    if config.workers > 1:
        print("mockserver: --replay serves from one process; leave out --workers",
              file=sys.stderr)
        return 2
    try:
        exchanges = load_recording(args.replay)
    except RecordingError as error:
        print(f"mockserver: {error}", file=sys.stderr)
        return 2
    app = create_replay_app(exchanges, timing=args.replay_timing,
                            max_body_bytes=config.max_body_bytes)
    try:
        asyncio.run(serve(config, app=app, on_ready=lambda host, port: announce(
            ready_line(host, port, scheme=config.scheme))))
    except TLSError as error:
        print(f"mockserver: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"mockserver: cannot listen on {config.host}:{config.port}: {error}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
