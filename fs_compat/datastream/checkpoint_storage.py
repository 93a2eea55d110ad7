"""PyFlink's ``pyflink.datastream.checkpoint_storage``: kept, with no effect on results (see
``fs_compat.datastream._checkpointing``)."""

from ._checkpointing import (
    CheckpointStorage,
    CustomCheckpointStorage,
    FileSystemCheckpointStorage,
    JobManagerCheckpointStorage,
)

__all__ = [
    "CheckpointStorage",
    "CustomCheckpointStorage",
    "FileSystemCheckpointStorage",
    "JobManagerCheckpointStorage",
]
