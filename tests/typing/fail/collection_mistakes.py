"""Mistakes with keyed list, map and priority-queue state."""

from __future__ import annotations

from fs_api.testing import LocalContext
from fs_api_advanced import KeyedListStateFactory, KeyedMapStateFactory, KeyedPriorityQueueStateFactory

ctx = LocalContext()
pages = KeyedListStateFactory.from_context_auto_codec(ctx, "pages", b"", str).new_keyed_list(b"u", b"seen")
counts = KeyedMapStateFactory.from_context_auto_codec(ctx, "counts", b"", str, int).new_keyed_map(b"u", "c")
queue = KeyedPriorityQueueStateFactory.from_context_auto_codec(ctx, "timers", b"").new_keyed_priority_queue(
    b"u", b"t"
)

# A KeyedListState[str] holds str.
pages.add(1)  # E: Argument 1 to "add" of "KeyedListState" has incompatible type "int"; expected "str"  [arg-type]
# bytes iterate as ints.
pages.add_all("abc".encode())  # E: Argument 1 to "add_all" of "KeyedListState" has incompatible type "bytes"; expected "Iterable[str]"  [arg-type]
# get() returns the whole list.
first: str = pages.get()  # E: Incompatible types in assignment (expression has type "list[str]", variable has type "str")  [assignment]
# KeyedMapState[str, int]: wrong map key type, then wrong value type.
counts.put(1, 2)  # E: Argument 1 to "put" of "KeyedMapState" has incompatible type "int"; expected "str"  [arg-type]
counts.put("home", "2")  # E: Argument 2 to "put" of "KeyedMapState" has incompatible type "str"; expected "int"  [arg-type]
# get() gives int | None: None when the key is missing.
clicks: int = counts.get("home")[0]  # E: Incompatible types in assignment (expression has type "int | None", variable has type "int")  [assignment]
# all() yields (str, int) pairs.
for key, value in counts.all():
    total: str = value  # E: Incompatible types in assignment (expression has type "int", variable has type "str")  [assignment]
# The default priority queue holds ints.
queue.add("soon")  # E: Argument 1 to "add" of "KeyedPriorityQueueState" has incompatible type "str"; expected "int"  [arg-type]
