"""Suite-wide settings, applied at import time (before any test module is collected)."""

import os

# Jobs run on Spark by default (``execution.target``, DEFAULT_TARGET). Tests choose their target
# explicitly: the Spark tests set ``execution.target=spark`` through ``env.configure(...)``, which
# wins over this variable; everything else runs in-process, which keeps the suite fast.
os.environ.setdefault("FS_COMPAT_TARGET", "local")
