"""An FSProcessorDriver as a runtime Operator: the one adapter runs it in-process and on Spark."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import cloudpickle

from fs_api import Context, FSProcessorDriver, KvStore
from fs_api_advanced import StateContextMixin
from fs_compat.runtime import KeyedStateBackend, Operator, OperatorRuntime

from ._store import KeyedStoreView

#: The key of every record when the input has no key column: all state lives under it.
NO_KEY = b""

_INT32 = (-(2**31), 2**31 - 1)

ProcessorFactory = Callable[[], FSProcessorDriver]


def processor_factory(processor: Any) -> ProcessorFactory:
    """A factory of fresh drivers from what a user passes: an ``FSProcessorDriver`` subclass, a
    callable returning a driver, or a driver instance (copied per task, as FunctionStream creates
    one per task). Anything else is a TypeError."""
    if isinstance(processor, FSProcessorDriver):
        try:
            template = cloudpickle.dumps(processor)
        except Exception as exc:
            raise TypeError(f"the processor {processor!r} cannot be pickled: {exc}") from exc
        return _Copies(template)
    if callable(processor):
        return _Checked(processor)
    raise TypeError(
        "expected an FSProcessorDriver, its class or a function returning one, "
        f"got {type(processor).__name__}: {processor!r}"
    )


class _Copies:
    """Makes a copy of a pickled driver per call."""

    def __init__(self, template: bytes) -> None:
        self.template = template

    def __call__(self) -> FSProcessorDriver:
        driver: FSProcessorDriver = cloudpickle.loads(self.template)
        return driver


class _Checked:
    """Calls a factory and checks that it made a driver."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __call__(self) -> FSProcessorDriver:
        driver = self.make()
        if not isinstance(driver, FSProcessorDriver):
            raise TypeError(
                f"the processor factory {self.make!r} returned {driver!r}, not an FSProcessorDriver"
            )
        return driver


class ProcessorContext(Context, StateContextMixin):
    """The Context a processor sees inside the runtime: ``emit`` collects output rows, stores
    are views over the operator's keyed state backend (``KeyedStoreView``), ``getConfig`` is the
    run's configuration. With ``watermarks`` set, ``emit_watermark`` becomes an output row too
    (``data`` None, ``watermark`` set); without, it raises NotImplementedError."""

    def __init__(
        self, backend: KeyedStateBackend, config: Mapping[str, str], watermarks: bool = False
    ) -> None:
        self._backend = backend
        self._config = dict(config)
        self._stores: dict[str, KeyedStoreView] = {}
        self._watermarks = watermarks
        #: Output rows since the last ``take``: ``(data, channel)``, or with ``watermarks``
        #: ``(data, channel, watermark)``.
        self.out: list[tuple[Any, ...]] = []
        self._outside = ""

    def emit(self, data: bytes, channel: int = 0) -> None:
        if type(data) is not bytes:
            if not isinstance(data, (bytearray, memoryview)):
                raise TypeError(f"ctx.emit: data must be bytes, got {type(data).__name__}: {data!r}")
            data = bytes(data)
        _check_channel("ctx.emit", channel)
        self.out.append((data, channel, None) if self._watermarks else (data, channel))

    def emit_watermark(self, watermark: int, channel: int = 0) -> None:
        if not self._watermarks:
            raise NotImplementedError(
                "ctx.emit_watermark is not supported by default when a processor runs through "
                "fs_compat.functionstream: pass watermarks=True to run_processor to get emitted "
                "watermarks as output rows (a 'watermark' column; 'data' is null on those rows); "
                "Spark computes the watermark of a query that reads the output from an event-time "
                "column (df.withWatermark)"
            )
        if isinstance(watermark, bool) or not isinstance(watermark, int):
            raise TypeError(f"ctx.emit_watermark: watermark must be an int, got {watermark!r}")
        _check_channel("ctx.emit_watermark", channel)
        self.out.append((None, channel, watermark))

    def getOrCreateKVStore(self, name: str) -> KvStore:  # noqa: N802 - FunctionStream name
        store = self._stores.get(name)
        if store is None:
            if not isinstance(name, str) or not name:
                raise ValueError(f"store name must be a non-empty str, got {name!r}")
            store = self._stores[name] = KeyedStoreView(self._backend, name, self._outside)
        return store

    def getConfig(self) -> dict[str, str]:  # noqa: N802 - FunctionStream name
        return dict(self._config)

    def take(self) -> list[tuple[Any, ...]]:
        """The output rows emitted since the last call."""
        out = self.out
        if out:
            self.out = []
        return out

    def set_outside(self, where: str) -> None:
        """Say in store errors where the processor is when there is no current key."""
        self._outside = where
        for store in self._stores.values():
            store.outside = where


def _check_channel(what: str, channel: Any) -> None:
    if isinstance(channel, bool) or not isinstance(channel, int) or not _INT32[0] <= channel <= _INT32[1]:
        raise TypeError(f"{what}: channel must be an int in the 32-bit range, got {channel!r}")


_OUTSIDE = (
    " (in {hook}: with a key column the processor's stores are per key, and only process() runs "
    "for a key; run without a key column, key_column=None, to use the stores in {hook})"
)


class ProcessorOperator(Operator):
    """Runs one FSProcessorDriver (made by ``factory``) as a keyed Operator.

    Its input values are rows with the fields ``data`` (bytes, at ``data_index``) and optionally
    ``source_id`` (an int, at ``source_index``; 0 when absent or null). The step is keyed by the key
    column, or, with ``keyed_by_column`` False, by the single key ``NO_KEY``.

    - ``open`` -> ``driver.init(ctx, config)``; ``process`` -> ``driver.process(ctx, source_id,
      data)``; ``on_watermark`` -> ``driver.process_watermark(ctx, 0, watermark)``;
      ``on_checkpoint`` -> ``driver.take_checkpoint(ctx, checkpoint_id)``; ``end_input`` ->
      ``driver.close(ctx)`` (bounded input only).
    - Each hook returns the rows ``ctx.emit`` collected (see ``ProcessorContext``).
    - Outside ``process`` there is no record key: with ``keyed_by_column``, store access there is
      a StateAccessError; without, the stores are those of ``NO_KEY``, as in ``process``.
    """

    def __init__(
        self,
        factory: ProcessorFactory,
        config: Mapping[str, str] | None = None,
        *,
        data_index: int = 0,
        source_index: int | None = None,
        keyed_by_column: bool = False,
        watermarks: bool = False,
    ) -> None:
        self.factory = factory
        self.config = dict(config or {})
        self.data_index = data_index
        self.source_index = source_index
        self.keyed_by_column = keyed_by_column
        self.watermarks = watermarks
        self.driver: FSProcessorDriver | None = None
        self.ctx: ProcessorContext | None = None

    def _outside(self, runtime: OperatorRuntime, hook: str) -> ProcessorContext:
        """Set the key for a hook that runs outside a record (see the class docstring)."""
        ctx, backend = self.ctx, runtime.backend
        assert ctx is not None and backend is not None, "a ProcessorOperator runs on a keyed step"
        if self.keyed_by_column:
            backend.current_key = backend.current_key_bytes = None
            ctx.set_outside(_OUTSIDE.format(hook=hook))
        else:
            backend.set_current_key(NO_KEY)
        return ctx

    def open(self, runtime: OperatorRuntime) -> None:
        backend = runtime.backend
        if backend is None:
            raise TypeError("a ProcessorOperator runs on a keyed step (its state is keyed)")
        self.driver = self.factory()
        self.ctx = ProcessorContext(backend, self.config, self.watermarks)
        # Rows emitted here come out with the next hook's.
        self.driver.init(self._outside(runtime, "init"), dict(self.config))

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        ctx, driver = self.ctx, self.driver
        assert ctx is not None and driver is not None
        data = value[self.data_index]
        if type(data) is not bytes:
            data = _data_bytes(data)
        source_id = 0
        if self.source_index is not None:
            sid = value[self.source_index]
            if sid is not None:
                source_id = int(sid)
        driver.process(ctx, source_id, data)
        return ctx.take()

    def on_watermark(self, watermark: int, runtime: OperatorRuntime) -> Iterable[Any]:
        assert self.driver is not None
        ctx = self._outside(runtime, "process_watermark")
        self.driver.process_watermark(ctx, 0, watermark)
        return ctx.take()

    def on_checkpoint(self, checkpoint_id: int, runtime: OperatorRuntime) -> Iterable[Any]:
        assert self.driver is not None
        ctx = self._outside(runtime, "take_checkpoint")
        self.driver.take_checkpoint(ctx, checkpoint_id)
        return ctx.take()

    def end_input(self, runtime: OperatorRuntime) -> Iterable[Any]:
        assert self.driver is not None
        ctx = self._outside(runtime, "close")
        self.driver.close(ctx)
        return ctx.take()


def _data_bytes(data: Any) -> bytes:
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if data is None:
        raise ValueError("the record's 'data' is null; a processor needs bytes")
    raise TypeError(f"the record's 'data' must be bytes, got {type(data).__name__}: {data!r}")
