"""``WatermarkStrategy`` and ``TimestampAssigner``: how a stream gets event timestamps and
watermarks."""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from ._time import Duration

_MIN_LONG = -(1 << 63)


class TimestampAssigner(abc.ABC):
    """Assigns event-time timestamps (milliseconds since the epoch) to elements.

    ``record_timestamp`` is the element's current timestamp, or the minimum 64-bit integer when it
    has none (as in Flink).
    """

    @abc.abstractmethod
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        """The new timestamp of ``value``."""


_Assigner = TimestampAssigner | Callable[[Any, int], int]


def _duration_ms(what: str, duration: object) -> int:
    if not isinstance(duration, Duration):
        raise TypeError(f"{what} must be a Duration, got {type(duration).__name__}: {duration!r}")
    return duration.to_milliseconds()


class WatermarkStrategy:
    """How to assign timestamps and generate watermarks; immutable (every ``with_*`` returns a new
    strategy).

    ``max_out_of_orderness_ms`` is the watermark delay (0 for monotonous timestamps, ``None``
    for no watermarks); ``extract_timestamp(value, record_timestamp)`` applies the timestamp
    assigner (keeping ``record_timestamp``, which may be None, when there is none).

    >>> ws = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5))
    >>> ws = ws.with_timestamp_assigner(lambda value, ts: value[1])
    >>> ws.max_out_of_orderness_ms, ws.extract_timestamp(("a", 1700), None)
    (5000, 1700)
    >>> WatermarkStrategy.no_watermarks().max_out_of_orderness_ms is None
    True
    """

    __slots__ = ("_alignment", "_assigner", "_idle_timeout_ms", "_max_out_of_orderness_ms", "_per_element")

    def __init__(
        self,
        max_out_of_orderness_ms: int | None,
        timestamp_assigner: _Assigner | None = None,
        idle_timeout_ms: int | None = None,
        alignment: tuple[str, int, int | None] | None = None,
        per_element: bool = False,
    ) -> None:
        self._max_out_of_orderness_ms = max_out_of_orderness_ms
        self._assigner = timestamp_assigner
        self._idle_timeout_ms = idle_timeout_ms
        self._alignment = alignment
        self._per_element = per_element

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy:
        """Watermarks that follow the largest timestamp seen (ascending timestamps)."""
        return WatermarkStrategy(0)

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> WatermarkStrategy:
        """Watermarks that trail the largest timestamp seen by ``max_out_of_orderness``."""
        ms = _duration_ms("max_out_of_orderness", max_out_of_orderness)
        if ms < 0:
            raise ValueError(f"maxOutOfOrderness cannot be negative: {max_out_of_orderness}")
        return WatermarkStrategy(ms)

    @staticmethod
    def no_watermarks() -> WatermarkStrategy:
        """No watermarks at all (processing-time pipelines)."""
        return WatermarkStrategy(None)

    def _copy(self, **changes: Any) -> WatermarkStrategy:
        fields: dict[str, Any] = {
            "max_out_of_orderness_ms": self._max_out_of_orderness_ms,
            "timestamp_assigner": self._assigner,
            "idle_timeout_ms": self._idle_timeout_ms,
            "alignment": self._alignment,
            "per_element": self._per_element,
        }
        fields.update(changes)
        return WatermarkStrategy(**fields)

    def with_timestamp_assigner(self, timestamp_assigner: _Assigner) -> WatermarkStrategy:
        """A new strategy that takes timestamps from ``timestamp_assigner`` (a TimestampAssigner
        or a callable ``(value, record_timestamp) -> int``)."""
        if not isinstance(timestamp_assigner, TimestampAssigner) and not callable(timestamp_assigner):
            raise TypeError(
                "timestamp_assigner must be a TimestampAssigner or a callable, "
                f"got {type(timestamp_assigner).__name__}: {timestamp_assigner!r}"
            )
        return self._copy(timestamp_assigner=timestamp_assigner)

    def with_idleness(self, idle_timeout: Duration) -> WatermarkStrategy:
        """A new strategy with idleness detection (accepted; inputs here never stall a watermark)."""
        return self._copy(idle_timeout_ms=_duration_ms("idle_timeout", idle_timeout))

    def with_watermark_alignment(
        self,
        watermark_group: str,
        max_allowed_watermark_drift: Duration,
        update_interval: Duration | None = None,
    ) -> WatermarkStrategy:
        """A new strategy with watermark alignment (accepted; it only throttles sources in Flink)."""
        drift = _duration_ms("max_allowed_watermark_drift", max_allowed_watermark_drift)
        interval = None if update_interval is None else _duration_ms("update_interval", update_interval)
        return self._copy(alignment=(watermark_group, drift, interval))

    def with_per_element_watermarks(self) -> WatermarkStrategy:
        """fs-compat extension: a new strategy that emits its watermark after every element whose
        timestamp is the largest so far (Flink's ``PerElementWatermarkGenerator``, which PyFlink's
        own tests build through the JVM), instead of every ``auto_watermark_interval`` of
        processing time. Results then no longer depend on how fast records arrive.

        >>> WatermarkStrategy.for_monotonous_timestamps().with_per_element_watermarks().per_element
        True
        """
        return self._copy(per_element=True)

    @property
    def per_element(self) -> bool:
        """True when a watermark follows every element (``with_per_element_watermarks``)."""
        return self._per_element

    @property
    def max_out_of_orderness_ms(self) -> int | None:
        """The watermark delay in milliseconds: 0 for monotonous timestamps, None for no watermarks."""
        return self._max_out_of_orderness_ms

    def extract_timestamp(self, value: Any, record_timestamp: int | None) -> int | None:
        """The timestamp of ``value``: the assigner's, else ``record_timestamp`` unchanged."""
        assigner = self._assigner
        if assigner is None:
            return record_timestamp
        ts = _MIN_LONG if record_timestamp is None else record_timestamp
        if isinstance(assigner, TimestampAssigner):
            result = assigner.extract_timestamp(value, ts)
        else:
            result = assigner(value, ts)
        if isinstance(result, bool) or not isinstance(result, int):
            raise TypeError(
                "the timestamp assigner must return an int (milliseconds since the epoch), "
                f"got {type(result).__name__}: {result!r} for value {value!r}"
            )
        return result

    def __repr__(self) -> str:
        ms = self._max_out_of_orderness_ms
        if ms is None:
            base = "WatermarkStrategy.no_watermarks()"
        elif ms == 0:
            base = "WatermarkStrategy.for_monotonous_timestamps()"
        else:
            base = f"WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis({ms}))"
        if self._assigner is not None:
            base += f".with_timestamp_assigner({self._assigner!r})"
        if self._idle_timeout_ms is not None:
            base += f".with_idleness(Duration.of_millis({self._idle_timeout_ms}))"
        if self._per_element:
            base += ".with_per_element_watermarks()"
        return base
