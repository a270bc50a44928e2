"""``conformance judge``: recorded traffic judged by the catalog without sending a request.

* :mod:`.recordings` tells a HAR, a VCR cassette and one of this harness's JSON reports apart
  by content, reads each as a stream of recorded exchanges, and turns one into the harness's
  :class:`~conformance.transport.Exchange` (decoded, a stream parsed by the harness's SSE
  parser, secrets redacted);
* :mod:`.judging` judges each completions exchange with the rules ``conformance fuzz`` binds
  to one exchange, through the same bindings and the same checks
  (:func:`conformance.bindings.reading.read`);
* :mod:`.cli` is the command line (progress: :mod:`.progress`), its reports those of
  ``conformance run``.
"""
