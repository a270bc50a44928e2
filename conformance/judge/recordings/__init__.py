"""Recordings read as exchanges: what each file is (:mod:`.sources`), the readers of HAR
(:mod:`.har`), VCR cassettes (:mod:`.cassette`) and this harness's reports (:mod:`.saved`),
and one recorded exchange as the harness's own (:mod:`.recorded`)."""
