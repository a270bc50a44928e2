"""The contract of the OpenAI-compatible text Completions API, as data plus a thin loader.

``spec/completions.yaml`` is an OpenAPI 3.1 document covering ``POST /v1/completions``,
FriendliAI's ``POST /dedicated/v1/completions`` and ``GET /v1/models``; ``spec/profiles/*.yaml``
say which parts apply to which kind of server; ``x-cross-field-rules`` in the document lists
the constraints between fields. Everything else in the project reads the contract through this
package::

    import spec
    openai = spec.get_profile("openai")
    openai.validator("chunk").validate(chunk)
    spec.cross_field_violations(body, "openai")
"""

from .cross_field import (
    CrossFieldRule,
    CrossFieldViolation,
    cross_field_rules,
    cross_field_rules_for,
    cross_field_violations,
)
from .document import JSON, component, component_names, document_bytes, document_json, load_document
from .profile_document import profile_document
from .profiles import (
    Operation,
    Profile,
    all_features,
    all_traits,
    get_profile,
    load_profile,
    profile_names,
    profiles,
)
from .schemas import component_validator, make_standalone, standalone_schema, validator_for

__all__ = [
    "JSON",
    "CrossFieldRule",
    "CrossFieldViolation",
    "Operation",
    "Profile",
    "all_features",
    "all_traits",
    "component",
    "component_names",
    "component_validator",
    "cross_field_rules",
    "cross_field_rules_for",
    "cross_field_violations",
    "document_bytes",
    "document_json",
    "get_profile",
    "load_document",
    "load_profile",
    "make_standalone",
    "profile_document",
    "profile_names",
    "profiles",
    "standalone_schema",
    "validator_for",
]
