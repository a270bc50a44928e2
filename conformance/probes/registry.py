"""The probe registry: every probe module registers its probes here, by decorator.

A probe module decorates each probe body with :func:`probe` (name, description, the features
and profile traits it needs, the probes it builds on); the registry refuses a name taken twice,
as the rule catalog and the fault registry do. Nothing lists the modules: the package imports
every module it holds (:mod:`conformance.probes`), so a new probe is one decorated function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from conformance.model.named import NamedRegistry

from .model import Probe, ProbeBody


class ProbeRegistry(NamedRegistry[Probe]):
    """Probes by name, in the order they registered: the package imports its modules in name
    order (a module's own imports first), and a module registers its probes top to bottom.
    The runner starts probes in this order, and reports list their exchanges in it."""

    def __init__(self) -> None:
        super().__init__("probe")

    def probe(
        self,
        name: str,
        description: str,
        *,
        features: Iterable[str] = (),
        traits: Iterable[str] = (),
        needs: Iterable[str] = (),
        operation: str = "completions",
    ) -> Callable[[ProbeBody], ProbeBody]:
        """Decorator: register the decorated body as the probe ``name``; the body is returned
        unchanged (tests call it directly)."""

        def register(run: ProbeBody) -> ProbeBody:
            self.add(name, Probe(name, description, run, features=tuple(features),
                                 traits=tuple(traits), needs=tuple(needs), operation=operation))
            return run

        return register


PROBES = ProbeRegistry()
"""Every probe; complete once :mod:`conformance.probes` is imported."""
probe = PROBES.probe
