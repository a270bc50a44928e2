"""Where a fuzz run keeps hypothesis' example database: a folder, or a Redis server that shards
and later runs share (``--example-db DIR`` or ``--example-db redis://HOST:PORT/N``).

A folder is hypothesis' ``DirectoryBasedExampleDatabase``: one machine's. A Redis URL is
``hypothesis.extra.redis.RedisExampleDatabase`` (the ``redis`` extra), so the jobs of a CI
matrix and a laptop replaying a finding read and write one database. The URL is checked, and the
server answers a ``PING`` within :data:`PING_TIMEOUT`, before anything else runs: a bad URL, a
missing ``redis`` package and a server out of reach are each one line (exit status 2).

Every key the run writes is scoped (:class:`ScopedDatabase`) by what makes two runs' examples
comparable, never by a seed. Hypothesis keys a test's examples by the test's own digest
(schemathesis adds the operation's label, ``POST /completions``); that digest holds no seed,
so shards of different seeds share keys, as replaying needs. But it holds no profile either:
two profiles both have ``POST /completions``, and hypothesis deletes a replayed example that no
longer does what it was kept for, so a shard of one profile would have emptied the others'.
Hence :func:`search_scope`: the profile, and the generation mode (``--mode``), which changes
what the same choices draw.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import hypothesis
from hypothesis.database import ExampleDatabase
from schemathesis.config import ProjectConfig

from conformance.errors import HarnessError, UsageError

REDIS_SCHEMES = ("redis", "rediss")
DEFAULT_REDIS_PORT = 6379
PING_TIMEOUT = 5.0
"""Seconds to connect to the Redis server and hear its ``PING`` answer (and, after that, the
longest one database call may take)."""
KEY_PREFIX = b"completions-conformance/"
INSTALL_HINT = "pip install 'completions-conformance[redis]'"


@dataclass(frozen=True)
class RedisLocation:
    """A Redis database named by ``redis://[:PASSWORD@]HOST[:PORT][/N]``."""

    url: str
    host: str
    port: int
    db: int

    @property
    def address(self) -> str:
        """``HOST:PORT``, the way error messages name the server (never the password)."""
        return f"{self.host}:{self.port}"


def example_db_location(value: str) -> Path | RedisLocation:
    """What ``--example-db VALUE`` names: a Redis database for a ``redis://`` URL, else a
    folder; a :class:`UsageError` says what is wrong with a URL or a path."""
    if "://" not in value:
        path = Path(value)
        if path.exists() and not path.is_dir():
            raise UsageError(f"--example-db must be a directory, got the file {value!r}")
        return path
    usage = "--example-db takes a directory or redis://HOST:PORT/N"
    try:
        parts = urlsplit(value)
        port = parts.port or DEFAULT_REDIS_PORT
    except ValueError as exc:
        raise UsageError(f"{usage}; {_redacted(value)!r} is not a valid URL ({exc})") from None
    if parts.scheme not in REDIS_SCHEMES:
        raise UsageError(f"{usage}; got the {parts.scheme}:// URL {_redacted(value)!r}")
    if not parts.hostname:
        raise UsageError(f"{usage}; {_redacted(value)!r} names no host")
    number = parts.path.strip("/") or "0"
    if not number.isdigit() or parts.query or parts.fragment:
        raise UsageError(f"{usage}; the database of {_redacted(value)!r} must be a number, "
                         "e.g. redis://localhost:6379/0")
    return RedisLocation(url=value, host=parts.hostname, port=port, db=int(number))


def _redacted(url: str) -> str:
    """``url`` without the password it may carry."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[-1]
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return parts._replace(netloc=user + netloc).geturl()


def open_redis(location: RedisLocation, *, timeout: float = PING_TIMEOUT) -> ExampleDatabase:
    """The Redis database at ``location``, once its server has answered a ``PING`` within
    ``timeout`` seconds; a :class:`UsageError` when the ``redis`` package is missing, a
    :class:`HarnessError` naming ``HOST:PORT`` when the server does not answer."""
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise UsageError(f"--example-db {_redacted(location.url)} needs the redis package: "
                         f"{INSTALL_HINT}") from None
    client = redis.Redis.from_url(location.url, socket_connect_timeout=timeout,
                                  socket_timeout=timeout)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        raise HarnessError(f"cannot reach the Redis server of --example-db at "
                           f"{location.address} (database {location.db}): {exc}") from None
    return RedisExampleDatabase(client)


def close_database(database: object) -> None:
    """Close the connection :func:`open_redis` opened for ``database``, if it holds one."""
    client = getattr(database, "redis", None)
    close = getattr(client, "close", None)
    if callable(close):
        close()


class ScopedDatabase(ExampleDatabase):
    """``database``, every key put under ``scope``: runs of different scopes share nothing."""

    def __init__(self, database: ExampleDatabase, scope: bytes) -> None:
        super().__init__()
        self.database = database
        self.scope = scope

    def __repr__(self) -> str:
        return f"ScopedDatabase({self.database!r}, {self.scope!r})"

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.database.fetch(self.scope + key)

    def save(self, key: bytes, value: bytes) -> None:
        self.database.save(self.scope + key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.database.delete(self.scope + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.database.move(self.scope + src, self.scope + dest, value)


def search_scope(profile_name: str, mode: str) -> bytes:
    """The scope of the search's examples (the module docstring says why these two)."""
    return KEY_PREFIX + f"search/{profile_name}/{mode}/".encode()


class _ConfigWithDatabase(ProjectConfig):
    """A schema's configuration whose hypothesis settings use the run's database object
    (schemathesis' configuration names a database by a path only)."""

    __slots__ = ()

    def get_hypothesis_settings(self, **kwargs: Any) -> hypothesis.settings:
        settings = super().get_hypothesis_settings(**kwargs)
        database = _DATABASES.get(id(self))
        if database is None or settings.database is None:
            return settings
        return hypothesis.settings(settings, database=database)


_DATABASES: dict[int, ExampleDatabase] = {}
"""The database of each configuration given one, by ``id``; an entry goes with its
configuration."""


def use_database(config: ProjectConfig, database: ExampleDatabase) -> None:
    """Make the tests of the schema configured by ``config`` keep their examples in
    ``database`` (the configuration must name some database, not ``none``)."""
    if type(config) is ProjectConfig:
        config.__class__ = _ConfigWithDatabase
    elif not isinstance(config, _ConfigWithDatabase):
        raise TypeError(f"expected a schemathesis ProjectConfig, got {type(config).__name__}")
    key = id(config)
    _DATABASES[key] = database
    weakref.finalize(cast(object, config), _DATABASES.pop, key, None)
