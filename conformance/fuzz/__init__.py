"""Fuzzing: schemathesis driven from the contract, judged by the catalog's own rules.

``conformance fuzz`` (:mod:`conformance.fuzz.cli`) runs schemathesis' engine over
``spec.profile_document(profile)`` (:mod:`.campaign`, :mod:`.document`), positive and negative
generation, with:

* the catalog's rules that can judge one exchange registered as schemathesis checks, calling
  the rules' own check functions (:mod:`.checks`, :mod:`.exchange`; where each rule reads a
  fuzzed exchange is :mod:`conformance.bindings`, which ``conformance judge`` shares);
* a ``text/event-stream`` deserializer on the harness's strict SSE parser (:mod:`.stream`);
* every request capped and made servable (:mod:`.bodies`, :mod:`.hooks`), counted against a
  budget and retried on 429 / 503 (:mod:`.guard`, :mod:`.adapters`, :mod:`.transport`);
* every finding shrunk by hypothesis (:mod:`.shrink`) with a curl command whose secrets are
  shell variables (:mod:`.findings`), and reported through the result model and reporters of
  ``conformance run`` (:mod:`.results`; schemathesis' checks are the ``FUZZ-NNN`` records of
  :mod:`conformance.rules.schemathesis_checks`);
* progress on stderr, a status line on a terminal or a line per phase (:mod:`.progress`), and
  hypothesis' files in the user's cache directory, never the current one (:mod:`.storage`).

From Python::

    from conformance.fuzz import FuzzConfig, fuzz
    result = fuzz(settings, FuzzConfig(max_examples=100, seed=1))
    report = run_result(result, settings)     # a RunResult, as conformance run gives
    report.exit_code, report.failures()
"""

from __future__ import annotations

from .bodies import Caps
from .campaign import fuzz
from .config import FuzzConfig, FuzzResult
from .findings import FuzzFinding
from .results import run_result
from .stream import event_stream, payloads

__all__ = ["Caps", "FuzzConfig", "FuzzFinding", "FuzzResult", "event_stream", "fuzz", "payloads",
           "run_result"]
