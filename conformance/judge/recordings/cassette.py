"""VCR cassettes: vcrpy's and pytest-recording's YAML (or vcrpy's JSON serializer), and
Ruby VCR's (``http_interactions``, a body's ``string`` or ``base64_string``).

The shape (https://vcrpy.readthedocs.io/en/latest/advanced.html, "Custom Serializer")::

    interactions:
    - request: {method, uri, body, headers: {Name: [value, ...]}}
      response: {status: {code, message}, headers: {Name: [value]}, body: {string: ...}}
    version: 1

A response body is kept as text, or as bytes (``!!binary``) when it was compressed: it is
decoded by its recorded ``Content-Encoding`` later (:func:`.recorded.decoded`). Older vcrpy
wrote a header's value as a string, others a list of ``[name, value]`` pairs; a ``body`` may be
the string itself. Cassettes recorded through aiohttp carry Python tags on header names
(``!!python/object/apply:multidict._multidict.istr [Content-Type]``): no tag is ever
constructed as an object, each is read as the plain value it wraps (:class:`PlainLoader`). A
cassette is read whole (they hold a test's few requests).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

import yaml

from .recorded import Headers, Recorded

SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it (the same result, many times faster)."""


class PlainLoader(SafeLoader):  # type: ignore[misc, valid-type]
    """The safe loader, reading a tag it does not know as the plain value it wraps: a
    one-item sequence as that item (``istr`` of a header name), other sequences as tuples
    (hashable, so they can still be mapping keys), mappings as dicts, scalars as strings.
    Nothing is imported or called."""


def _plain(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.SequenceNode):
        items = tuple(loader.construct_object(child, deep=True) for child in node.value)
        return items[0] if len(items) == 1 else items
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


PlainLoader.add_constructor(None, _plain)


def load_yaml(text: bytes) -> Any:
    """A YAML document (``!!binary`` to bytes, unknown tags as plain values: :class:`PlainLoader`);
    ``yaml.YAMLError`` when it is not one."""
    return yaml.load(text, Loader=PlainLoader)  # a safe loader: no tag constructs an object


def _headers(value: Any) -> Headers:
    pairs: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for name, values in value.items():
            for one in values if isinstance(values, list) else [values]:
                pairs.append((str(name), _str(one)))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (list, tuple)) and len(item) == 2:
                pairs.append((str(item[0]), _str(item[1])))
            elif isinstance(item, str) and ":" in item:
                name, _, rest = item.partition(":")
                pairs.append((name.strip(), rest.strip()))
    return tuple(pairs)


def _str(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _bytes(value: Any) -> bytes | None:
    if isinstance(value, dict):  # vcrpy's response {string: ...}, Ruby VCR's every body
        if isinstance(value.get("base64_string"), str):
            try:
                return base64.b64decode(value["base64_string"])
            except (binascii.Error, ValueError):
                return None
        value = value.get("string")
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return None


def _status(value: Any) -> tuple[int | None, str | None]:
    if isinstance(value, dict):
        code, message = value.get("code"), value.get("message")
        return (code if isinstance(code, int) else None,
                str(message) if message is not None else None)
    return (value if isinstance(value, int) and not isinstance(value, bool) else None), None


def interaction(source: str, index: int, item: Any) -> Recorded | str:
    """One interaction, or what is wrong with it."""
    where = f"interactions[{index}]"
    if not isinstance(item, dict) or not isinstance(item.get("request"), dict) or (
            not isinstance(item.get("response"), dict)):
        return f"{source} {where} is not a cassette interaction (no request and response)"
    request, response = item["request"], item["response"]
    status, reason = _status(response.get("status"))
    return Recorded(
        source=source, entry=where, method=str(request.get("method") or "GET"),
        url=str(request.get("uri") or request.get("url") or ""),
        request_headers=_headers(request.get("headers")),
        request_body=_bytes(request.get("body")) or b"", status=status,
        headers=_headers(response.get("headers")), body=_bytes(response.get("body")),
        reason=reason,
    )


def read_cassette(source: str, document: Any) -> Iterator[Recorded | str]:
    """Every interaction of a loaded cassette, in order (a string for one that is not)."""
    interactions = None
    if isinstance(document, dict):
        interactions = document.get("interactions", document.get("http_interactions"))
    if not isinstance(interactions, list):
        raise ValueError("no list of interactions")
    for index, item in enumerate(interactions):
        yield interaction(source, index, item)
