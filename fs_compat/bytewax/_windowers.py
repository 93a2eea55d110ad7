"""Windowers of the windowing operators (``bytewax.operators.windowing``): which windows an item
falls in, which windows merge and which have closed.

Public names are re-exported by :mod:`fs_compat.bytewax.operators.windowing`. A :class:`Windower`
is the configuration; ``build(resume_state)`` gives the per-key :class:`WindowerLogic`, whose
``snapshot()`` is part of the key's window snapshot.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from ._clocks import UTC_MIN, ZERO_TD

__all__ = [
    "LATE_SESSION_ID",
    "SessionWindower",
    "SlidingWindower",
    "TumblingWindower",
    "WindowMetadata",
    "Windower",
    "WindowerLogic",
]

_S = TypeVar("_S")

_NO_MERGES: tuple[tuple[int, int], ...] = ()

_TICK = timedelta(microseconds=1)
"""The smallest step of time: a session closes once the watermark is *past* close + gap."""


@dataclass
class WindowMetadata:
    """A window's open and close time, and the ids of the windows merged into it.

    For sliding and tumbling windows ``close_time`` is exclusive; for session windows it is the
    timestamp of the session's last item (inclusive).
    """

    open_time: datetime
    """When the window opened."""
    close_time: datetime
    """When the window closed."""
    merged_ids: set[int] = field(default_factory=set)
    """The ids of the windows merged into this one before it closed."""


class WindowerLogic(ABC, Generic[_S]):
    """The per-key window bookkeeping of a windowing operator (built by :meth:`Windower.build`)."""

    @abstractmethod
    def open_for(self, timestamp: datetime) -> Iterable[int]:
        """The ids of the windows an on-time item with ``timestamp`` is in; opens them."""

    @abstractmethod
    def late_for(self, timestamp: datetime) -> Iterable[int]:
        """The ids of the windows a late item would have been in (or a sentinel); keeps no state."""

    @abstractmethod
    def merged(self) -> Iterable[tuple[int, int]]:
        """``(original id, target id)`` for each merge since the last call (once each)."""

    @abstractmethod
    def close_for(self, watermark: datetime) -> Iterable[tuple[int, WindowMetadata]]:
        """The windows closed by ``watermark`` (never regressing), with their final metadata;
        their ids are never opened again."""

    @abstractmethod
    def notify_at(self) -> datetime | None:
        """The next (event) time at which a window might close, or None."""

    @abstractmethod
    def is_empty(self) -> bool:
        """True when no state needs keeping: the key's window state may then be dropped."""

    @abstractmethod
    def snapshot(self) -> _S:
        """An immutable, picklable copy of the state, given back to :meth:`Windower.build`."""


class Windower(ABC, Generic[_S]):
    """A kind of window: the configuration of a :class:`WindowerLogic`."""

    @abstractmethod
    def build(self, resume_state: _S | None) -> WindowerLogic[_S]:
        """A key's windower logic, from its last snapshot (None for a new key)."""


# Sliding and tumbling windows. -----------------------------------------------------------------


@dataclass
class _SlidingWindowerState:
    opened: dict[int, WindowMetadata] = field(default_factory=dict)
    """The open windows by id, in the order they opened."""


@dataclass
class _SlidingWindowerLogic(WindowerLogic[_SlidingWindowerState]):
    """Window ``i`` covers ``[align_to + i * offset, align_to + i * offset + length)``."""

    length: timedelta
    offset: timedelta
    align_to: datetime
    state: _SlidingWindowerState

    def intersects(self, timestamp: datetime) -> list[int]:
        """The ids of the windows that contain ``timestamp``, ascending."""
        since = timestamp - self.align_to
        first = (since - self.length) // self.offset + 1
        last = since // self.offset
        return list(range(first, last + 1))

    def _metadata_for(self, window_id: int) -> WindowMetadata:
        open_time = self.align_to + self.offset * window_id
        return WindowMetadata(open_time, open_time + self.length)

    def open_for(self, timestamp: datetime) -> list[int]:
        ids = self.intersects(timestamp)
        opened = self.state.opened
        for window_id in ids:
            if window_id not in opened:
                opened[window_id] = self._metadata_for(window_id)
        return ids

    def late_for(self, timestamp: datetime) -> list[int]:
        return self.intersects(timestamp)

    def merged(self) -> Iterable[tuple[int, int]]:
        return _NO_MERGES

    def close_for(self, watermark: datetime) -> list[tuple[int, WindowMetadata]]:
        opened = self.state.opened
        closed = [(wid, meta) for wid, meta in opened.items() if meta.close_time <= watermark]
        for wid, _meta in closed:
            del opened[wid]
        return closed

    def notify_at(self) -> datetime | None:
        return min((meta.close_time for meta in self.state.opened.values()), default=None)

    def is_empty(self) -> bool:
        return not self.state.opened

    def snapshot(self) -> _SlidingWindowerState:
        return copy.deepcopy(self.state)


@dataclass
class SlidingWindower(Windower[_SlidingWindowerState]):
    """Windows of ``length`` starting every ``offset`` (``offset <= length``; overlapping when
    shorter), aligned so that a window starts at ``align_to``. Open times are inclusive, close
    times exclusive; a window closes once the watermark reaches its close time."""

    length: timedelta
    offset: timedelta
    align_to: datetime

    def __post_init__(self) -> None:
        if self.offset > self.length:
            raise ValueError(
                "sliding window `offset` can't be longer than `length`; "
                "there would be undefined gaps between windows"
            )
        if self.offset <= ZERO_TD:
            raise ValueError("sliding window `offset` must be positive")

    def build(self, resume_state: _SlidingWindowerState | None) -> _SlidingWindowerLogic:
        state = resume_state if resume_state is not None else _SlidingWindowerState()
        return _SlidingWindowerLogic(self.length, self.offset, self.align_to, state)


@dataclass
class TumblingWindower(Windower[_SlidingWindowerState]):
    """Back-to-back windows of ``length`` aligned so that one starts at ``align_to``; each item is
    in exactly one. Open times are inclusive, close times exclusive."""

    length: timedelta
    align_to: datetime

    def __post_init__(self) -> None:
        if self.length <= ZERO_TD:
            raise ValueError("tumbling window `length` must be positive")

    def build(self, resume_state: _SlidingWindowerState | None) -> _SlidingWindowerLogic:
        state = resume_state if resume_state is not None else _SlidingWindowerState()
        return _SlidingWindowerLogic(self.length, self.length, self.align_to, state)


# Session windows. ------------------------------------------------------------------------------

LATE_SESSION_ID: int = -1
"""The window id given to items late for a session window."""


@dataclass
class _SessionWindowerState:
    max_key: int = LATE_SESSION_ID
    """The last session id handed out."""
    sessions: dict[int, WindowMetadata] = field(default_factory=dict)
    """The open sessions by id."""
    merge_queue: list[tuple[int, int]] = field(default_factory=list)
    """Merges not reported yet: ``(original id, target id)``."""


def _session_find_merges(sessions: dict[int, WindowMetadata], gap: timedelta) -> list[tuple[int, int]]:
    """Merge the sessions (in place) that are within ``gap`` of each other; return the merges as
    ``(original id, target id)``, the target being the session that opened first."""
    merges: list[tuple[int, int]] = []
    ordered = sorted(sessions.items(), key=lambda id_meta: id_meta[1].open_time)
    if not ordered:
        return merges
    target_id, target = ordered[0]
    for this_id, this in ordered[1:]:
        if this.open_time - target.close_time <= gap:
            target.close_time = max(target.close_time, this.close_time)
            target.merged_ids.add(this_id)
            target.merged_ids |= this.merged_ids
            merges.append((this_id, target_id))
            del sessions[this_id]
        else:
            target_id, target = this_id, this
    return merges


@dataclass
class _SessionWindowerLogic(WindowerLogic[_SessionWindowerState]):
    """Sessions: items closer than ``gap`` share a window; ids count up from 0 per key."""

    gap: timedelta
    state: _SessionWindowerState

    def _merge(self) -> None:
        if len(self.state.sessions) > 1:
            self.state.merge_queue.extend(_session_find_merges(self.state.sessions, self.gap))

    def open_for(self, timestamp: datetime) -> Iterable[int]:
        for window_id, meta in self.state.sessions.items():
            if meta.open_time <= timestamp <= meta.close_time:
                # Inside a session: no boundary moves, so nothing can merge.
                return (window_id,)
            before = meta.open_time - timestamp
            if ZERO_TD < before <= self.gap:
                meta.open_time = timestamp
                self._merge()
                return (window_id,)
            after = timestamp - meta.close_time
            if ZERO_TD < after <= self.gap:
                meta.close_time = timestamp
                self._merge()
                return (window_id,)
        # Further than the gap from every session: a new one (which cannot merge either).
        self.state.max_key += 1
        window_id = self.state.max_key
        self.state.sessions[window_id] = WindowMetadata(timestamp, timestamp)
        return (window_id,)

    def late_for(self, timestamp: datetime) -> Iterable[int]:
        return (LATE_SESSION_ID,)

    def merged(self) -> list[tuple[int, int]]:
        merges, self.state.merge_queue = self.state.merge_queue, []
        return merges

    def close_for(self, watermark: datetime) -> list[tuple[int, WindowMetadata]]:
        try:
            close_before = watermark - self.gap
        except OverflowError:
            close_before = UTC_MIN
        sessions = self.state.sessions
        closed = [(wid, meta) for wid, meta in sessions.items() if meta.close_time < close_before]
        for wid, _meta in closed:
            del sessions[wid]
        return closed

    def notify_at(self) -> datetime | None:
        last = min((meta.close_time for meta in self.state.sessions.values()), default=None)
        return None if last is None else last + self.gap + _TICK

    def is_empty(self) -> bool:
        # Unlike Bytewax 0.21 (which never drops a key's session state, its issue #577): once no
        # session is open the key's state can go. The key's next session is numbered 0 again.
        return not self.state.sessions and not self.state.merge_queue

    def snapshot(self) -> _SessionWindowerState:
        return copy.deepcopy(self.state)


@dataclass
class SessionWindower(Windower[_SessionWindowerState]):
    """Session windows: a session ends after ``gap`` without items (``gap`` >= 0); sessions
    that come within ``gap`` of each other merge into the one that opened first."""

    gap: timedelta

    def __post_init__(self) -> None:
        if self.gap < ZERO_TD:
            raise ValueError("session window `gap` must not be negative")

    def build(self, resume_state: _SessionWindowerState | None) -> _SessionWindowerLogic:
        state = resume_state if resume_state is not None else _SessionWindowerState()
        return _SessionWindowerLogic(self.gap, state)
