"""``python -m fs_compat.cli``: the ``fs-compat`` command."""

from fs_compat.cli import main

raise SystemExit(main())
