"""fs_compat: the porting layer. PyFlink code ports by changing ``pyflink.`` to ``fs_compat.``
in its imports (``fs_compat.common``, ``fs_compat.datastream``); Bytewax code by changing
``bytewax.`` to ``fs_compat.bytewax.``. Everything runs on one engine-neutral runtime, in-process
or on Spark."""

from fs_compat._pickling import share_if_spark_loaded as _share_if_spark_loaded

__all__: list[str] = []

# On a Spark worker, the job's classes unpickled with the job's functions and its records are one
# class (``fs_compat._pickling``).
_share_if_spark_loaded()
