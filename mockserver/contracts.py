"""The contracts the mock serves: its two built-in routes, and vendor profiles given as data.

The mock speaks two wires (OpenAI's shapes and FriendliAI's). Its built-in routes are
``/v1`` (OpenAI: invalid input 400) and ``/dedicated/v1`` (FriendliAI: 422), both rejecting
unknown fields. ``mockserver --profile FILE`` serves a vendor's profile
(``spec/profiles/*.yaml`` shape) beside them, on the profile's own paths, with what the profile
states of the server: its wire, the status invalid input gets, the status of an unknown
model, and its policy on unknown fields (``reject``: a 4xx naming the field; ``ignore``: the
field is dropped and the request answered). A client or SDK author can so test against a
mock that answers as their vendor does; the harness run with the same file judges it clean.

What a profile cannot change: the engine, the response shapes of its wire, and the
cross-field rules of ``spec/completions.yaml`` (they are the wire's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import spec

from .wire.profiles import WireProfile

UnknownFields = Literal["reject", "ignore"]


@dataclass(frozen=True)
class ServedContract:
    """One contract served on its own paths."""

    name: str
    wire: WireProfile
    completions_path: str
    models_path: str | None
    invalid_status: int
    unknown_model_status: int = 404
    unknown_fields: UnknownFields = "reject"
    request_fields: frozenset[str] | None = None
    """The top-level fields this contract serves; None: every field of its wire's schema."""

    @property
    def base_path(self) -> str:
        return self.completions_path.rsplit("/", 1)[0]


OPENAI = ServedContract("openai", "openai", "/v1/completions", "/v1/models", 400)
FRIENDLI = ServedContract("friendli", "friendli", "/dedicated/v1/completions", None, 422)
BUILT_IN: tuple[ServedContract, ...] = (OPENAI, FRIENDLI)


def builtin_contract(wire: WireProfile) -> ServedContract:
    """The built-in route of ``wire`` (what ``python -m mockserver.render`` validates with)."""
    return OPENAI if wire == "openai" else FRIENDLI


def contract_from_profile(profile: spec.Profile) -> ServedContract:
    """What ``profile`` says of a server, as the mock serves it.

    Invalid input gets the profile's first ``errors.invalid_request`` status; an unknown model
    gets 404 if the profile allows it, else its first ``errors.unknown_model`` status."""
    models = profile.operations.get("models")
    unknown_model = (404 if 404 in profile.unknown_model_statuses or
                     not profile.unknown_model_statuses else profile.unknown_model_statuses[0])
    return ServedContract(
        name=profile.name,
        wire=profile.wire,
        completions_path=profile.completions_path,
        models_path=models.path if models else None,
        invalid_status=profile.invalid_request_statuses[0],
        unknown_model_status=unknown_model,
        unknown_fields=profile.unknown_fields,
        request_fields=frozenset(profile.request_fields),
    )


def served_contracts(profiles: Sequence[str] = ()) -> tuple[ServedContract, ...]:
    """The built-in contracts and one per ``--profile`` (a shipped name or a YAML file path).

    Raises ValueError naming ``--profile`` when a profile cannot be loaded, or when two
    profiles claim the same path (a profile may take over a built-in's paths: most vendors
    serve ``/v1``)."""
    contracts = list(BUILT_IN)
    for name in profiles:
        try:
            profile = spec.get_profile(name)
        except (KeyError, OSError, ValueError, TypeError) as error:
            raise ValueError(f"--profile {name}: {_reason(error)}") from None
        contract = contract_from_profile(profile)
        for other in contracts[len(BUILT_IN):]:
            shared = _paths(contract) & _paths(other)
            if shared:
                raise ValueError(
                    f"--profile {name}: {min(shared)} is already served by profile "
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
