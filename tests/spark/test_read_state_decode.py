"""``read_state``'s decoding, without Spark: a key group's stored entries (from its state row's
blob, and from bucket blobs where the step keeps them) read back through the step's declared
states, of every kind, TTL framing included; values as JSON for Spark variants."""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterable
from typing import Any

from fs_api_advanced import IntCodec, PickleCodec, StringCodec, TtlConfig
from fs_compat.common import Row
from fs_compat.runtime import (
    Edge,
    KeyedStateBackend,
    KeyEncoder,
    LocalConfig,
    Operator,
    OperatorNode,
    OperatorRuntime,
    SourceNode,
    StateKind,
    StateSpec,
)
from fs_compat.spark._read_state import _group_entries, _json, _Step

LIST = StateSpec("seen", StateKind.LIST, IntCodec(), ttl=TtlConfig(ttl_ms=10))
MAP = StateSpec("counts", StateKind.MAP, IntCodec(), key_codec=StringCodec())
SUM = StateSpec("sum", StateKind.REDUCING, IntCodec(), reduce_function=lambda a, b: a + b)


class _Longest:
    """An AggregateFunction-shaped object: the longest string added, in capitals."""

    def create_accumulator(self) -> str:
        return ""

    def add(self, value: str, acc: str) -> str:
        return value if len(value) > len(acc) else acc

    def get_result(self, acc: str) -> str:
        return acc.upper()

    def merge(self, a: str, b: str) -> str:
        return self.add(a, b)


LONGEST = StateSpec("longest", StateKind.AGGREGATING, PickleCodec(), aggregate_function=_Longest())


class _Op(Operator):
    """Declares every state above in ``open`` (the longest per namespace ``b"w1"``), but not ``late``."""

    def open(self, runtime: OperatorRuntime) -> None:
        for spec in (LIST, MAP, SUM):
            runtime.get_state(spec)
        assert runtime.backend is not None
        runtime.backend.get_state(LONGEST, namespaced=True)

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        return ()

    def decode_namespace(self, namespace: bytes) -> Any:
        return namespace.decode().upper()


def _snapshot() -> tuple[int, bytes]:
    """The key group of key ``"k"`` and its backend snapshot, with a value in every state."""
    backend = KeyedStateBackend(KeyEncoder(StringCodec()), clock=lambda: 5)
    backend.set_current_key("k")
    backend.get_state(LIST).add_all([1, 2])
    counts = backend.get_state(MAP)
    counts.put("x", 3)
    counts.put("y", 4)
    backend.get_state(SUM).add(5)
    backend.get_state(SUM).add(6)
    backend.current_namespace = b"w1"
    longest = backend.get_state(LONGEST, namespaced=True)
    longest.add("abc")
    longest.add("ab")
    backend.current_namespace = b""
    backend.get_state(StateSpec("late", StateKind.VALUE, StringCodec())).update("L")
    return backend.current_key_group, backend.snapshot_key_group(backend.current_key_group)


def _step() -> _Step:
    source = SourceNode("src")
    node = OperatorNode(
        "op",
        [Edge(source, key_selector=lambda v: v, key_codec=StringCodec())],
        operator_factory=_Op,
        keyed=True,
    )
    return _Step(node, LocalConfig())


EXPECTED = [
    ("counts", "k", None, "x", 3),
    ("counts", "k", None, "y", 4),
    ("late", "k", None, None, StringCodec().encode("L")),
    ("longest", "k", "W1", None, "ABC"),
    ("seen", "k", None, None, [1, 2]),  # TTL state: shown as stored, whatever the time
    ("sum", "k", None, None, 11),
]


def test_entries_of_a_state_row_blob_decode_with_the_steps_declared_states() -> None:
    kg, snapshot = _snapshot()
    header = pickle.dumps((snapshot, [], []))
    assert sorted(_step().rows(kg, _group_entries(header))) == EXPECTED


def test_entries_in_bucket_blobs_decode_alike() -> None:
    kg, snapshot = _snapshot()
    _version, signatures, stores = pickle.loads(snapshot)
    # The header describes the buckets (``_Parts.header``) and holds no entry; each bucket holds
    # its keys' entries: here "k"'s in one bucket, and an empty one.
    header = pickle.dumps((("buckets", 1, 1, signatures), [], []))
    buckets = [pickle.dumps(stores), pickle.dumps({})]
    assert sorted(_step().rows(kg, _group_entries(header, buckets))) == EXPECTED
    assert list(_group_entries(header)) == []


def test_values_become_json_for_variants() -> None:
    class Window:
        def __init__(self) -> None:
            self.start, self.end, self._hidden = 0, 10, 1

    assert _json(Row(a=1, b=(2, b"\x00"))) == {"a": 1, "b": [2, "AA=="]}
    assert _json(Row(1, "x")) == [1, "x"]
    assert _json({1: math.nan, "big": 2**70}) == {"1": "nan", "big": str(2**70)}
    assert _json(Window()) == {"start": 0, "end": 10}
