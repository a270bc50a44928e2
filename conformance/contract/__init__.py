"""What the contract makes of a request body, judged from the harness's side: valid or invalid
and how (:mod:`~conformance.contract.validity`), with a fast first answer for the common case
(:mod:`~conformance.contract.fastschema`). The fuzzer, the strategies and the bindings ask it.
"""
