"""pytest plugin of the conformance harness (entry point ``pytest11: conformance``).

Registered for every pytest run in an environment where completions-conformance is installed,
so it must stay cheap to import and do nothing unless asked: its options only take effect when
``--conformance-url`` is given.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "completions conformance harness")
    group.addoption(
        "--conformance-url",
        default=None,
        help="base URL of the completions endpoint to check, as an OpenAI client takes it "
        "(e.g. http://127.0.0.1:8000/v1)",
    )
    group.addoption(
        "--conformance-profile",
        default="openai",
        help="contract profile to check against: openai, openai-compatible or friendli",
    )
