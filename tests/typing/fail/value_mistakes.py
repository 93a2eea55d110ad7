"""Mistakes with keyed value state."""

from __future__ import annotations

from fs_api import MemoryKvStore
from fs_api.testing import LocalContext
from fs_api_advanced import IntCodec, KeyedValueStateFactory, StringCodec

ctx = LocalContext()
factory = KeyedValueStateFactory.from_context_auto_codec(ctx, "counters", b"", int)
state = factory.new_keyed_value(b"user-1", b"count")

# A KeyedValueState[int] holds ints.
state.update("x")  # E: Argument 1 to "update" of "KeyedValueState" has incompatible type "str"; expected "int"  [arg-type]
# value() returns (value, found): it must be unpacked.
count: int = state.value()  # E: Incompatible types in assignment (expression has type "tuple[int | None, bool]", variable has type "int")  [assignment]
cur, found = state.value()
# The unpacked value is int | None: None when nothing is stored.
next_count = cur + 1  # E: Unsupported operand types for + ("None" and "int")  [operator]
# The factory's type argument flows to the value.
label: str | None = state.value()[0]  # E: Incompatible types in assignment (expression has type "int | None", variable has type "str | None")  [assignment]
# Writing back the unchecked value.
state.update(cur)  # E: Argument 1 to "update" of "KeyedValueState" has incompatible type "int | None"; expected "int"  [arg-type]

# The codec must match the factory's value type.
wrong_codec: KeyedValueStateFactory[int] = KeyedValueStateFactory(MemoryKvStore(), b"", StringCodec())  # E: Argument 3 to "KeyedValueStateFactory" has incompatible type "StringCodec"; expected "Codec[int]"  [arg-type]
# The constructor takes a store; from_context takes a Context.
from_ctx = KeyedValueStateFactory(ctx, b"", IntCodec())  # E: Argument 1 to "KeyedValueStateFactory" has incompatible type "LocalContext"; expected "KvStore"  [arg-type]
# Primary keys are bytes.
by_str_key = factory.new_keyed_value("user-1", b"count")  # E: Argument 1 to "new_keyed_value" of "KeyedValueStateFactory" has incompatible type "str"; expected "bytes"  [arg-type]
