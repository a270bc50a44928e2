"""The server under test: its options (one table for every front end), their checks, the target
resolved from them and the environment, how it is reached, the embedded mock that stands in when
no ``--base-url`` is given, the first contact, and the one line saying why a target cannot be
tested (:mod:`~conformance.target.diagnosis`).

``conformance run``, ``conformance fuzz`` and the pytest plugin open a target the same way:
:func:`conformance.target.opening.open_target`.
"""
