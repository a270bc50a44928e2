"""One run of the catalog: what it is configured with (:mod:`~conformance.run.settings`), what a
check reads (:mod:`~conformance.run.check_context`), how refusals are counted
(:mod:`~conformance.run.refusal`), the runner that sends the probes and judges the rules, the
latency it measures, and what it leaves behind (:mod:`~conformance.run.report_files`,
:mod:`~conformance.run.given_options`).
"""
