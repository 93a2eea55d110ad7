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


def test_encoders_of_a_codec_without_settings_share_one_memo_per_process() -> None:
    """A Spark worker runs many tasks, each with encoders of its own: a key one of them located is
    a lookup for the next (same bytes object), for the default and the plain value codecs; a codec
    with settings (a ranged int, another max parallelism) keeps a memo of its own."""
    import pickle

    from fs_api_advanced import IntCodec, PickleCodec, StringCodec
    from fs_compat.common import Types

    for make in (KeyEncoder, lambda: KeyEncoder(PickleCodec()), lambda: KeyEncoder(StringCodec())):
        first, second = make(), pickle.loads(pickle.dumps(make()))
        assert second.locate("shared-key")[0] is first.locate("shared-key")[0]
    ranged = Types.INT().codec()
    assert type(ranged) is not IntCodec  # a RangedIntCodec: 32 bits
    a, b = KeyEncoder(ranged), KeyEncoder(ranged)
    assert a.locate(7)[0] is not b.locate(7)[0]
    assert a.locate(7) == b.locate(7)
    other = KeyEncoder(max_parallelism=64)
    assert other.locate("shared-key")[0] is not KeyEncoder().locate("shared-key")[0]
