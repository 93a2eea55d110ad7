"""``Time``, ``Duration`` and ``Instant``: PyFlink's time values, in pure Python (no JVM)."""

from __future__ import annotations

_NANOS_PER_SECOND = 1_000_000_000
_NANOS_PER_MILLI = 1_000_000


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    return value


class Time:
    """A time interval in milliseconds (PyFlink's ``Time``, used by ``StateTtlConfig`` and windows).

    >>> str(Time.minutes(2))
    '120000 ms'
    >>> Time.seconds(1) == Time.milliseconds(1000)
    True
    """

    __slots__ = ("_milliseconds",)

    def __init__(self, milliseconds: int) -> None:
        self._milliseconds = _check_int("milliseconds", milliseconds)

    def to_milliseconds(self) -> int:
        """The interval in milliseconds."""
        return self._milliseconds

    @staticmethod
    def milliseconds(milliseconds: int) -> Time:
        """An interval of ``milliseconds`` milliseconds; like the other factories, a ``TypeError``
        for anything but an ``int``."""
        return Time(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> Time:
        """An interval of ``seconds`` seconds.

        >>> Time.seconds(2).to_milliseconds()
        2000
        """
        return Time.milliseconds(_check_int("seconds", seconds) * 1000)

    @staticmethod
    def minutes(minutes: int) -> Time:
        """An interval of ``minutes`` minutes."""
        return Time.seconds(_check_int("minutes", minutes) * 60)

    @staticmethod
    def hours(hours: int) -> Time:
        """An interval of ``hours`` hours."""
        return Time.minutes(_check_int("hours", hours) * 60)

    @staticmethod
    def days(days: int) -> Time:
        """An interval of ``days`` days of 24 hours."""
        return Time.hours(_check_int("days", days) * 24)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Time) or self.__class__ is not other.__class__:
            return False
        return self._milliseconds == other._milliseconds

    def __hash__(self) -> int:
        return hash((Time, self._milliseconds))

    def __str__(self) -> str:
        return f"{self._milliseconds} ms"

    def __repr__(self) -> str:
        return f"Time.milliseconds({self._milliseconds})"


class Duration:
    """A time-based amount of time (Java's ``java.time.Duration``), kept as whole nanoseconds.

    >>> Duration.of_seconds(90).to_milliseconds()
    90000
    >>> str(Duration.of_seconds(90)), str(Duration.of_millis(-500))
    ('PT1M30S', 'PT-0.5S')
    >>> Duration.of_minutes(1) == Duration.of_seconds(60)
    True
    """

    __slots__ = ("_nanos",)

    def __init__(self, nanos: int) -> None:
        self._nanos = _check_int("nanos", nanos)

    @staticmethod
    def of_days(days: int) -> Duration:
        """A duration of ``days`` days of 24 hours; like the other factories, a ``TypeError`` for
        anything but an ``int``."""
        return Duration(_check_int("days", days) * 86_400 * _NANOS_PER_SECOND)

    @staticmethod
    def of_hours(hours: int) -> Duration:
        """A duration of ``hours`` hours."""
        return Duration(_check_int("hours", hours) * 3_600 * _NANOS_PER_SECOND)

    @staticmethod
    def of_minutes(minutes: int) -> Duration:
        """A duration of ``minutes`` minutes."""
        return Duration(_check_int("minutes", minutes) * 60 * _NANOS_PER_SECOND)

    @staticmethod
    def of_seconds(seconds: int) -> Duration:
        """A duration of ``seconds`` seconds.

        >>> Duration.of_seconds(2).to_milliseconds()
        2000
        """
        return Duration(_check_int("seconds", seconds) * _NANOS_PER_SECOND)

    @staticmethod
    def of_millis(millis: int) -> Duration:
        """A duration of ``millis`` milliseconds."""
        return Duration(_check_int("millis", millis) * _NANOS_PER_MILLI)

    @staticmethod
    def of_nanos(nanos: int) -> Duration:
        """A duration of ``nanos`` nanoseconds."""
        return Duration(nanos)

    def to_milliseconds(self) -> int:
        """Whole milliseconds, rounded down (Java's ``toMillis``)."""
        return self._nanos // _NANOS_PER_MILLI

    def to_nanos(self) -> int:
        """The whole duration in nanoseconds (Java's ``toNanos``).

        >>> Duration.of_millis(3).to_nanos()
        3000000
        """
        return self._nanos

    def get_seconds(self) -> int:
        """Whole seconds, rounded down (Java's ``getSeconds``)."""
        return self._nanos // _NANOS_PER_SECOND

    def get_nano(self) -> int:
        """Nanoseconds within the second, 0 to 999,999,999 (Java's ``getNano``)."""
        return self._nanos % _NANOS_PER_SECOND

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and self._nanos == other._nanos

    def __hash__(self) -> int:
        return hash((Duration, self._nanos))

    def __str__(self) -> str:
        """ISO-8601, as Java's ``Duration.toString``."""
        if self._nanos == 0:
            return "PT0S"
        seconds, nanos = self.get_seconds(), self.get_nano()
        total = seconds + 1 if seconds < 0 < nanos else seconds
        hours = int(total / 3600)
        minutes = int((total - hours * 3600) / 60)
        secs = total - hours * 3600 - minutes * 60
        out = "PT"
        if hours:
            out += f"{hours}H"
        if minutes:
            out += f"{minutes}M"
        if secs == 0 and nanos == 0 and len(out) > 2:
            return out
        out += "-0" if seconds < 0 < nanos and secs == 0 else str(secs)
        if nanos:
            fraction = _NANOS_PER_SECOND - nanos if seconds < 0 else nanos
            out += "." + f"{fraction:09d}".rstrip("0")
        return out + "S"

    def __repr__(self) -> str:
        if self._nanos % _NANOS_PER_MILLI == 0:
            return f"Duration.of_millis({self._nanos // _NANOS_PER_MILLI})"
        return f"Duration.of_nanos({self._nanos})"


class Instant:
    """An instantaneous point on the time line: seconds since the epoch and nanoseconds
    within the second (0 to 999,999,999), like ``java.time.Instant``.

    >>> Instant.of_epoch_milli(-1)
    Instant<-1, 999000000>
    >>> Instant.of_epoch_milli(-1).to_epoch_milli()
    -1
    """

    __slots__ = ("nanos", "seconds")

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds = _check_int("seconds", seconds)
        self.nanos = _check_int("nanos", nanos)

    def to_epoch_milli(self) -> int:
        """Milliseconds since the epoch (1970-01-01T00:00:00Z), rounded down (Java's ``toEpochMilli``)."""
        return self.seconds * 1000 + self.nanos // _NANOS_PER_MILLI

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        """The instant ``epoch_milli`` milliseconds after the epoch (before it when negative)."""
        secs, millis = divmod(_check_int("epoch_milli", epoch_milli), 1000)
        return Instant(secs, millis * _NANOS_PER_MILLI)

    def _key(self) -> tuple[int, int]:
        extra, nanos = divmod(self.nanos, _NANOS_PER_SECOND)
        return self.seconds + extra, nanos

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instant) or self.__class__ is not other.__class__:
            return False
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((Instant, self._key()))

    def __lt__(self, other: Instant) -> bool:
        if not isinstance(other, Instant):
            return NotImplemented
        return self._key() < other._key()

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"
