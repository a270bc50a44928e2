"""``python -m mockserver``: the same as the ``mockserver`` command."""

from .cli import main

raise SystemExit(main())
