"""The processor Context (FunctionStream names)."""

from __future__ import annotations

import abc

from ._store import KvStore


class Context(abc.ABC):
    """What a processor sees of its runtime: emit records and watermarks, open stores, read config.

    Typed state (ValueState, MapState, ...) lives in ``fs_api_advanced`` and is built on
    ``getOrCreateKVStore``.
    """

    @abc.abstractmethod
    def emit(self, data: bytes, channel: int = 0) -> None:
        """Send ``data`` downstream on output ``channel``."""

    @abc.abstractmethod
    def emit_watermark(self, watermark: int, channel: int = 0) -> None:
        """Send a watermark downstream on output ``channel``."""

    @abc.abstractmethod
    def getOrCreateKVStore(self, name: str) -> KvStore:  # noqa: N802 - FunctionStream name
        """The store called ``name``; the same name gives the same store."""

    @abc.abstractmethod
    def getConfig(self) -> dict[str, str]:  # noqa: N802 - FunctionStream name
        """The processor's configuration."""
