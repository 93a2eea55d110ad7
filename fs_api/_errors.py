"""Error types of the low-level store API (FunctionStream names)."""

from __future__ import annotations


class KvError(Exception):
    """Base class of every store error."""


class KvNotFoundError(KvError):
    """A key that must exist does not."""

    def __init__(self) -> None:
        super().__init__("key not found")


class KvIOError(KvError):
    """The backing store failed to read or write."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KvOtherError(KvError):
    """Any other store failure."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
