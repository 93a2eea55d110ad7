"""Clocks of the windowing operators (``bytewax.operators.windowing``): what time an item has and
how far a key's watermark has come.

Public names are re-exported by :mod:`fs_compat.bytewax.operators.windowing`. A :class:`Clock` is the
configuration; ``build(resume_state)`` gives the per-key :class:`ClockLogic`, whose ``snapshot()``
is part of the key's window snapshot.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

__all__ = [
    "Clock",
    "ClockLogic",
    "EventClock",
    "SystemClock",
    "UTC_MAX",
    "UTC_MIN",
    "ZERO_TD",
]

ZERO_TD: timedelta = timedelta(seconds=0)
"""A zero length of time."""

UTC_MAX: datetime = datetime.max.replace(tzinfo=UTC)
"""The latest representable UTC datetime: the watermark at the end of input."""

UTC_MIN: datetime = datetime.min.replace(tzinfo=UTC)
"""The earliest representable UTC datetime: the watermark before any item."""

_V = TypeVar("_V")
_S = TypeVar("_S")


def system_utc() -> datetime:
    """The system clock in UTC: the default ``now_getter`` of Bytewax's clocks and runs."""
    return datetime.now(UTC)


def _same_time(ts: datetime) -> datetime | None:
    return ts


class ClockLogic(ABC, Generic[_V, _S]):
    """The per-key sense of time of a windowing operator (built by :meth:`Clock.build`).

    Per batch of a key's values the operator calls ``before_batch`` once, then ``on_item`` for
    each value; ``on_notify`` when it wakes up without items and ``on_eof`` at the end of input.
    Watermarks returned must never go backwards.
    """

    @abstractmethod
    def before_batch(self) -> None:
        """Prepare for a batch of values (e.g. read the system time once)."""

    @abstractmethod
    def on_item(self, value: _V) -> tuple[datetime, datetime]:
        """``(timestamp of value, watermark after it)``."""

    @abstractmethod
    def on_notify(self) -> datetime:
        """The current watermark, without a new item."""

    @abstractmethod
    def on_eof(self) -> datetime:
        """The watermark at the end of input (usually :data:`UTC_MAX`: close every window).
        Must not change the state that is snapshot, so a continued run goes on from it."""

    @abstractmethod
    def to_system_utc(self, timestamp: datetime) -> datetime | None:
        """The system time (UTC) at which to wake up for ``timestamp``; None: never (wait for
        items or the end of input)."""

    @abstractmethod
    def snapshot(self) -> _S:
        """An immutable, picklable copy of the state, given back to :meth:`Clock.build`."""


class Clock(ABC, Generic[_V, _S]):
    """A kind of clock: the configuration of a :class:`ClockLogic`."""

    @abstractmethod
    def build(self, resume_state: _S | None) -> ClockLogic[_V, _S]:
        """A key's clock logic, from its last snapshot (None for a new key)."""


@dataclass
class _SystemClockLogic(ClockLogic[Any, None]):
    """Every item is stamped with the system time; the watermark is the system time."""

    now_getter: Callable[[], datetime]
    _now: datetime = field(init=False)

    def __post_init__(self) -> None:
        self._now = self.now_getter()

    def _read(self) -> datetime:
        # A system clock stepping back (NTP) must not move the watermark back.
        now = self.now_getter()
        if now > self._now:
            self._now = now
        return self._now

    def before_batch(self) -> None:
        self._read()

    def on_item(self, value: Any) -> tuple[datetime, datetime]:
        return (self._now, self._now)

    def on_notify(self) -> datetime:
        return self._read()

    def on_eof(self) -> datetime:
        return UTC_MAX

    def to_system_utc(self, timestamp: datetime) -> datetime | None:
        return timestamp

    def snapshot(self) -> None:
        return None


@dataclass
class _EventClockState:
    """``watermark_base``: the largest ``timestamp - wait`` seen; ``system_time_of_max_event``:
    the system time when it was seen. The watermark is the base plus the system time since."""

    system_time_of_max_event: datetime
    watermark_base: datetime


def _fresh_event_clock_state() -> _EventClockState:
    return _EventClockState(system_time_of_max_event=UTC_MIN, watermark_base=UTC_MIN)


@dataclass
class _EventClockLogic(ClockLogic[_V, _EventClockState]):
    """Timestamps from the items; the watermark trails the largest timestamp by the wait and
    advances with the system time in between."""

    now_getter: Callable[[], datetime]
    timestamp_getter: Callable[[_V], datetime]
    to_system: Callable[[datetime], datetime | None]
    wait_for_system_duration: timedelta
    state: _EventClockState = field(default_factory=_fresh_event_clock_state)
    _system_now: datetime = field(init=False)

    def __post_init__(self) -> None:
        self._system_now = self.now_getter()
        if self.state.system_time_of_max_event <= UTC_MIN:
            # A new key: the watermark starts at UTC_MIN and advances with system time from now.
            self.state.system_time_of_max_event = self._system_now

    def _watermark(self) -> datetime:
        try:
            return self.state.watermark_base + (self._system_now - self.state.system_time_of_max_event)
        except OverflowError:
            return UTC_MAX

    def before_batch(self) -> None:
        now = self.now_getter()
        # The system clock may step back; the watermark then holds until it catches up.
        if now > self._system_now:
            self._system_now = now

    def on_item(self, value: _V) -> tuple[datetime, datetime]:
        ts = self.timestamp_getter(value)
        if not isinstance(ts, datetime):
            raise TypeError(f"`ts_getter` must return a `datetime`; got a {type(ts)!r} for item {value!r}")
        watermark = self._watermark()
        try:
            candidate = ts - self.wait_for_system_duration
        except OverflowError:
            # ``ts - wait`` is before any representable time: it cannot advance the watermark.
            return (ts, watermark)
        try:
            advances = candidate > watermark
        except TypeError as ex:
            raise TypeError(
                f"timestamp {ts!r} of item {value!r} can't be compared with the clock's time "
                f"{watermark!r}; `ts_getter` must return aware UTC datetimes (or give the clock a "
                "matching `now_getter`)"
            ) from ex
        if advances:
            self.state.watermark_base = candidate
            self.state.system_time_of_max_event = self._system_now
            return (ts, candidate)
        return (ts, watermark)

    def on_notify(self) -> datetime:
        self.before_batch()
        return self._watermark()

    def on_eof(self) -> datetime:
        return UTC_MAX

    def to_system_utc(self, timestamp: datetime) -> datetime | None:
        if self.to_system is not _same_time:
            return self.to_system(timestamp)
        # Default: the system time at which the watermark reaches ``timestamp`` (Bytewax passes
        # the timestamp through, which for past event times wakes every key at every activation,
        # and for future ones not before that time). Rounded up to whole milliseconds, the
        # runtime's timer unit, so the wake-up is never early.
        if self.state.watermark_base <= UTC_MIN:
            return None  # no item moved the watermark: it will not get anywhere by itself
        try:
            at = self.state.system_time_of_max_event + (timestamp - self.state.watermark_base)
        except OverflowError:
            return None  # not within representable time: items or the end of input close it
        sub_ms = at.microsecond % 1000
        if sub_ms:
            try:
                at += timedelta(microseconds=1000 - sub_ms)
            except OverflowError:
                return None
        return at

    def snapshot(self) -> _EventClockState:
        return replace(self.state)


@dataclass
class SystemClock(Clock[Any, None]):
    """Stamp each item with the current system time (UTC); the watermark is the system time, so
    windows close as system time passes, and all close at the end of input.

    ``_now_getter`` (not in Bytewax) replaces the system clock, e.g. ``TimeTestingGetter.get``.
    """

    _now_getter: Callable[[], datetime] = field(default=system_utc, repr=False)

    def build(self, resume_state: None) -> _SystemClockLogic:
        return _SystemClockLogic(self._now_getter)


@dataclass
class EventClock(Clock[_V, _EventClockState]):
    """Use the timestamp ``ts_getter(value)`` of each item.

    The watermark is the largest timestamp seen minus ``wait_for_system_duration``, plus the
    system time passed since that item was seen: items are on time unless they are older than the
    watermark. Timestamps must be aware UTC datetimes, unless ``now_getter`` and
    ``to_system_utc`` give another sense of time. ``to_system_utc(close time)`` is the system time
    at which to wake up and close windows (None: only items and the end of input close them); by
    default (unlike Bytewax, which passes the time through) it is the system time at which the
    watermark reaches that time.
    """

    ts_getter: Callable[[_V], datetime]
    wait_for_system_duration: timedelta
    now_getter: Callable[[], datetime] = system_utc
    to_system_utc: Callable[[datetime], datetime | None] = _same_time

    def build(self, resume_state: _EventClockState | None) -> _EventClockLogic[_V]:
        state = replace(resume_state) if resume_state is not None else _fresh_event_clock_state()
        return _EventClockLogic(
            self.now_getter, self.ts_getter, self.to_system_utc, self.wait_for_system_duration, state
        )
