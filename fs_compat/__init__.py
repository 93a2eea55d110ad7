"""fs_compat: the porting layer. PyFlink code ports by changing ``pyflink.`` to ``fs_compat.``
in its imports (``fs_compat.common``, ``fs_compat.datastream``); Bytewax code by changing
``bytewax.`` to ``fs_compat.bytewax.``. Everything runs on one engine-neutral runtime, in-process
or on Spark."""

__all__: list[str] = []
