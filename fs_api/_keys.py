"""ComplexKey and the physical key layout shared by every persistent backend."""

from __future__ import annotations

import dataclasses
import struct

from ._errors import KvError

_LEN = struct.Struct(">I")

#: Tag bytes that keep the plain keyspace (``put_state``) apart from the complex one (``put``).
PLAIN_TAG = b"\x00"
COMPLEX_TAG = b"\x01"


@dataclasses.dataclass(frozen=True, slots=True)
class ComplexKey:
    """A four-part state key: ``key_group`` / ``key`` / ``namespace`` / ``user_key``.

    ``key_group`` groups keys for partitioning, ``key`` is the stream key, ``namespace`` separates
    states (or windows) of one key, and ``user_key`` addresses entries of a map or queue.

    >>> ComplexKey(b"g", b"k", b"ns", b"u").namespace
    b'ns'
    """

    key_group: bytes
    key: bytes
    namespace: bytes
    user_key: bytes


def check_part(name: str, value: object) -> bytes:
    """Return ``value`` if it is ``bytes``, else raise a KvError naming the part."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise KvError(f"{name} must be bytes, got {type(value).__name__}")


def prefix_of(key_group: bytes, key: bytes, namespace: bytes) -> bytes:
    """The physical prefix of one (key_group, key, namespace): every part length-prefixed.

    Length prefixes make the layout unambiguous, so ``("a", "bc")`` and ``("ab", "c")`` never
    collide and a scan of namespace ``m`` never sees namespace ``m2``.

    >>> prefix_of(b"a", b"bc", b"") != prefix_of(b"ab", b"c", b"")
    True
    """
    kg = check_part("key_group", key_group)
    k = check_part("key", key)
    ns = check_part("namespace", namespace)
    return b"".join((COMPLEX_TAG, _LEN.pack(len(kg)), kg, _LEN.pack(len(k)), k, _LEN.pack(len(ns)), ns))


def physical_key(ck: ComplexKey) -> bytes:
    """The physical key of a ComplexKey: its prefix followed by the raw user key.

    The user key comes last and unprefixed, so within one prefix byte order of physical keys is
    byte order of user keys.
    """
    return prefix_of(ck.key_group, ck.key, ck.namespace) + check_part("user_key", ck.user_key)


def prefix_upper_bound(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string that starts with ``prefix``.

    ``None`` when there is none (``prefix`` is empty or all ``0xff``).
    """
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes((stripped[-1] + 1,))
