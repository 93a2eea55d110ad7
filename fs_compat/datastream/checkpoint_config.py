"""PyFlink's ``pyflink.datastream.checkpoint_config``: kept, with no effect on results (see
``fs_compat.datastream._checkpointing``)."""

from ._checkpointing import (
    CheckpointConfig,
)

__all__ = [
    "CheckpointConfig",
]
