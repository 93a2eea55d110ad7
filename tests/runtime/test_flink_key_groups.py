"""Keys land on the parallel instance PyFlink 2.3 puts them on.

The expected subtasks were observed on PyFlink 2.3.0 (2026-12-02, this machine kind, Java 17):
``from_collection`` -> ``key_by`` -> a ``KeyedProcessFunction`` emitting
``get_index_of_this_subtask()``, at parallelism 2 and 4. Each entry is ``key: (subtask at 2,
subtask at 4)``.
"""

from __future__ import annotations

from typing import Any

import pytest

from fs_compat.common import Types
from fs_compat.common.typeinfo import TypeInformation
from fs_compat.runtime import KeyEncoder, subtask_of

UNTYPED_STR = {
    "key1": (1, 3), "key2": (1, 3), "key5": (1, 2), "key6": (1, 3), "key7": (1, 2), "key8": (1, 2),
    "key9": (1, 3), "hello world": (1, 3), "é": (1, 3), "Alice": (0, 1), "Bob": (0, 0), "a": (0, 1),
    "b": (0, 0), "key0": (0, 1), "key3": (0, 0), "key4": (0, 1), "Charlie": (0, 0), "x": (0, 1),
    "日本": (0, 1),
}  # fmt: skip
UNTYPED_INT = {
    0: (0, 0), 1: (0, 1), 2: (0, 0), 4: (0, 0), 5: (0, 0), 7: (0, 0), 8: (0, 0), 9: (0, 0), 14: (0, 0),
    17: (0, 1), 18: (0, 0), 19: (0, 0), 2**40: (0, 0), -(2**31): (0, 0), 3: (1, 2), 6: (1, 2),
    10: (1, 2), 11: (1, 3), 12: (1, 2), 13: (1, 3), 15: (1, 2), 16: (1, 3), -5: (1, 3),
    2**31 - 1: (1, 2),
}  # fmt: skip
UNTYPED_TUPLE = {
    ("a", 1): (0, 0), ("a", 2): (0, 0), ("b", 1): (0, 1), (0, 0): (0, 0), ("key", "val"): (0, 1),
    ("Bob", 25): (0, 0), (1, "a", 2.5): (0, 1), ((1, 2), 3): (0, 0), ("q", -1): (0, 0), ("b", 2): (1, 3),
    ("c", 3): (1, 2), ("x", 0): (1, 2), (1, 2): (1, 2), ("a",): (1, 3), ("Alice", 30): (1, 3),
    ("z", 99): (1, 3),
}  # fmt: skip
STRING = {
    "Alice": (0, 0), "key1": (0, 1), "key2": (0, 0), "key3": (0, 0), "key7": (0, 0), "key8": (0, 1),
    "key9": (0, 1), "Charlie": (0, 1), "x": (0, 1), "hello world": (0, 1), "Bob": (1, 2), "a": (1, 2),
    "b": (1, 2), "key0": (1, 2), "key4": (1, 2), "key5": (1, 2), "key6": (1, 2), "é": (1, 3),
    "日本": (1, 2),
}  # fmt: skip
INT = {
    0: (0, 1), 1: (0, 1), 4: (0, 0), 5: (0, 0), 7: (0, 0), 10: (0, 1), 11: (0, 1), 12: (0, 1),
    13: (0, 1), 14: (0, 1), 15: (0, 1), 16: (0, 1), 19: (0, 0), 2**31 - 1: (0, 1), 2: (1, 3),
    3: (1, 3), 6: (1, 3), 8: (1, 2), 9: (1, 3), 17: (1, 3), 18: (1, 3), -5: (1, 3), -(2**31): (1, 3),
    123456789: (1, 2),
}  # fmt: skip
LONG = {
    0: (0, 1), 1: (0, 1), 4: (0, 0), 5: (0, 0), 7: (0, 0), 10: (0, 1), 11: (0, 1), 12: (0, 1),
    13: (0, 1), 14: (0, 1), 15: (0, 1), 16: (0, 1), 19: (0, 0), -5: (0, 0), 2**31 - 1: (0, 1),
    -(2**31): (0, 1), 2: (1, 3), 3: (1, 3), 6: (1, 3), 8: (1, 2), 9: (1, 3), 17: (1, 3), 18: (1, 3),
    2**40: (1, 2),
}  # fmt: skip

CASES: list[tuple[str, TypeInformation[Any] | None, dict[Any, tuple[int, int]]]] = [
    ("str keys, no key type", None, UNTYPED_STR),
    ("int keys, no key type", None, UNTYPED_INT),
    ("tuple keys, no key type", None, UNTYPED_TUPLE),
    ("Types.STRING()", Types.STRING(), STRING),
    ("Types.INT()", Types.INT(), INT),
    ("Types.LONG()", Types.LONG(), LONG),
]


@pytest.mark.parametrize(("case", "key_type", "observed"), CASES, ids=[c[0] for c in CASES])
def test_each_key_is_on_the_subtask_pyflink_puts_it_on(
    case: str, key_type: TypeInformation[Any] | None, observed: dict[Any, tuple[int, int]]
) -> None:
    encoder = KeyEncoder(key_type.codec() if key_type is not None else None)
    got = {key: tuple(subtask_of(encoder.locate(key)[1], p) for p in (2, 4)) for key in observed}
    assert got == observed


@pytest.mark.parametrize(("case", "key_type", "observed"), CASES, ids=[c[0] for c in CASES])
def test_a_key_group_from_the_bytes_alone_is_the_located_one(
    case: str, key_type: TypeInformation[Any] | None, observed: dict[Any, tuple[int, int]]
) -> None:
    """A state's flush finds a key's group from its bytes: a fresh encoder (no memo) agrees."""
    codec = key_type.codec() if key_type is not None else None
    for key in observed:
        kb, kg = KeyEncoder(codec).locate(key)
        assert KeyEncoder(codec).key_group(kb) == kg, key
