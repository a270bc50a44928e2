"""The options a user gave a run, echoed in its reports: a reader who never ran the tool sees
how the report was made (``--select SSE-*``, ``--timeout 10``, ``--concurrency 1``...).

Only options that change what was sent or judged, and only those given a value other than
their default. Left out: what the reports say elsewhere (target, profile, model, features,
``--strict``, ``--fail-on-skip``, the connection's TLS and proxy settings), where reports go,
how the console looks, and secrets: ``--api-key`` never, ``--header`` by name only.
"""

from __future__ import annotations

import argparse

NOT_ECHOED = frozenset({
    "command", "base_url", "profile", "model", "feature", "no_feature", "strict",
    "fail_on_skip", "api_key", "cacert", "cert", "key", "insecure", "proxy",
    "json", "junit_xml", "html", "markdown", "quiet", "verbose", "example_db", "files",
})


def _value(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def given_options(args: argparse.Namespace, defaults: argparse.Namespace) -> tuple[str, ...]:
    """``--flag value`` (or ``--flag`` for a switch) of each echoed option ``args`` gives a
    value other than ``defaults``' (the same command parsed with no options), in order."""
    given: list[str] = []
    for name, value in vars(args).items():
        if name in NOT_ECHOED or value == getattr(defaults, name, value):
            continue
        flag = "--" + name.replace("_", "-")
        if name == "header":
            names = [str(header).split(":", 1)[0].strip() for header in value]
            given.append(f"{flag} {','.join(names)} (values not shown)")
        elif value is True:
            given.append(flag)
        else:
            given.append(f"{flag} {_value(value)}")
    return tuple(given)
