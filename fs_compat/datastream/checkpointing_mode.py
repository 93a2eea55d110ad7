"""PyFlink's ``pyflink.datastream.checkpointing_mode``: kept, with no effect on results (see
``fs_compat.datastream._checkpointing``)."""

from ._checkpointing import (
    CheckpointingMode,
)

__all__ = [
    "CheckpointingMode",
]
