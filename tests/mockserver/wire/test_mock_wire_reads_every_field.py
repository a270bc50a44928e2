"""The mock reads every request field its profiles accept: none is accepted and then dropped.

A field added to ``spec/completions.yaml`` and to a profile's ``request_fields`` passes the
mock's validation at once; if neither the engine request (:func:`build_request`) nor the wire
options (:class:`WireOptions`) read it, the mock would accept it and silently ignore it, which
is the very fault (``*-ignored``) the harness looks for in other servers. This test reads a
body through a mapping that records every key asked for, so a new field fails here until the
wire hands it on (or it is listed below with the reason it changes nothing).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

import spec
from mockserver.wire import WireOptions, build_request

READ_ELSEWHERE = {
    "model": "the route answers with the served model's name (served_model), before the engine",
    "user": "OpenAI's end-user id, for abuse monitoring: it changes no answer",
}
"""Fields the wire does not read, and why that is no silent ignoring."""


class ReadRecorder(Mapping[str, object]):
    """A request body that remembers which of its keys were asked for, present or not."""

    def __init__(self, body: dict[str, object]) -> None:
        self._body = body
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> object:
        self.asked.add(key)
        return self._body[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return key in self._body

    def get(self, key: str, default: object = None) -> object:
        self.asked.add(key)
        return self._body.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._body)

    def __len__(self) -> int:
        return len(self._body)


@pytest.mark.parametrize("profile_name", spec.profile_names())
def test_every_accepted_field_is_read(profile_name: str) -> None:
    profile = spec.get_profile(profile_name)
    body = ReadRecorder({"model": "reference-ngram", "prompt": "Hello", "max_tokens": 2})
    build_request(body, wire=profile.wire)  # type: ignore[arg-type]
    WireOptions.from_body(body, wire=profile.wire)  # type: ignore[arg-type]
    unread = sorted(set(profile.request_fields) - body.asked - set(READ_ELSEWHERE))
    assert not unread, (
        f"the mock accepts {unread} on {profile_name} and never reads them: hand them to the "
        "engine (mockserver/wire/requests.py) or the wire options (mockserver/wire/options.py)")


def test_the_reasons_name_fields_a_profile_accepts() -> None:
    accepted = {field for name in spec.profile_names()
                for field in spec.get_profile(name).request_fields}
    assert set(READ_ELSEWHERE) <= accepted
