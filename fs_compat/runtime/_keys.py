"""Keys: their bytes, their key group and the subtask that owns them."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

from fs_api_advanced import Codec, PickleCodec

#: Flink's default maximum parallelism: the number of key groups.
MAX_PARALLELISM = 128

_PICKLE = PickleCodec()


#: Key types whose equal values need not pickle to equal bytes (lists and tuples do: PyFlink
#: keys by them too).
_NOT_CANONICAL = frozenset({dict, set, frozenset})

#: How many keys ``KeyEncoder.locate`` remembers before it starts over.
MEMO_SIZE = 1 << 17


class KeyEncoder:
    """Turns stream keys into bytes (with the key type's codec, else pickle) and key groups."""

    __slots__ = ("_codec", "_memo", "max_parallelism")

    def __init__(self, codec: Codec[Any] | None = None, max_parallelism: int = MAX_PARALLELISM) -> None:
        self._codec: Codec[Any] = codec if codec is not None else _PICKLE
        self.max_parallelism = max_parallelism
        self._memo: dict[Any, tuple[bytes, int]] = {}

    def locate(self, key: Any) -> tuple[bytes, int]:
        """``(key bytes, key group)`` of ``key``. Remembered for ``int`` and ``str`` keys and
        tuples of them (exactly those types, whose equal values encode alike: ``1``, ``1.0`` and
        ``True`` are equal but encode apart), so a key seen before costs a dict lookup and its
        bytes are the same object each time. A dict or set key (whose encoding is not
        canonical), or one the codec cannot encode, is a TypeError."""
        kind = type(key)
        if kind is int or kind is str or (kind is tuple and _plain_parts(key)):
            found = self._memo.get(key)
            if found is not None:
                return found
            kb = self.encode(key)
            memo = self._memo
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            found = memo[key] = (kb, self.key_group(kb))
            return found
        if kind in _NOT_CANONICAL:
            raise TypeError(
                f"the key {key!r} is a {kind.__name__}: equal {kind.__name__}s need not encode alike "
                "(their order depends on insertion or on the process's hash seed), so one key could "
                "get two states; use a tuple, e.g. tuple(sorted(...))"
            )
        kb = self.encode(key)
        return kb, self.key_group(kb)

    def key_groups(self, keys: Sequence[Any]) -> list[int] | None:
        """The key group of each of ``keys`` (``locate``'s), or None when one of them is None or
        cannot be used as a key (the caller then reports it, naming the record)."""
        locate = self.locate
        groups: list[int] = []
        add = groups.append
        for key in keys:
            if key is None:
                return None
            try:
                add(locate(key)[1])
            except TypeError:
                return None
        return groups

    def encode(self, key: Any) -> bytes:
        try:
            return self._codec.encode(key)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cannot encode key {key!r} with {self._codec!r}: {exc}") from exc

    def decode(self, data: bytes) -> Any:
        return self._codec.decode(data)

    def key_group(self, key_bytes: bytes) -> int:
        """A stable key group in ``[0, max_parallelism)``: the same on every machine and run."""
        return zlib.crc32(key_bytes) % self.max_parallelism

    def __getstate__(self) -> tuple[Codec[Any], int]:
        return self._codec, self.max_parallelism

    def __setstate__(self, state: tuple[Codec[Any], int]) -> None:
        self._codec, self.max_parallelism = state
        self._memo = {}


def _plain_parts(key: tuple[Any, ...]) -> bool:
    """Whether every part of ``key`` is exactly an ``int`` or a ``str`` (``locate`` remembers it)."""
    for part in key:
        kind = type(part)
        if kind is not int and kind is not str:
            return False
    return True


def subtask_of(key_group: int, parallelism: int, max_parallelism: int = MAX_PARALLELISM) -> int:
    """Which of ``parallelism`` subtasks owns ``key_group`` (Flink's range assignment)."""
    return key_group * parallelism // max_parallelism


def key_group_bytes(key_group: int) -> bytes:
    return key_group.to_bytes(2, "big")
