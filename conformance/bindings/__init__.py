"""One exchange filed where a rule's check reads it, and judged by that check alone.

A rule's ``fuzz=`` names a *binding*: the shape of exchange it can judge on its own and how an
exchange of that shape is filed as the probe the rule reads (:mod:`.binders`). The fuzzer
(:mod:`conformance.fuzz`) binds every fuzzed exchange, ``conformance judge``
(:mod:`conformance.judge`) every recorded one, each as a :class:`~.sample.Sample`, and both
run the rule's own check on it through :func:`.reading.read`, so the two never disagree about
what a rule says.

The package sits below the rule catalog (:mod:`conformance.rules`), which checks each rule's
``fuzz`` against :data:`.binders.BINDERS` as the rule registers, and below the fuzzer and the
judge, which read the catalog: it imports neither (``tests/test_import_graph.py``). No
schemathesis here.
"""
