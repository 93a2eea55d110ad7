"""Time-to-live configuration of state, in processing time (Flink's semantics)."""

from __future__ import annotations

import enum
import time
from collections.abc import Callable

import attrs

#: A processing-time clock in epoch milliseconds. Inject one in tests instead of sleeping.
Clock = Callable[[], int]


def system_clock() -> int:
    """The wall clock in epoch milliseconds."""
    return time.time_ns() // 1_000_000


class TtlUpdate(enum.Enum):
    """When an entry's last-access timestamp is refreshed."""

    ON_CREATE_AND_WRITE = "on_create_and_write"
    ON_READ_AND_WRITE = "on_read_and_write"


class TtlVisibility(enum.Enum):
    """Whether an expired entry that was not cleaned up yet may still be returned (once)."""

    NEVER_RETURN_EXPIRED = "never_return_expired"
    RETURN_EXPIRED_IF_NOT_CLEANED_UP = "return_expired_if_not_cleaned_up"


def _positive(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"TTL {attribute.name} must be a positive number of milliseconds, got {value!r}")


def _non_negative(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"TTL {attribute.name} must be >= 0, got {value!r}")


@attrs.frozen
class TtlConfig:
    """How long state lives after its last access, and how expiry is seen and cleaned.

    An entry expires when ``now >= last_access + ttl_ms``. Reading an expired entry removes it;
    it is returned (that once) only under ``RETURN_EXPIRED_IF_NOT_CLEANED_UP``. Each state access
    also checks up to ``incremental_cleanup_size`` other entries of the same store, so idle keys'
    expired state does not stay forever; ``cleanup_full_snapshot`` drops expired entries when the
    state is snapshotted.

    >>> TtlConfig(ttl_ms=1000).update
    <TtlUpdate.ON_CREATE_AND_WRITE: 'on_create_and_write'>
    >>> TtlConfig(ttl_ms=0)
    Traceback (most recent call last):
    ...
    ValueError: TTL ttl_ms must be a positive number of milliseconds, got 0
    """

    ttl_ms: int = attrs.field(validator=_positive)
    update: TtlUpdate = TtlUpdate.ON_CREATE_AND_WRITE
    visibility: TtlVisibility = TtlVisibility.NEVER_RETURN_EXPIRED
    incremental_cleanup_size: int = attrs.field(default=5, validator=_non_negative)
    cleanup_full_snapshot: bool = False
