"""The contracts the mock serves: its two built-in routes, and vendor profiles given as data.

Every contract is a profile of ``spec/profiles`` served on the profile's own paths, with what
the profile states of the server: its wire, its request schema (``schemas.request`` narrowed
to its ``request_fields``), the status invalid input gets, the status of an unknown model,
and its policy on unknown fields (``reject``: a 4xx naming the field; ``ignore``: the field is
dropped and the request answered). ``mockserver --profile FILE`` serves a vendor's profile
beside the built-in routes, so a client or SDK author can test against a mock that answers
as their vendor does; the harness run with the same file judges it clean.

The built-in routes are shipped profiles served strictly (unknown fields rejected and
``model`` required, whatever the profile allows): ``/v1`` serves ``openai-compatible``
(OpenAI's fields and the sampling extensions the engine honours, invalid input 400) and
``/dedicated/v1`` serves ``friendli`` (422).

What a profile cannot change: the engine, the response shapes of its wire, and the
cross-field rules of ``spec/completions.yaml`` (they are the wire's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import spec

from .wire.formats import Wire

UnknownFields = Literal["reject", "ignore"]


@dataclass(frozen=True)
class ServedContract:
    """One contract served on its own paths: a profile, as the mock serves it."""

    name: str
    profile: spec.Profile = field(compare=False, hash=False, repr=False)
    invalid_status: int
    unknown_model_status: int = 404
    unknown_fields: UnknownFields = "reject"
    fingerprint: bool = False
    """Whether answers carry ``system_fingerprint`` (the profile's response schema has it)."""
    defaulted_fields: tuple[str, ...] = ()
    """Required fields a body may leave out (the profile's ``defaultable_fields``): ``model``
    then means the served model, as a single-model server such as ``vllm serve`` takes it."""

    @property
    def wire(self) -> Wire:
        return self.profile.wire

    @property
    def completions_path(self) -> str:
        return self.profile.completions_path

    @property
    def models_path(self) -> str | None:
        return self.profile.models_path

    @property
    def base_path(self) -> str:
        return self.completions_path.rsplit("/", 1)[0]

    @property
    def request_schema(self) -> str:
        """The name of the profile's request schema (``spec/completions.yaml``)."""
        return self.profile.schema_names["request"]



def contract_from_profile(profile: spec.Profile) -> ServedContract:
    """What ``profile`` says of a server, as the mock serves it.

    Invalid input gets the profile's first ``errors.invalid_request`` status; an unknown model
    gets 404 if the profile allows it, else its first ``errors.unknown_model`` status."""
    unknown_model = (404 if 404 in profile.unknown_model_statuses or
                     not profile.unknown_model_statuses else profile.unknown_model_statuses[0])
    return ServedContract(
        name=profile.name,
        profile=profile,
        invalid_status=profile.invalid_request_statuses[0],
        unknown_model_status=unknown_model,
        unknown_fields=profile.unknown_fields,
        fingerprint="system_fingerprint" in _response_fields(profile),
        defaulted_fields=profile.defaultable_fields,
    )


def _response_fields(profile: spec.Profile) -> frozenset[str]:
    properties = profile.schema("response").get("properties", {})
    return frozenset(properties) if isinstance(properties, dict) else frozenset()


def _builtin(name: str, profile_name: str) -> ServedContract:
    """The built-in route ``name``: the shipped profile ``profile_name``, unknown fields
    rejected."""
    return replace(contract_from_profile(spec.get_profile(profile_name)), name=name,
                   unknown_fields="reject", defaulted_fields=())


OPENAI = _builtin("openai", "openai-compatible")
FRIENDLI = _builtin("friendli", "friendli")
BUILT_IN: tuple[ServedContract, ...] = (OPENAI, FRIENDLI)
_BY_WIRE: Mapping[Wire, ServedContract] = {c.wire: c for c in BUILT_IN}


def builtin_contract(wire: Wire) -> ServedContract:
    """The built-in route of ``wire`` (what ``python -m mockserver.render`` validates with)."""
    return _BY_WIRE[wire]


def served_contracts(profile_refs: Sequence[str] = ()) -> tuple[ServedContract, ...]:
    """The built-in contracts and one per ``--profile`` (a shipped name or a YAML file path,
    resolved here once).

    Raises ValueError naming ``--profile`` when a profile cannot be loaded, or when two
    profiles claim the same path (a profile may take over a built-in's paths: most vendors
    serve ``/v1``)."""
    contracts = list(BUILT_IN)
    for ref in profile_refs:
        try:
            profile = spec.get_profile(ref)
        except (KeyError, OSError, ValueError, TypeError) as error:
            raise ValueError(f"--profile {ref}: {_reason(error)}") from None
        contract = contract_from_profile(profile)
        for other in contracts[len(BUILT_IN):]:
            shared = _paths(contract) & _paths(other)
            if shared:
                raise ValueError(
                    f"--profile {ref}: {min(shared)} is already served by profile "
                    f"{other.name!r}; serve one profile per path"
                )
        contracts.append(contract)
    return tuple(contracts)


Operation = Literal["completions", "models"]


def route_table(contracts: Iterable[ServedContract]) -> dict[str, tuple[Operation, ServedContract]]:
    """Path -> (operation, contract); a later contract takes over an earlier one's path."""
    table: dict[str, tuple[Operation, ServedContract]] = {}
    for contract in contracts:
        table[contract.completions_path] = ("completions", contract)
        if contract.models_path is not None:
            table[contract.models_path] = ("models", contract)
    return table


def _paths(contract: ServedContract) -> set[str]:
    return {p for p in (contract.completions_path, contract.models_path) if p is not None}


def _reason(error: BaseException) -> str:
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return text or type(error).__name__
