"""Keys: their bytes, their key group and the subtask that owns them."""

from __future__ import annotations

import zlib
from typing import Any

from fs_api_advanced import Codec, PickleCodec

#: Flink's default maximum parallelism: the number of key groups.
MAX_PARALLELISM = 128

_PICKLE = PickleCodec()


class KeyEncoder:
    """Turns stream keys into bytes (with the key type's codec, else pickle) and key groups."""

    __slots__ = ("_codec", "max_parallelism")

    def __init__(self, codec: Codec[Any] | None = None, max_parallelism: int = MAX_PARALLELISM) -> None:
        self._codec: Codec[Any] = codec if codec is not None else _PICKLE
        self.max_parallelism = max_parallelism

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


def subtask_of(key_group: int, parallelism: int, max_parallelism: int = MAX_PARALLELISM) -> int:
    """Which of ``parallelism`` subtasks owns ``key_group`` (Flink's range assignment)."""
    return key_group * parallelism // max_parallelism


def key_group_bytes(key_group: int) -> bytes:
    return key_group.to_bytes(2, "big")
