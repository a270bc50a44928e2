"""The target opened for a run: the embedded mock started, the target reached once, the model
found; shared by ``conformance run``, ``conformance fuzz`` and the pytest plugin.

:func:`open_target` is a context manager over a :class:`~conformance.target.resolved.
ResolvedTarget`. Without ``--base-url`` it starts the embedded mock (:mod:`conformance.
embedded`) for the profile and stops it when the block ends, however it ends. Then it makes
the first contact (:func:`~conformance.target.first_contact.first_contact`): a target that cannot be
reached, refuses the key or stays rate-limited is one line (:class:`HarnessError`) before the
run sends anything else, and without ``--model`` the model is the first one the listing gives.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from conformance.run.settings import Settings, join_url
from conformance.target.embedded import EmbeddedMock, serving_args
from conformance.target.first_contact import first_contact
from conformance.target.resolved import ResolvedTarget
from conformance.transport import Exchange

MOCK_STARTING = "starting the embedded mock server"
"""What ``announce`` is told before the embedded mock starts (it takes a second or two)."""


@dataclass(frozen=True)
class OpenTarget:
    """A reached target: the run's complete settings, whether the embedded mock is the target
    (the reports say so), and the model listing's exchange when the model was discovered (a
    report keeps it, so a replay of the report answers the discovery too)."""

    settings: Settings
    embedded: bool
    discovery: Exchange | None = None


@contextmanager
def open_target(
    target: ResolvedTarget, *, announce: Callable[[str], None] = lambda line: None
) -> Iterator[OpenTarget]:
    """Start the embedded mock if it is the target, reach the target once and discover its
    model if none was given; yield the :class:`OpenTarget`, and stop the mock on the way out.

    A server named by ``--base-url`` holds nothing open: the settings stay good after the
    block (the pytest plugin keeps them for its session)."""
    mock = EmbeddedMock(serving_args(target.options.profile_ref)) if target.embedded else None
    try:
        if mock is not None:
            announce(MOCK_STARTING)
            mock.start()
        yield asyncio.run(_reach(target, mock))
    finally:
        if mock is not None:
            mock.stop()


async def _reach(target: ResolvedTarget, mock: EmbeddedMock | None) -> OpenTarget:
    """The first contact, and the settings it completes (the mock's URL, the model found)."""
    settings, options, profile = target.settings, target.options, target.profile
    if mock is not None:
        settings = dataclasses.replace(settings, base_url=mock.url_for(profile))
    opened = OpenTarget(settings, embedded=mock is not None)
    if options.model or (profile.models_path is None and mock is None):
        await first_contact(settings, options, discover=False)
        return opened
    listing = None
    if profile.models_path is None and mock is not None:  # the mock's OpenAI listing
        listing = join_url(mock.openai_url, "/v1/models", "/v1")
    discovered: list[Exchange] = []
    model = await first_contact(settings, options, discover=True, listing=listing,
                                on_exchange=discovered.append)
    return dataclasses.replace(opened, settings=dataclasses.replace(settings, model=model or ""),
                               discovery=discovered[-1] if discovered else None)
