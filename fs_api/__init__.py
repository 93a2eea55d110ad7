"""fs_api: the low-level, FunctionStream-compatible processor and store API.

>>> from fs_api import ComplexKey, MemoryKvStore
>>> store = MemoryKvStore()
>>> store.put(ComplexKey(b"", b"user-1", b"count", b""), b"\\x01")
>>> store.get(ComplexKey(b"", b"user-1", b"count", b""))
b'\\x01'
"""

from ._context import Context
from ._driver import FSProcessorDriver
from ._errors import KvError, KvIOError, KvNotFoundError, KvOtherError
from ._keys import ComplexKey, check_part
from ._memory import MemoryKvStore
from ._sqlite import SqliteKvStore
from ._store import KvIterator, KvStore, ListKvIterator

__all__ = [
    "ComplexKey",
    "Context",
    "FSProcessorDriver",
    "KvError",
    "KvIOError",
    "KvIterator",
    "KvNotFoundError",
    "KvOtherError",
    "KvStore",
    "ListKvIterator",
    "MemoryKvStore",
    "SqliteKvStore",
    "check_part",
]
