"""An in-process Context for running and testing processors."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ._context import Context
from ._memory import MemoryKvStore
from ._store import KvStore


class LocalContext(Context):
    """A Context over in-memory stores (or any store ``store_factory`` makes).

    ``emitted`` holds ``(data, channel)`` pairs and ``watermarks`` ``(watermark, channel)`` pairs,
    in emit order.

    >>> ctx = LocalContext({"k": "v"})
    >>> ctx.getOrCreateKVStore("s") is ctx.getOrCreateKVStore("s")
    True
    >>> ctx.getConfig()
    {'k': 'v'}
    """

    def __init__(
        self,
        config: Mapping[str, str] | None = None,
        store_factory: Callable[[str], KvStore] | None = None,
    ) -> None:
        self._config = dict(config or {})
        self._store_factory: Callable[[str], KvStore] = store_factory or (lambda _name: MemoryKvStore())
        self._stores: dict[str, KvStore] = {}
        self.emitted: list[tuple[bytes, int]] = []
        self.watermarks: list[tuple[int, int]] = []

    def emit(self, data: bytes, channel: int = 0) -> None:
        self.emitted.append((data, channel))

    def emit_watermark(self, watermark: int, channel: int = 0) -> None:
        self.watermarks.append((watermark, channel))

    def getOrCreateKVStore(self, name: str) -> KvStore:  # noqa: N802 - FunctionStream name
        store = self._stores.get(name)
        if store is None:
            store = self._stores[name] = self._store_factory(name)
        return store

    def getConfig(self) -> dict[str, str]:  # noqa: N802 - FunctionStream name
        return dict(self._config)

    def close(self) -> None:
        """Close every store this context opened."""
        for store in self._stores.values():
            store.close()
        self._stores.clear()
