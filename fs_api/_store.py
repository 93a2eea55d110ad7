"""The KvStore and KvIterator interfaces (FunctionStream names, contract pinned)."""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from types import TracebackType

from ._keys import ComplexKey


class KvIterator(abc.ABC):
    """A forward iterator over ``(user_key, value)`` pairs.

    Besides FunctionStream's ``has_next`` / ``next``, it is a Python iterator and a context
    manager that closes it.
    """

    @abc.abstractmethod
    def has_next(self) -> bool:
        """Whether ``next()`` will return a pair."""

    @abc.abstractmethod
    def next(self) -> tuple[bytes, bytes] | None:
        """The next pair, or ``None`` when exhausted."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release resources; further calls return nothing."""

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        while True:
            item = self.next()
            if item is None:
                return
            yield item

    def __enter__(self) -> KvIterator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class ListKvIterator(KvIterator):
    """A KvIterator over a snapshot list of pairs, taken when the scan starts."""

    __slots__ = ("_items", "_pos")

    def __init__(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        self._items: Sequence[tuple[bytes, bytes]] = items
        self._pos = 0

    def has_next(self) -> bool:
        return self._pos < len(self._items)

    def next(self) -> tuple[bytes, bytes] | None:
        if self._pos >= len(self._items):
            return None
        item = self._items[self._pos]
        self._pos += 1
        return item

    def close(self) -> None:
        self._items = ()
        self._pos = 0


class KvStore(abc.ABC):
    """A byte-oriented key-value store: a plain keyspace and a ComplexKey keyspace.

    The contract, the same for every backend:

    - ``get`` / ``get_state`` of a missing key return ``None``;
    - ``merge`` appends bytes to the stored value (or stores it when missing);
    - ``scan_complex`` yields ``(user_key, value)`` in ascending byte order of ``user_key``;
    - ``delete_prefix`` deletes exactly one (key_group, key, namespace), ignoring ``user_key``;
    - physical keys are length-prefixed, so distinct ComplexKeys never collide.
    """

    # Plain bytes keys.
    @abc.abstractmethod
    def put_state(self, key: bytes, value: bytes) -> None:
        """Store ``value`` under the plain ``key``."""

    @abc.abstractmethod
    def get_state(self, key: bytes) -> bytes | None:
        """The value under the plain ``key``, or ``None``."""

    @abc.abstractmethod
    def delete_state(self, key: bytes) -> None:
        """Delete the plain ``key`` (no error when missing)."""

    @abc.abstractmethod
    def list_states(self, start_inclusive: bytes, end_exclusive: bytes) -> list[bytes]:
        """Plain keys ``k`` with ``start_inclusive <= k < end_exclusive``, ascending."""

    # ComplexKey keys.
    @abc.abstractmethod
    def put(self, key: ComplexKey, value: bytes) -> None:
        """Store ``value`` under ``key``."""

    @abc.abstractmethod
    def get(self, key: ComplexKey) -> bytes | None:
        """The value under ``key``, or ``None``."""

    @abc.abstractmethod
    def delete(self, key: ComplexKey) -> None:
        """Delete ``key`` (no error when missing)."""

    @abc.abstractmethod
    def merge(self, key: ComplexKey, value: bytes) -> None:
        """Append ``value`` to the bytes under ``key`` (store it when missing)."""

    @abc.abstractmethod
    def delete_prefix(self, key: ComplexKey) -> None:
        """Delete every entry of ``key``'s (key_group, key, namespace); ``user_key`` is ignored."""

    @abc.abstractmethod
    def list_complex(
        self,
        key_group: bytes,
        key: bytes,
        namespace: bytes,
        start_inclusive: bytes,
        end_exclusive: bytes,
    ) -> list[bytes]:
        """User keys ``u`` of one (key_group, key, namespace) with ``start <= u < end``, ascending."""

    @abc.abstractmethod
    def scan_complex(self, key_group: bytes, key: bytes, namespace: bytes) -> KvIterator:
        """``(user_key, value)`` pairs of one (key_group, key, namespace), ascending by user key."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources held by the store."""
