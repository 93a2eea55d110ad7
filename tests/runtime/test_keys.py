"""``KeyEncoder.locate``: equal keys of the types it remembers share one entry; keys that are
equal in Python but encode apart (``1``, ``1.0``, ``True``) stay apart."""

from __future__ import annotations

import pytest

from fs_compat.runtime import KeyEncoder


@pytest.mark.parametrize("key", [7, "k", (7, "k"), ("a", "b", -1)])
def test_a_key_seen_before_gives_the_same_bytes_object(key: object) -> None:
    encoder = KeyEncoder()
    first = encoder.locate(key)
    again = encoder.locate(key)
    assert again == first
    assert again[0] is first[0]
    assert first == (encoder.encode(key), encoder.key_group(encoder.encode(key)))


def test_equal_tuple_keys_of_other_part_types_are_not_taken_from_the_memo() -> None:
    encoder = KeyEncoder()
    plain = encoder.locate((1, "a"))
    for twin in [(True, "a"), (1.0, "a")]:
        assert twin == (1, "a")
        located = encoder.locate(twin)
        assert located[0] == encoder.encode(twin)
        assert located[0] != plain[0]
    assert encoder.locate((1, "a")) == plain
