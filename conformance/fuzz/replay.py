"""The failures earlier runs found, anywhere, sent again first: the run's failure corpus.

Hypothesis' example database replays first the examples a test *failed* on, but a schemathesis
engine run never fails its hypothesis test: a failing check is recorded and the search goes on
(``continue-on-failure``), and the checks raise a ``FailureGroup``, which hypothesis does not
count as a failure (:mod:`conformance.fuzz.shrink`). So hypothesis keeps only its pareto front,
of which a run replays a random sample (a tenth of ``--max-examples``, at least 2): a fault
one shard found was found by another only by chance. The harness therefore keeps its findings
itself, in the same database: for each finding, the request that showed it (its JSON body and
schemathesis' case metadata, which the data checks read) with the check that failed and the
failure's key, under ``completions-conformance/failures/PROFILE/OPERATION``
(:func:`failures_key`). The key holds
the profile and the operation and nothing of the run that found it (no seed): any run of the
profile replays it.

A run with a database sends each entry of its operations whose check it runs, before the
search, and judges the answer with that check alone (:func:`replay_failures`): a failure of the
same check and key is a finding, shrunk and reported like any other; an entry that no longer
fails is deleted, as hypothesis deletes an example that no longer fails. After the run every
finding is saved (:func:`save_findings`), shrunk when shrinking made it smaller, in place of a
larger entry of the same defect: shards that each found a defect their own way leave one
entry, the smallest.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass

import requests
import schemathesis
from hypothesis.database import ExampleDatabase
from schemathesis.generation.meta import CaseMetadata

from spec import JSON

from .example_db import KEY_PREFIX
from .exchange import request_of
from .findings import (
    CONNECTION,
    FindingCollector,
    FuzzFinding,
    RuleOf,
    connection_kind,
    finding_of,
    network_finding,
)
from .guard import RequestGuard
from .shrink import case_check, same_failure
from .shrink_findings import UNSHRUNK_KINDS

JSON_MEDIA = "application/json"


@dataclass(frozen=True)
class Entry:
    """One stored failure: what to send again, and how it failed."""

    check: str
    key: str
    body: JSON = None
    """The JSON body sent (when the case's body was a value, not bytes)."""
    raw_body: str | None = None
    """The bytes sent, base64, when the case's body was bytes (malformed JSON, ``\\0``)."""
    has_body: bool = False
    media_type: str = JSON_MEDIA
    meta: JSON = None
    """Schemathesis' metadata of the failing case (``CaseMetadata.to_dict()``), or None."""

    def encode(self) -> bytes:
        return json.dumps({"check": self.check, "key": self.key, "body": self.body,
                           "raw_body": self.raw_body, "has_body": self.has_body,
                           "media_type": self.media_type, "meta": self.meta},
                          sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Entry | None:
        """The entry ``raw`` holds; None for bytes this harness did not write."""
        try:
            data = json.loads(raw)
            raw_body = data["raw_body"]
            return cls(check=str(data["check"]), key=str(data["key"]), body=data["body"],
                       raw_body=None if raw_body is None else str(raw_body),
                       has_body=bool(data["has_body"]), media_type=str(data["media_type"]),
                       meta=data["meta"])
        except (ValueError, TypeError, KeyError):
            return None

    @property
    def size(self) -> int:
        """The length of the body to send, as JSON or as base64."""
        return len(self.raw_body) if self.raw_body is not None else len(json.dumps(self.body))

    def body_to_send(self) -> JSON | bytes:
        return self.body if self.raw_body is None else base64.b64decode(self.raw_body)


def failures_key(profile_name: str, operation: str) -> bytes:
    """Where the failures of ``operation`` (``POST /completions``) under the profile are kept."""
    return KEY_PREFIX + f"failures/{profile_name}/{operation}".encode()


def entry_of(finding: FuzzFinding) -> Entry | None:
    """What to keep of ``finding``; None when it cannot be sent again as it was (no case, a
    body neither JSON nor bytes, metadata that is not JSON), or when seeing it again would cost a
    whole request timeout."""
    case = finding.case
    if case is None or not finding.operation:
        return None
    if finding.check == CONNECTION and connection_kind(finding.key) in UNSHRUNK_KINDS:
        return None
    sent = finding.request.body
    raw_body = base64.b64encode(sent).decode() if isinstance(case.body, bytes) else None
    try:
        body: JSON = json.loads(sent) if sent and raw_body is None else None
        meta = case.meta.to_dict() if case.meta is not None else None
        json.dumps(meta)
    except (ValueError, TypeError):
        return None
    return Entry(check=finding.check, key=finding.key, body=body, raw_body=raw_body,
                 has_body=bool(sent), media_type=case.media_type or JSON_MEDIA, meta=meta)


def save_findings(database: ExampleDatabase, profile_name: str, findings: list[FuzzFinding]
                  ) -> int:
    """Keep each of ``findings`` that can be sent again, one entry per defect as findings are
    one per defect: a larger entry of the same check and key goes, a smaller one stays instead.
    How many were saved."""
    saved = 0
    for finding in findings:
        entry = entry_of(finding)
        if entry is None:
            continue
        key = failures_key(profile_name, finding.operation)
        smallest = True
        for raw in list(database.fetch(key)):
            kept = Entry.decode(raw)
            if kept is None or (kept.check, kept.key) != (entry.check, entry.key):
                continue
            if kept.size <= entry.size and kept != entry:
                smallest = False
            elif kept != entry:
                database.delete(key, raw)
        if smallest:
            database.save(key, entry.encode())
            saved += 1
    return saved


@dataclass
class Replay:
    """What :func:`replay_failures` needs of the run: its schema (hooks installed, the run
    attached), how it sends, and where its findings go."""

    schema: schemathesis.BaseSchema
    headers: dict[str, str]
    prepare: Callable[[JSON], JSON]
    guard: RequestGuard
    collector: FindingCollector
    rule_of: RuleOf


@dataclass(frozen=True)
class Stored:
    """An entry as fetched: where it is kept, its bytes, what they say."""

    key: bytes
    raw: bytes
    entry: Entry
    operation: str


def stored_failures(database: ExampleDatabase, profile_name: str, operations: list[str],
                    checks: frozenset[str]) -> list[Stored]:
    """The entries of ``operations`` (labels) a run of ``checks`` can judge again."""
    found: list[Stored] = []
    for label in operations:
        key = failures_key(profile_name, label)
        for raw in database.fetch(key):
            entry = Entry.decode(raw)
            if entry is not None and (entry.check == CONNECTION or entry.check in checks):
                found.append(Stored(key, raw, entry, label))
    return found


def replay_failures(database: ExampleDatabase, stored: list[Stored], replay: Replay) -> int:
    """Send each of ``stored`` again; how many failed again. An entry that did not is deleted.
    Raises the guard's ``BudgetSpent`` when the budget runs out."""
    again = 0
    for each in stored:
        if _fails_again(each.entry, each.operation, replay):
            again += 1
        else:
            database.delete(each.key, each.raw)
    return again


def _fails_again(entry: Entry, label: str, replay: Replay) -> bool:
    method, path = label.split(" ", 1)
    try:
        operation = replay.schema[path][method]
    except KeyError:
        return False
    meta = CaseMetadata.from_dict(entry.meta) if isinstance(entry.meta, dict) else None
    case = (operation.Case(body=replay.prepare(entry.body_to_send()),
                           media_type=entry.media_type, _meta=meta)
            if entry.has_body else operation.Case(_meta=meta))
    if entry.check == CONNECTION:
        return _cut_again(case, entry, replay)
    check_function = case_check(entry.check)
    if check_function is None:
        return False
    try:
        failed = same_failure(case, check_function, check=entry.check, key=entry.key,
                              headers=replay.headers)
    except requests.RequestException:
        return False  # the guard recorded the cut: the run reports it as any other
    if failed is None:
        return False
    response, failure = failed
    secret = replay.collector.secret_headers
    mode = case.meta.generation.mode.value if case.meta is not None else None
    replay.collector.keep(finding_of(entry.check, failure, request_of(response,
                                                                      secret_headers=secret),
                                     response, mode=mode, secret_headers=secret, case=case))
    return True


def _cut_again(case: schemathesis.Case, entry: Entry, replay: Replay) -> bool:
    """Whether ``case`` gets no whole answer again, the same way; the run's collector takes
    the guard's record of it at the end, as for every cut."""
    recorded = replay.guard.network_failures
    seen = len(recorded)
    try:
        case.call(headers=replay.headers)
    except requests.RequestException:
        return any(cut.connected and network_finding(cut, (), rule_of=replay.rule_of).key
                   == entry.key for cut in recorded[seen:])
    return False
