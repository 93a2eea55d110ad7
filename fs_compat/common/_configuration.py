"""``Configuration``: PyFlink's key/value configuration, in pure Python with Flink's conversions."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, overload

from fs_compat.java_gateway import _JvmStandIn

_Value = str | int | float | bool | bytes

_SENSITIVE = ("password", "secret", "token", "apikey", "api-key", "auth-params", "service-key", "jaas.config")


def _java_double(v: float) -> str:
    """Java's ``Double.toString``."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0 or 1e-3 <= abs(v) < 1e7:
        text = repr(float(v))
        return text if "." in text else text + ".0"
    sign, digits, exp = Decimal(repr(float(v))).normalize().as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    return ("-" if sign else "") + f"{text[0]}.{text[1:] or '0'}E{len(digits) + exp - 1}"


def _to_string(value: _Value) -> str:
    """A stored value as Flink's ``ConfigurationUtils.convertToString`` shows it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


class Configuration:
    """Lightweight configuration object which stores key/value pairs.

    Values keep the type they were set with; getters convert as Flink does (``"5"`` reads as
    the integer 5, ``True`` as the string ``"true"``) and return the default for missing keys.

    >>> config = Configuration().set_integer("parallelism.default", 4).set_boolean("a.b", True)
    >>> config.get_string("parallelism.default", ""), config.get_boolean("a.b", False)
    ('4', True)
    >>> config.get_integer("missing", 7), config.to_dict()
    (7, {'parallelism.default': '4', 'a.b': 'true'})
    """

    def __init__(self, other: Configuration | None = None, j_configuration: Any = None) -> None:
        self._data: dict[str, _Value]
        if isinstance(j_configuration, JavaConfiguration):
            # PyFlink's ``Configuration(j_configuration=get_j_env_configuration(...))``: a view
            # whose settings go to the environment, as they go to the JVM's object in PyFlink.
            self._data = j_configuration._store
            return
        if j_configuration is not None:
            raise NotImplementedError(
                "Configuration(j_configuration=...): fs_compat runs without a JVM; "
                "use Configuration.from_dict or the set_* methods"
            )
        self._data = dict(other._data) if other is not None else {}

    @classmethod
    def from_dict(cls, map: dict[str, str]) -> Configuration:
        """A configuration holding the string pairs of ``map``."""
        config = cls()
        for key, value in map.items():
            config.set_string(key, value)
        return config

    def _raw(self, key: str) -> _Value | None:
        return self._data.get(key)

    def _fail(self, key: str, value: _Value, kind: str) -> ValueError:
        return ValueError(f"Could not parse value '{_to_string(value)}' for key '{key}' as {kind}.")

    @overload
    def get_string(self, key: str, default_value: str) -> str: ...
    @overload
    def get_string(self, key: str, default_value: None) -> str | None: ...
    def get_string(self, key: str, default_value: str | None) -> str | None:
        """The value of ``key`` as a string, or ``default_value``."""
        value = self._raw(key)
        return default_value if value is None else _to_string(value)

    def set_string(self, key: str, value: str) -> Configuration:
        """Sets ``key`` to ``str(value)``; returns this configuration, for chaining."""
        self._data[_check_key(key)] = str(value)
        return self

    @staticmethod
    def parse_list_value(value: str) -> list[str]:
        """A list setting: ``a;b`` or ``[a, b]`` (quotes around items are dropped)."""
        if not value:
            return []
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            items = [item.strip() for item in text[1:-1].split(",")]
            return [item.strip("'\"") for item in items if item]
        return value.split(";")

    def get_integer(self, key: str, default_value: int) -> int:
        """The value of ``key`` as an integer, or ``default_value``; ``ValueError`` when the value
        is not an integer."""
        value = self._raw(key)
        if value is None:
            return default_value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise self._fail(key, value, "an integer")

    def set_integer(self, key: str, value: int) -> Configuration:
        """Sets ``key`` to the integer ``value`` (a ``TypeError`` for anything else, bools
        included); returns this configuration."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(
                f"set_integer expects an int for key '{key}', got {type(value).__name__}: {value!r}"
            )
        self._data[_check_key(key)] = value
        return self

    def get_boolean(self, key: str, default_value: bool) -> bool:
        """The value of ``key`` as a boolean (``true``/``false``, any case), or ``default_value``."""
        value = self._raw(key)
        if value is None:
            return default_value
        if isinstance(value, bool):
            return value
        text = _to_string(value).upper()
        if text == "TRUE":
            return True
        if text == "FALSE":
            return False
        raise self._fail(key, value, "a boolean")

    def set_boolean(self, key: str, value: bool) -> Configuration:
        """Sets ``key`` to the boolean ``value`` (a ``TypeError`` for anything else); returns
        this configuration."""
        if not isinstance(value, bool):
            raise TypeError(
                f"set_boolean expects a bool for key '{key}', got {type(value).__name__}: {value!r}"
            )
        self._data[_check_key(key)] = value
        return self

    def get_float(self, key: str, default_value: float) -> float:
        """The value of ``key`` as a float, or ``default_value`` (as a float)."""
        value = self._raw(key)
        if value is None:
            return float(default_value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise self._fail(key, value, "a float")

    def set_float(self, key: str, value: float) -> Configuration:
        """Sets ``key`` to ``value`` as a float (ints are converted; a ``TypeError`` for other
        types, bools included); returns this configuration.

        >>> Configuration().set_float("f", 1).get_string("f", "")
        '1.0'
        """
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"set_float expects a float for key '{key}', got {type(value).__name__}: {value!r}"
            )
        self._data[_check_key(key)] = float(value)
        return self

    def get_bytearray(self, key: str, default_value: bytearray) -> bytearray:
        """The bytes stored under ``key``, or ``default_value``."""
        value = self._raw(key)
        if value is None:
            return default_value
        if isinstance(value, bytes):
            return bytearray(value)
        raise ValueError(f"Configuration cannot convert object of type {type(value).__name__} to byte array.")

    def set_bytearray(self, key: str, value: bytearray | bytes) -> Configuration:
        """Sets ``key`` to a copy of the bytes ``value`` (a ``TypeError`` for anything else);
        returns this configuration."""
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(
                f"set_bytearray expects bytes for key '{key}', got {type(value).__name__}: {value!r}"
            )
        self._data[_check_key(key)] = bytes(value)
        return self

    def key_set(self) -> set[str]:
        """The keys, as a set.

        >>> sorted(Configuration.from_dict({"b": "1", "a": "2"}).key_set())
        ['a', 'b']
        """
        return set(self._data)

    def keys(self) -> list[str]:
        """The keys, in the order they were first set."""
        return list(self._data)

    def add_all_to_dict(self, target_dict: dict[str, Any]) -> None:
        """Adds every entry, with its stored value, to ``target_dict``."""
        target_dict.update(self._data)

    def add_all(self, other: Configuration, prefix: str | None = None) -> Configuration:
        """Adds the entries of ``other``, their keys prefixed with ``prefix`` if given."""
        for key, value in other._data.items():
            self._data[key if prefix is None else prefix + key] = value
        return self

    def contains_key(self, key: str) -> bool:
        """Whether ``key`` is set."""
        return key in self._data

    def to_dict(self) -> dict[str, str]:
        """Every entry, values as strings."""
        return {key: _to_string(value) for key, value in self._data.items()}

    def remove_config(self, key: str) -> bool:
        """Removes ``key``; whether it was there."""
        return self._data.pop(key, None) is not None

    def __deepcopy__(self, memodict: dict[int, Any] | None = None) -> Configuration:
        return Configuration(self)

    def __copy__(self) -> Configuration:
        return Configuration(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and self._data == other._data

    def __hash__(self) -> int:
        return hash(frozenset((k, v) for k, v in self._data.items()))

    def __str__(self) -> str:
        shown = {
            k: "******" if any(s in k.lower() for s in _SENSITIVE) else _to_string(v)
            for k, v in self._data.items()
        }
        return "{" + ", ".join(f"{k}={v}" for k, v in shown.items()) + "}"

    def __repr__(self) -> str:
        return f"Configuration({self})"


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"configuration keys must be str, got {type(key).__name__}: {key!r}")
    return key


class _WriteThrough(dict[str, _Value]):
    """A settings dict that reports every write (``Configuration`` stores into it directly)."""

    def __init__(self, on_set: Callable[[str, str], None]) -> None:
        super().__init__()
        self._on_set = on_set

    def __setitem__(self, key: str, value: _Value) -> None:
        super().__setitem__(key, value)
        self._on_set(key, _to_string(value))

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy shipped with a job (to Spark's workers) is a plain dict: there is no environment
        # to write to there.
        return dict, (dict(self),)


class JavaConfiguration(_JvmStandIn):
    """What PyFlink's ``get_j_env_configuration(env._j_stream_execution_environment)`` returns, without
    a JVM: the environment's configuration with the Java method names PyFlink code calls on it
    (``setString``, ``setInteger`` ...), and accepted by ``Configuration(j_configuration=...)``.
    Every setting reaches the environment as ``env.configure`` would pass it; settings that only
    tune Flink's JVM or its Python worker (``pekko.ask.timeout``, ``python.execution-mode``,
    ``python.fn-execution.bundle.size``) are kept and have no effect.

    >>> seen = {}
    >>> conf = JavaConfiguration(lambda k, v: seen.update({k: v}))
    >>> conf.setInteger("parallelism.default", 3)
    >>> Configuration(j_configuration=conf).set_string("a.b", "x").get_integer("parallelism.default", 1)
    3
    >>> seen, conf.getString("a.b", None), conf.containsKey("c")
    ({'parallelism.default': '3', 'a.b': 'x'}, 'x', False)
    """

    def __init__(self, on_set: Callable[[str, str], None]) -> None:
        self._store = _WriteThrough(on_set)
        self._view = Configuration(j_configuration=self)

    def setString(self, key: str, value: str) -> None:  # noqa: N802 (Java's name)
        self._view.set_string(key, value)

    def setInteger(self, key: str, value: int) -> None:  # noqa: N802
        self._view.set_integer(key, value)

    def setLong(self, key: str, value: int) -> None:  # noqa: N802
        self._view.set_integer(key, value)

    def setBoolean(self, key: str, value: bool) -> None:  # noqa: N802
        self._view.set_boolean(key, value)

    def setFloat(self, key: str, value: float) -> None:  # noqa: N802
        self._view.set_float(key, value)

    def setDouble(self, key: str, value: float) -> None:  # noqa: N802
        self._view.set_float(key, value)

    def getString(self, key: str, default_value: str | None) -> str | None:  # noqa: N802
        return self._view.get_string(key, default_value)

    def getInteger(self, key: str, default_value: int) -> int:  # noqa: N802
        return self._view.get_integer(key, default_value)

    def getLong(self, key: str, default_value: int) -> int:  # noqa: N802
        return self._view.get_integer(key, default_value)

    def getBoolean(self, key: str, default_value: bool) -> bool:  # noqa: N802
        return self._view.get_boolean(key, default_value)

    def getFloat(self, key: str, default_value: float) -> float:  # noqa: N802
        return self._view.get_float(key, default_value)

    def getDouble(self, key: str, default_value: float) -> float:  # noqa: N802
        return self._view.get_float(key, default_value)

    def containsKey(self, key: str) -> bool:  # noqa: N802
        return self._view.contains_key(key)

    def removeConfig(self, key: str) -> bool:  # noqa: N802
        return self._view.remove_config(key)

    def keySet(self) -> set[str]:  # noqa: N802
        return self._view.key_set()

    def toMap(self) -> dict[str, str]:  # noqa: N802
        return self._view.to_dict()

    def _missing(self, name: str) -> str:
        return (
            f"Configuration.{name} (the JVM's configuration object): fs_compat runs without a JVM; "
            "use setString/setInteger/setLong/setBoolean/setFloat/setDouble, their getters, or "
            "fs_compat.common.Configuration"
        )
