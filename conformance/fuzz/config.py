"""What a fuzz run is asked to do (:class:`FuzzConfig`) and what it found (:class:`FuzzResult`):
records the command line fills and the reports read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hypothesis.database import ExampleDatabase

from conformance.transport import DIRECT, Network

from .bodies import Caps
from .findings import FuzzFinding

BUILTIN_CHECKS = (
    "not_a_server_error",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "content_type_conformance",
    "status_code_conformance",
)
Mode = Literal["all", "positive", "negative"]
TESTING_PHASES = ("examples", "coverage", "fuzzing")


@dataclass(frozen=True)
class FuzzConfig:
    """How much to fuzz and how; checked by the CLI, which names the flag at fault."""

    max_examples: int = 50
    seed: int | None = None
    workers: int = 1
    caps: Caps = field(default_factory=Caps)
    time_budget: float | None = None
    """``--time-budget``: the search repeats until then, and the whole run (shrinking
    included) ends by then."""
    time_limit: float = 600.0
    """Without a ``time_budget``, when the run ends at the latest: a server that answers
    slowly, or never, still gets a report."""
    max_requests: int | None = None
    mode: Mode = "all"
    strict: bool = False
    select: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()
    phases: tuple[str, ...] = ("examples", "coverage", "fuzzing")
    shrink: bool = True
    cache_dir: Path | None = None
    """Where hypothesis keeps its files (:mod:`.storage`); None: the user's cache directory."""
    example_db: Path | ExampleDatabase | None = None
    """The example database: a folder, or any hypothesis database (the command line's
    ``redis://`` URL is a ``RedisExampleDatabase``); None: ``examples`` under hypothesis'
    directory in ``cache_dir``."""
    keep_examples: bool = False
    """True: keep an example database, which replays earlier runs' examples first. Off by
    default: with one, two runs of the same seed found a fault and then missed it."""


@dataclass
class FuzzResult:
    """What a run found, and what it did to find it."""

    seed: int
    profile_name: str
    base_url: str
    checks: tuple[str, ...]
    findings: list[FuzzFinding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    examples: int = 0
    requests: int = 0
    retried: int = 0
    duration: float = 0.0
    stop_reason: str = "completed"
    unreachable: bool = False
    judged: dict[str, int] = field(default_factory=dict)
    """Catalog rule ID -> answers its check judged; a rule missing judged none."""
    ttft_seconds: tuple[float, ...] = ()
    """Time to first token of each 200 stream read (:mod:`conformance.run.latency`)."""
    itl_seconds: tuple[float, ...] = ()
    """Gaps between consecutive chunks of those streams."""
    network: Network = DIRECT
    """How the requests went out (redacted): the reports say so, ``--insecure`` above all."""
    statuses: tuple[tuple[int | None, int, str | None], ...] = ()
    """How many valid completion requests got each status (None: no status line), with where
    the first non-2xx went and the server's words (:mod:`.answered`)."""

    @property
    def exit_code(self) -> int:
        """0 nothing found, 1 findings, 2 the run itself failed (unreachable, harness errors)."""
        if self.unreachable or (self.errors and not self.findings):
            return 2
        return 1 if self.findings else 0
