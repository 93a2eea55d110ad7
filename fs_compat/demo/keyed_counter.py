"""The seed's first demo: FunctionStream's KeyedCounterProcessor over a small bundled input
(``events.txt``), run in-process. ``python -m fs_compat.demo.keyed_counter`` runs it."""

from __future__ import annotations

from importlib import resources

from fs_api import Context, FSProcessorDriver
from fs_api_advanced import KeyedValueState, KeyedValueStateFactory
from fs_api_advanced.testing import LocalContext


class KeyedCounterProcessor(FSProcessorDriver):
    """The seed's keyed counter: counts records per 8-byte key and emits each new count."""

    def init(self, ctx: Context, config: dict[str, str]) -> None:
        self._factory = KeyedValueStateFactory.from_context_auto_codec(ctx, "counters", b"by_key", int)

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        primary_key = data[:8]
        state = KeyedValueState(self._factory, primary_key, b"count")
        cur, found = state.value()
        if not found or cur is None:
            cur = 0
        state.update(cur + 1)
        ctx.emit(str(cur + 1).encode(), 0)


def bundled_events() -> list[bytes]:
    """The demo's input: one event per line, the first 8 bytes are the key."""
    text = resources.files("fs_compat.demo").joinpath("events.txt").read_text(encoding="utf-8")
    return [line.encode() for line in text.splitlines() if line.strip()]


def run(events: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Run KeyedCounterProcessor over ``events``; returns ``(key, emitted count)`` pairs."""
    ctx = LocalContext()
    proc = KeyedCounterProcessor()
    proc.init(ctx, ctx.getConfig())
    for event in events:
        proc.process(ctx, 0, event)
    proc.close(ctx)
    return [(event[:8], data) for event, (data, _channel) in zip(events, ctx.emitted, strict=True)]


def main() -> None:
    events = bundled_events()
    for key, count in run(events):
        print(f"{key.decode()}  count={count.decode()}")
    print(f"{len(events)} events processed, {len({e[:8] for e in events})} keys")


if __name__ == "__main__":
    main()
