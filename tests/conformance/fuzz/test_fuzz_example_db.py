"""``conformance fuzz --example-db``: a folder or a Redis database that shards share, the
failures kept in it sent again by later runs, and its keys scoped by profile, never by seed."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from fuzz_support import MODEL, found_rules, run_cli
from hypothesis.database import DirectoryBasedExampleDatabase, InMemoryExampleDatabase

import spec
from conformance.errors import UsageError
from conformance.fuzz import FuzzConfig, fuzz
from conformance.fuzz.example_db import (
    INSTALL_HINT,
    KEY_PREFIX,
    RedisLocation,
    ScopedDatabase,
    example_db_location,
    search_scope,
)
from conformance.fuzz.replay import Entry, failures_key
from conformance.run.settings import Settings
from conformance.target.embedded import EmbeddedMock

REDIS_START = 10.0
"""Seconds a redis-server of a test may take to answer its first PING."""
FAULT = ("--header", "X-Mock-Fault: prompt-list-500")
"""A server error on prompt lists: 100 fuzzed examples of seed 3 send one, 8 of seed 7 do not
(as the control run of the Redis test shows: a seed draws the same wherever it runs)."""
SHARD = ("fuzz", "--phases", "fuzzing", "--no-shrink", "-q", *FAULT)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """``redis://127.0.0.1:PORT``: a redis-server of the test's own on a free loopback port,
    saving nothing, stopped after the test. Skipped without redis-server or the redis package
    (``.ci/run`` installs redis-server where apt-get can)."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not on PATH (Debian: apt-get install redis-server)")
    redis = pytest.importorskip("redis", reason=f"the redis package is missing: {INSTALL_HINT}")
    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    try:
        deadline = time.monotonic() + REDIS_START
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    output = process.communicate()[0].decode(errors="replace")
                    pytest.fail(f"redis-server did not answer on port {port}: {output}")
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}"
    finally:
        client.close()
        process.terminate()
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_a_failure_one_shard_finds_another_finds_by_replaying_it(
        mock: EmbeddedMock, redis_url: str, tmp_path: Path) -> None:
    """Issue 46's scenario: two shards of a CI matrix, one Redis database."""
    shared, empty = f"{redis_url}/0", f"{redis_url}/1"
    first = run_cli([*SHARD, "--base-url", mock.openai_url, "--seed", "3",
                     "--max-examples", "100", "--example-db", shared])
    assert first[0] == 1, first[2]
    report = tmp_path / "second.json"
    # 8 examples of seed 7 draw no prompt list (the control below) and are answered 2xx, so
    # the run is judged even when hypothesis' own replays from the shared database are all
    # prompt lists (2 would leave a run whose every answer may be a 500: exit 2, no verdict)
    second = run_cli([*SHARD, "--base-url", mock.openai_url, "--seed", "7", "--max-examples",
                      "8", "--example-db", shared, "--json", str(report)])
    assert second[0] == 1, second[1]
    assert "FUZZ-001" in found_rules(json.loads(report.read_text()))  # not_a_server_error
    # the same shard with a database of its own finds nothing: the replay found it
    control = run_cli([*SHARD, "--base-url", mock.openai_url, "--seed", "7", "--max-examples",
                       "8", "--example-db", empty])
    assert control[0] == 0, control[1]


def test_the_folder_form_sends_kept_failures_again_and_forgets_fixed_ones(
        mock: EmbeddedMock, tmp_path: Path) -> None:
    flags = ["fuzz", "--base-url", mock.openai_url, "--max-examples", "3", "--phases",
             "fuzzing", "--no-shrink", "--example-db", str(tmp_path / "db")]
    faulty = [*flags, "--header", "X-Mock-Fault: usage-total-wrong"]
    assert run_cli([*faulty, "--seed", "1", "-q"])[0] == 1
    kept = _defects(tmp_path / "db")
    assert kept and len(kept) == len(set(kept))
    status, _, err = run_cli([*faulty, "--seed", "2"])
    assert status == 1
    assert re.search(r"(\d+) of the \1 failures? earlier runs kept failed again", err), err
    assert sorted(_defects(tmp_path / "db")) == sorted(kept)  # one entry per defect still
    flags += ["--seed", "1"]
    status, _, err = run_cli(flags)  # the server fixed: the kept failures are dropped
    assert status == 0
    assert re.search(r"0 of the \d+ failures? earlier runs kept failed again", err), err
    status, _, err = run_cli(flags)
    assert status == 0 and "earlier runs kept" not in err


def _defects(folder: Path) -> list[tuple[str, str]]:
    """(check, key) of each failure kept in the folder database ``folder``."""
    stored = DirectoryBasedExampleDatabase(folder).fetch(failures_key("openai",
                                                                       "POST /completions"))
    entries = [Entry.decode(raw) for raw in stored]
    return [(entry.check, entry.key) for entry in entries if entry is not None]


class Recording(InMemoryExampleDatabase):
    """An in-memory database that remembers every key it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.fetched: set[bytes] = set()

    def fetch(self, key: bytes) -> Iterable[bytes]:
        self.fetched.add(key)
        return super().fetch(key)


def _keys(base_url: str, profile_name: str, seed: int) -> set[bytes]:
    chosen = spec.get_profile(profile_name)
    settings = Settings(base_url=base_url, profile=chosen, model=MODEL, features=chosen.features)
    database = Recording()
    fuzz(settings, FuzzConfig(max_examples=3, seed=seed, phases=("fuzzing",), shrink=False,
                              example_db=database, keep_examples=True))
    return database.fetched


def test_shards_of_one_profile_share_keys_whatever_their_seed(mock: EmbeddedMock) -> None:
    keys = _keys(mock.openai_url, "openai", 1)
    assert keys == _keys(mock.openai_url, "openai", 2)
    assert failures_key("openai", "POST /completions") in keys
    assert any(key.startswith(search_scope("openai", "all")) for key in keys)
    assert not keys & _keys(mock.friendli_url, "friendli", 1)  # another profile: none shared


def test_a_scoped_database_puts_every_key_under_its_scope() -> None:
    base = InMemoryExampleDatabase()
    scoped = ScopedDatabase(base, b"scope/")
    scoped.save(b"k", b"v")
    scoped.move(b"k", b"j", b"v")
    assert list(base.fetch(b"scope/j")) == [b"v"] and list(scoped.fetch(b"j")) == [b"v"]
    scoped.delete(b"j", b"v")
    assert list(base.fetch(b"scope/j")) == []
    assert search_scope("openai", "all") != search_scope("openai-compatible", "all")
    assert search_scope("openai", "all").startswith(KEY_PREFIX)


@pytest.mark.parametrize(("value", "expected"), [
    ("redis://localhost:6379/0", RedisLocation("redis://localhost:6379/0", "localhost", 6379, 0)),
    ("redis://db.internal/3", RedisLocation("redis://db.internal/3", "db.internal", 6379, 3)),
    ("rediss://:pw@cache:6380", RedisLocation("rediss://:pw@cache:6380", "cache", 6380, 0)),
])
def test_a_redis_url_names_host_port_and_database(value: str, expected: RedisLocation) -> None:
    assert example_db_location(value) == expected


@pytest.mark.parametrize(("value", "message"), [
    ("http://localhost:6379/0", "got the http:// URL"),
    ("redis:///0", "names no host"),
    ("redis://localhost:6379/zero", "must be a number"),
    ("redis://localhost:6379/0?timeout=1", "must be a number"),
    ("redis://localhost:99999/0", "is not a valid URL"),
    ("redis://:secret@localhost:x/0", "is not a valid URL"),
])
def test_a_bad_url_is_a_usage_error_that_says_what_to_pass(value: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        example_db_location(value)
    status, out, err = run_cli(["fuzz", "--example-db", value])
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "redis://HOST:PORT/N" in err and "secret" not in err


def test_a_redis_url_without_the_redis_package_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis raises ImportError
    status, _, err = run_cli(["fuzz", "--example-db", "redis://127.0.0.1:6379/0"])
    assert status == 2 and err.count("\n") == 1
    assert INSTALL_HINT in err


def test_a_redis_server_out_of_reach_exits_2_naming_it() -> None:
    pytest.importorskip("redis", reason=f"the redis package is missing: {INSTALL_HINT}")
    port = _free_port()
    started = time.monotonic()
    status, _, err = run_cli(["fuzz", "--example-db", f"redis://:secret@127.0.0.1:{port}/0"])
    assert status == 2 and err.count("\n") == 1
    assert f"cannot reach the Redis server of --example-db at 127.0.0.1:{port}" in err
    assert "secret" not in err and time.monotonic() - started < 10
