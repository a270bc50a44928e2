"""``conformance judge``: recorded traffic judged by the catalog without sending a request.

* :mod:`.sources` tells a HAR (:mod:`.har`), a VCR cassette (:mod:`.cassette`) and one of this
  harness's JSON reports (:mod:`.saved`) apart by content, and reads each as a stream of
  :class:`~.recorded.Recorded` exchanges;
* :mod:`.recorded` turns one into the harness's :class:`~conformance.transport.Exchange`
  (decoded, a stream parsed by the harness's SSE parser, secrets redacted);
* :mod:`.judging` judges each completions exchange with the rules ``conformance fuzz`` binds
  to one exchange, through the same bindings and the same checks
  (:func:`conformance.fuzz.reading.read`);
* :mod:`.cli` is the command line, its reports those of ``conformance run``.
"""
