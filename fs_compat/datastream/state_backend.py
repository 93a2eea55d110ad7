"""PyFlink's ``pyflink.datastream.state_backend``: kept, with no effect on results (see
``fs_compat.datastream._checkpointing``)."""

from ._checkpointing import (
    CustomStateBackend,
    EmbeddedRocksDBStateBackend,
    HashMapStateBackend,
    PredefinedOptions,
    StateBackend,
)

__all__ = [
    "CustomStateBackend",
    "EmbeddedRocksDBStateBackend",
    "HashMapStateBackend",
    "PredefinedOptions",
    "StateBackend",
]
