"""``pyflink.common.configuration``: ``Configuration``."""

from ._configuration import Configuration

__all__ = ["Configuration"]
