"""PyFlink's ``pyflink.datastream.externalized_checkpoint_retention``: kept, with no effect on results (see
``fs_compat.datastream._checkpointing``)."""

from ._checkpointing import (
    ExternalizedCheckpointRetention,
)

__all__ = [
    "ExternalizedCheckpointRetention",
]
