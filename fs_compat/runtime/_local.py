"""The in-process target: runs a plan in this process, deterministically."""

from __future__ import annotations

import enum
import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import attrs

from fs_api_advanced import system_clock
from fs_compat.common.internal import DeclaredTypeError

from ._errors import describe_callable
from ._keys import MAX_PARALLELISM, KeyEncoder, subtask_of
from ._operator import Operator, OperatorRuntime, SideOutput, TaskInfo, TimeDomain, overrides
from ._plan import Node, OperatorNode, SinkNode, SourceNode, TimestampNode, upstream_of
from ._state import KeyedStateBackend
from ._timers import MAX_TIMESTAMP, MIN_TIMESTAMP


class RuntimeMode(enum.Enum):
    """STREAMING emits as records arrive; BATCH processes one key at a time (Flink's modes)."""

    STREAMING = "streaming"
    BATCH = "batch"


class StepError(RuntimeError):
    """A user function failed; names the step, the key and the record."""


@attrs.frozen
class LocalConfig:
    mode: RuntimeMode = RuntimeMode.STREAMING
    parallelism: int = 1
    max_parallelism: int = MAX_PARALLELISM
    clock: Callable[[], int] = system_clock
    job_parameters: dict[str, str] = attrs.field(factory=dict)
    #: Flink's ``auto_watermark_interval``: timestamp assigners emit their watermark every this
    #: many ms of processing time (``clock``), 0 for none before the end of input.
    watermark_interval_ms: int = 200
    #: Whether an engine that runs the plan in passes (Spark) carries each record's origin, the
    #: source batch it comes from, through them, and hands each sink ``(origin, value)`` pairs,
    #: so that a front end can order the outputs of several sinks as the batched in-process
    #: schedule (``BatchedRunner``) would: by origin, then by step. The in-process target
    #: ignores it. See ``fs_compat.spark._batch``.
    origins: bool = False


def route_key(
    step: str, key_selector: Callable[[Any], Any], encoder: KeyEncoder, value: Any
) -> tuple[Any, bytes, int]:
    """``(key, key bytes, key group)`` of ``value`` on a keyed edge into ``step``: the key
    selector's key, located with ``encoder``. A failing key selector, or one returning None or an
    unusable key (unhashable, or not of the key type), is a StepError naming the step, the key
    selector and the record (``_unroutable``)."""
    key = None
    try:
        key = key_selector(value)
        kb, kg = encoder.locate(key) if key is not None else _no_key()
    except Exception as exc:
        raise _unroutable(step, key_selector, value, key, exc)  # noqa: B904 - it sets the cause
    return key, kb, kg


def route_keys(
    step: str, key_selector: Callable[[Any], Any], encoder: KeyEncoder, values: Iterable[Any]
) -> tuple[list[int], list[Any]]:
    """``route_key`` of each of ``values``: their key groups and keys (-1 and None for a None
    value, a watermark row of an engine's), with ``route_key``'s errors. One loop, no call per
    record but the selector's and the encoder's (an engine's route pass keys whole batches).

    >>> route_keys("s", lambda v: v[0], KeyEncoder(), [("a", 1), None, ("a", 2)])[1]
    ['a', None, 'a']
    """
    groups: list[int] = []
    keys: list[Any] = []
    add_group, add_key, locate, remembered = groups.append, keys.append, encoder.locate, encoder.remembered()
    for value in values:
        if value is None:
            add_group(-1)
            add_key(None)
            continue
        key = None
        try:
            key = key_selector(value)
            kind = key.__class__  # ``locate``, its memo inlined for int and str keys
            found = remembered(key) if kind is int or kind is str else None
            if found is None:
                found = locate(key) if key is not None else _no_key()
            group = found[1]
        except Exception as exc:
            raise _unroutable(step, key_selector, value, key, exc)  # noqa: B904 - it sets the cause
        add_group(group)
        add_key(key)
    return groups, keys


def route_custom(step: str, partitioner: Callable[[Any, int], int], value: Any, p: int) -> int:
    """The subtask (``0 <= i < p``) of ``value`` on a custom-partitioned edge into ``step``
    (``Edge.partitioner``). A failing partitioner, or one returning anything but an ``int`` in
    that range, is a StepError naming the step, the record and the partitioner (Flink fails the
    job on an index out of range too)."""
    try:
        index = partitioner(value, p)
    except Exception as exc:
        raise StepError(
            f"step '{step}': the custom partitioner raised {type(exc).__name__}: {exc} (record {value!r}); "
            f"partitioner: {describe_callable(partitioner)}"
        ) from exc
    if type(index) is not int or not 0 <= index < p:  # bool is no index either
        raise StepError(
            f"step '{step}': the custom partitioner returned {index!r} for record {value!r}, not a "
            f"partition index in [0, {p}) ({p} parallel instances); partitioner: "
            f"{describe_callable(partitioner)}"
        )
    return index


class _NoKeyError(Exception):
    """A key selector returned None (``route_key`` reports it)."""


def _no_key() -> tuple[bytes, int]:
    raise _NoKeyError


def _unroutable(
    step: str, key_selector: Callable[[Any], Any], value: Any, key: Any, exc: Exception
) -> StepError:
    """The StepError for record ``value`` of ``step`` whose key cannot be located: ``exc`` is
    what the key selector raised (``key`` None), ``_NoKeyError`` (it returned None), or what
    locating ``key`` raised (unhashable, or not of the key type). It names the step, the record
    and the key selector, and has ``exc`` as its cause (none for a None key)."""
    if isinstance(exc, _NoKeyError):
        error = StepError(
            f"step '{step}': the key selector returned None for record {value!r}; "
            f"key selector: {describe_callable(key_selector)}"
        )
    elif key is None:
        error = StepError(
            f"step '{step}': key selector raised {type(exc).__name__}: {exc} (record {value!r})"
        )
    else:
        error = StepError(
            f"step '{step}': the key selector returned a key that cannot be used for record {value!r}: "
            f"{exc}; key selector: {describe_callable(key_selector)}"
        )
    error.__cause__ = None if isinstance(exc, _NoKeyError) else exc
    error.__suppress_context__ = True
    return error


def _consumer(task: Any) -> Callable[[Any], None] | None:
    """A sink's ``consume``, which upstream tasks call directly; None for other tasks and for a
    sink with a ``writer`` (``_Task._outputs_of`` finds its instance)."""
    node = getattr(task, "node", None)
    return node.consume if isinstance(node, SinkNode) and node.writer is None else None


#: Where an instance's main outputs go: ``(task, input index, sink's consume or None)``.
_Main = list[tuple["_Task", int, Callable[[Any], None] | None]]


class _HasConfig(Protocol):
    config: LocalConfig


class _Instance:
    __slots__ = (
        "backend",
        "buffer",
        "check",
        "main",
        "on_watermark",
        "one_to_one",
        "op",
        "paths",
        "pending",
        "process",
        "rt",
        "sink",
    )

    def __init__(self, op: Operator, rt: OperatorRuntime) -> None:
        self.op = op
        self.process = op.process
        self.one_to_one = op.one_to_one
        # The watermark hook, when the operator has one (most do not: skip the call).
        self.on_watermark = op.on_watermark if overrides(op, "on_watermark") else None
        self.rt = rt
        self.backend = rt.backend
        #: Its live processing-time timers, tested after each record (``TimerQueue.pending``).
        self.pending = rt.processing_timers.pending
        self.buffer: dict[bytes, tuple[Any, list[tuple[int, Any, int | None]]]] = {}
        #: Per input, its record path (``_Task._record_path``), built at its first record.
        self.paths: dict[int, Callable[..., None]] = {}
        #: Where its main outputs go, and the one sink's consume (``_Task._outputs_of``).
        self.main: _Main = []
        self.sink: Callable[[Any], None] | None = None
        #: With ``one_to_one``: ``(shape, conform)``, the check of its outputs
        #: (``Operator.one_to_one_check``, or ``one_to_one_fields`` for a sink that reads only
        #: fields), or ``(None, None)``.
        self.check: tuple[type | None, Callable[[Any], Any] | None] = (None, None)


class CountedConsume:
    """A sink's ``consume`` that counts the values it is given in ``counter[0]`` (job summaries).
    A task whose one main output is this sink calls ``consume`` itself (``_Task._emit`` and
    ``_Task._record_path``) and adds the count itself."""

    __slots__ = ("consume", "counter")

    def __init__(self, consume: Callable[[Any], None], counter: list[int]) -> None:
        self.consume = consume
        self.counter = counter

    def __call__(self, value: Any) -> None:
        self.counter[0] += 1
        self.consume(value)


class SinkInstances:
    """The parallel instances of a sink with a ``writer`` (``SinkNode``), and which of them takes
    a value, as in Flink: on a keyed input, the instance of the value's key group; on a custom
    partitioned one, the partitioner's (``route_custom``); from an
    upstream subtask of an input with the sink's parallelism, the same instance (Flink chains the
    sink to its input); otherwise round-robin from the first instance (Flink's rebalance starts
    at a random one).

    >>> from ._plan import Edge, SourceNode
    >>> shown = []
    >>> sink = SinkNode("Print", [Edge(SourceNode("s"))], writer=lambda i, p: lambda v: shown.append((i, v)))
    >>> instances = SinkInstances(sink, 2)
    >>> instances.take("a", subtask=1, upstream=2); instances.take("b"); instances.take("c")
    >>> shown
    [(1, 'a'), (0, 'b'), (1, 'c')]
    """

    def __init__(self, node: SinkNode, parallelism: int, max_parallelism: int = MAX_PARALLELISM) -> None:
        assert node.writer is not None
        self.node = node
        self.parallelism = parallelism
        self.writers = [node.writer(index, parallelism) for index in range(parallelism)]
        edge = node.inputs[0]
        self._keyed = (
            (edge.key_selector, KeyEncoder(edge.key_codec, max_parallelism))
            if edge.key_selector is not None
            else None
        )
        self._partitioner = edge.partitioner
        self._next = 0

    @classmethod
    def of(cls, sink: SinkNode, config: LocalConfig) -> SinkInstances:
        """``sink``'s instances in a job run with ``config``: its own parallelism, else the job's."""
        return cls(sink, sink.parallelism or config.parallelism, config.max_parallelism)

    def forwarded(self, subtask: int, upstream: int) -> Callable[[Any], None] | None:
        """The instance that takes every value of ``subtask`` of an input with ``upstream``
        subtasks, when that is one instance (a forward edge); else None."""
        if self._keyed is None and self._partitioner is None and upstream == self.parallelism:
            return self.writers[subtask]
        return None

    def take(self, value: Any, subtask: int | None = None, upstream: int = 0) -> None:
        """Hand ``value`` to its instance; ``subtask`` of ``upstream`` emitted it (None: unknown)."""
        if subtask is not None and (write := self.forwarded(subtask, upstream)) is not None:
            write(value)
        elif self._keyed is not None:
            selector, encoder = self._keyed
            _key, _kb, kg = route_key(self.node.name, selector, encoder, value)
            self.writers[subtask_of(kg, self.parallelism, encoder.max_parallelism)](value)
        elif self._partitioner is not None:
            self.writers[route_custom(self.node.name, self._partitioner, value, self.parallelism)](value)
        else:
            index = self._next
            self._next = (index + 1) % self.parallelism
            self.writers[index](value)


def sink_taker(sink: SinkNode, config: LocalConfig, upstream: int) -> Callable[[Any, int | None], None]:
    """How an engine hands ``sink`` the values it collected for it, with the channel (the
    subtask of ``upstream`` subtasks that emitted each, None: unknown): to the sink's instance
    that writes it (``SinkInstances``, kept from call to call), or to its ``consume``."""
    if sink.writer is None:
        consume = sink.consume
        assert consume is not None
        return lambda value, _channel: consume(value)
    instances = SinkInstances.of(sink, config)
    return lambda value, channel: instances.take(value, channel, upstream)


def upstream_width(sink: SinkNode, config: LocalConfig) -> int:
    """How many subtasks the step feeding ``sink`` runs as (1 for a source or timestamp assigner)."""
    node = sink.inputs[0].source
    return (node.parallelism or config.parallelism) if isinstance(node, OperatorNode) else 1


#: A timestamp assigner looks at the clock for its periodic watermark once every this many
#: records (and at its first): a clock read per record would cost more than the rest of the
#: assigner's work, and a watermark a few records late is one Flink's timer thread could emit too.
WATERMARK_CHECK_EVERY = 16


class _Stamp:
    """Where a record-following clock (``RecordTimeClock.for_task``) reads the time of a timestamp
    assigner: the timestamp of the record at which the assigner looks at the clock."""

    __slots__ = ("timestamp",)

    def __init__(self) -> None:
        self.timestamp: int | None = None


# How a task takes the records of one input (``_Task.push``).
_SINK, _ASSIGN, _BROADCAST, _REBALANCE, _KEYED, _CUSTOM = range(6)


class _Task:
    """A node at run time: its instances, its downstream edges, input watermarks and ends."""

    def __init__(self, node: Node, runner: _HasConfig) -> None:
        self.node = node
        self.runner = runner
        self.down: list[tuple[str | None, _Task, int]] = []
        n_inputs = max(1, len(node.inputs))
        self.input_wm = [MIN_TIMESTAMP] * n_inputs
        self.ended = [False] * n_inputs
        self.watermark = MIN_TIMESTAMP
        self.instances: list[_Instance] = []
        self.max_ts: int | None = None
        # Periodic watermarks of a timestamp assigner (``_periodic_watermark``): records until
        # the next look at the clock (0: never), the clock, when the next watermark is due.
        self._until_check = 0
        self._next_emit: int | None = None
        self._stamp = _Stamp()
        self._wm_interval = runner.config.watermark_interval_ms
        self._wm_clock = runner.config.clock
        if isinstance(node, TimestampNode) and not node.per_element and self._wm_interval > 0:
            self._until_check = 1
            for_task = getattr(self._wm_clock, "for_task", None)
            if for_task is not None:  # a clock that follows the records (RecordTimeClock)
                self._wm_clock = for_task(self._stamp)
        self._next_instance = 0
        self._batch = runner.config.mode is RuntimeMode.BATCH
        # How ``push`` takes each input's records and, per keyed input, ``(key selector, its
        # key encoder, whether the encoder's key bytes and groups are the state's)``: they are
        # when its key codec is the state's (the first keyed input's).
        state_codec = self._key_codec()
        self._routes: list[int] = []
        self._keyed: list[tuple[Callable[[Any], Any], KeyEncoder, bool] | None] = []
        for edge in node.inputs:
            keyed = None
            if isinstance(node, SinkNode):
                route = _SINK
            elif isinstance(node, TimestampNode):
                route = _ASSIGN
            elif edge.broadcast:
                route = _BROADCAST
            elif edge.partitioner is not None:
                route = _CUSTOM
            elif edge.key_selector is None:
                route = _REBALANCE
            else:
                route = _KEYED
                encoder = KeyEncoder(edge.key_codec, runner.config.max_parallelism)
                keyed = (edge.key_selector, encoder, edge.key_codec == state_codec)
            self._routes.append(route)
            self._keyed.append(keyed)
        # Where main outputs go: ``(task, input index, sink's consume or None)``; ``_sink`` when
        # that is one sink (a counting sink's ``consume``, its counter in ``_counter``); ``_only``,
        # the one instance. Set by ``start``, once ``down`` is wired.
        self._main: _Main = []
        self._sink: Callable[[Any], None] | None = None
        #: A sink's instances, when it has a ``writer`` (``sink_instances``).
        self._sink_instances: SinkInstances | None = None
        self._counter: list[int] | None = None
        self._only: _Instance | None = None
        #: Whether this task runs only some of the node's subtasks (an engine's task), whose
        #: records the engine has routed already: a custom partitioner is not called again.
        self._routed = False

    # Set-up.
    def start(self, subtasks: Sequence[int] | None = None) -> None:
        """Open the node's instances: all of them, or only ``subtasks`` (one Spark task runs
        some subtasks of a node; the others run elsewhere)."""
        node, cfg = self.node, self.runner.config
        self._main = [(task, index, _consumer(task)) for tag, task, index in self.down if tag is None]
        self._sink = self._main[0][2] if len(self._main) == 1 else None
        if type(self._sink) is CountedConsume:
            self._counter, self._sink = self._sink.counter, self._sink.consume
        if not isinstance(node, OperatorNode):
            return
        assert node.operator_factory is not None
        p = node.parallelism or cfg.parallelism
        self._routed = subtasks is not None
        for index in range(p) if subtasks is None else subtasks:
            backend = (
                KeyedStateBackend(
                    KeyEncoder(self._key_codec(), cfg.max_parallelism),
                    clock=cfg.clock,
                )
                if node.keyed
                else None
            )
            task = TaskInfo(node.name, p, index, cfg.max_parallelism, 0, dict(cfg.job_parameters))
            rt = OperatorRuntime(task, backend, cfg.clock)
            inst = _Instance(node.operator_factory(), rt)
            inst.main, inst.sink = self._outputs_of(index, p)
            inst.check = self._check(inst.op, inst.sink is not None)
            self.instances.append(inst)
            self._guard("open", None, None, inst.op.open, rt)
        self._only = self.instances[0] if len(self.instances) == 1 else None

    def _outputs_of(self, index: int, p: int) -> tuple[_Main, Callable[[Any], None] | None]:
        """Where instance ``index`` of ``p`` sends its main outputs, and its one sink's consume:
        the task's, with a sink's instance in place of a sink with a ``writer`` where the
        instance forwards to it (``SinkInstances.forwarded``; else it is pushed to)."""
        pushed = (getattr(task, "node", None) for task, _i, consume in self._main if consume is None)
        if not any(isinstance(node, SinkNode) for node in pushed):
            return self._main, self._sink
        main: _Main = [
            (task, i, consume if consume is not None else task.sink_instances().forwarded(index, p))
            for task, i, consume in self._main
        ]
        return main, main[0][2] if len(main) == 1 else None

    def _check(self, op: Operator, to_sink: bool) -> tuple[type | None, Callable[[Any], Any] | None]:
        """How an instance of ``op`` checks its one-to-one outputs (``_Instance.check``): with
        ``one_to_one_fields`` when its one consumer (``to_sink``: a sink it calls itself) reads
        only fields."""
        shape, conform = op.one_to_one_check or (None, None)
        node = getattr(self._main[0][0], "node", None) if to_sink else None  # its one consumer
        fields = op.one_to_one_fields
        if conform is not None and fields is not None and isinstance(node, SinkNode) and node.fields_only:
            conform = fields
        return shape, conform

    def sink_instances(self) -> SinkInstances:
        """A sink's instances (a sink with a ``writer``), made at the first call."""
        if self._sink_instances is None:
            assert isinstance(self.node, SinkNode)
            self._sink_instances = SinkInstances.of(self.node, self.runner.config)
        return self._sink_instances

    def _key_codec(self) -> Any:
        for edge in self.node.inputs:
            if edge.key_selector is not None:
                return edge.key_codec
        return None

    # Records. ``push`` takes one record of one input; each reaches an instance through
    # ``_deliver`` (its ``_record_path``) and every output of the step leaves through ``_emit``
    # (a map's one output, straight from ``_record_path``). ``push_many`` is the one specialised
    # loop (see there).
    def push(self, input_index: int, value: Any, ts: int | None) -> None:
        route = self._routes[input_index]
        if route == _KEYED:
            keyed = self._keyed[input_index]
            assert keyed is not None
            selector, encoder, located = keyed
            key, kb, kg = route_key(self.node.name, selector, encoder, value)
            inst = self._only
            if inst is None:
                inst = self.instances[subtask_of(kg, len(self.instances), encoder.max_parallelism)]
            if self._batch:
                entry = inst.buffer.get(kb)
                if entry is None:
                    entry = inst.buffer[kb] = (key, [])
                entry[1].append((input_index, value, ts))
                return
            backend = inst.backend
            assert backend is not None
            if located:
                backend.set_located_key(key, kb, kg)
            else:
                backend.set_current_key(key)
            self._deliver(inst, input_index, value, ts, key)
            if inst.pending:
                self._fire_processing_timers(inst)
        elif route == _SINK:
            if self.node.writer is None:  # type: ignore[attr-defined]
                self.node.consume(value)  # type: ignore[attr-defined]
            else:
                self.sink_instances().take(value)
        elif route == _ASSIGN:
            self._assign(value, ts)
        elif route == _BROADCAST:
            for inst in self.instances:
                self._deliver(inst, input_index, value, ts, None)
        elif route == _CUSTOM:
            inst = self._only
            if not self._routed:
                partitioner = self.node.inputs[input_index].partitioner
                assert partitioner is not None
                inst = self.instances[route_custom(self.node.name, partitioner, value, len(self.instances))]
            assert inst is not None
            self._deliver(inst, input_index, value, ts, None)
        else:  # a non-keyed input is spread round-robin over the instances (Flink's rebalance)
            index = self._next_instance
            self._next_instance = (index + 1) % len(self.instances)
            self._deliver(self.instances[index], input_index, value, ts, None)

    def sender(self, input_index: int) -> Callable[[Any, int | None], None]:
        """``push`` of input ``input_index``, as a function of ``(value, timestamp)``, for an
        upstream task to call on each of its outputs: for a rebalanced input of a map with one
        instance whose one main output is a sink, in STREAMING mode (on Spark, a map chained
        after a keyed step: the Bytewax W1's last ``map``, a PyFlink ``process().map()``), the
        map's record path (``_record_path``) itself; for any other input, ``push`` (which a
        Spark task's tally wraps to count what a chained step gets: ``spark._counters``)."""
        inst = self._only
        if (
            inst is None
            or inst.one_to_one is None
            or inst.sink is None
            or self._batch
            or self._routes[input_index] != _REBALANCE
        ):
            return functools.partial(self.push, input_index)
        return self._record_path(inst, input_index)

    def _record_path(self, inst: _Instance, input_index: int) -> Callable[..., None]:
        """The one delivery core of a record: input ``input_index`` of ``inst`` as a function of
        ``(value, timestamp, key=None)`` (``key``: the backend's current key, set by the
        caller), built once. It runs the step's function (a failure is a StepError naming the
        step, the key and the record) and sends its outputs on through ``_emit``; a map's one
        output goes straight to the one sink (counted) or to the one downstream task's
        ``sender``, without a tuple. ``_deliver`` (every record ``push`` takes), ``push_many``
        and ``sender`` (an upstream task calling this step directly) all run it."""
        rt, process, one, failed = inst.rt, inst.process, inst.one_to_one, self._function_failed
        if one is None:
            emit = self._emit

            def run(value: Any, ts: int | None, key: Any = None) -> None:
                rt.timestamp = ts
                rt.input_index = input_index
                rt.time_domain = None
                try:
                    outs = process(value, rt)
                except Exception as exc:
                    raise failed(exc, key, value)  # noqa: B904 - it sets the cause
                emit(inst, outs, ts, key, value)

            return run
        sink, counter = inst.sink, self._counter
        to_main = self._main_sender(inst)
        shape, conform = inst.check
        translate = inst.op.one_to_one_error

        def run_map(value: Any, ts: int | None, key: Any = None) -> None:
            rt.timestamp = ts
            try:
                out = one(value)
                if conform is not None and out.__class__ is not shape:
                    out = conform(out)
            except Exception as exc:
                raise failed(exc, key, value, translate=translate)  # noqa: B904 - it sets the cause
            try:
                if sink is None:
                    to_main(out, ts)
                    return
                sink(out)
            except Exception as exc:
                raise failed(exc, key, value)  # noqa: B904 - it sets the cause
            if counter is not None:
                counter[0] += 1

        return run_map

    def _main_sender(self, inst: _Instance) -> Callable[[Any, int | None], None]:
        """How ``inst`` hands a record to its main output's consumers (not a sink's: the caller
        calls that itself), as a function of ``(value, timestamp)``: for one downstream task, its
        ``sender`` (a map's record path, built once); else ``_to_main``."""
        if inst.sink is None and len(inst.main) == 1:
            down, down_index, _ = inst.main[0]
            sender = getattr(down, "sender", None)  # a task's; other consumers (an engine's) push
            return sender(down_index) if sender is not None else functools.partial(down.push, down_index)
        return functools.partial(self._to_main, inst.main)

    def route(self, input_index: int, value: Any) -> tuple[Any, bytes, int]:
        """``(key, key bytes, key group)`` of ``value`` on keyed input ``input_index``
        (``route_key`` with that input's key selector and encoder)."""
        keyed = self._keyed[input_index]
        assert keyed is not None
        return route_key(self.node.name, keyed[0], keyed[1], value)

    def push_many(
        self,
        input_index: int,
        values: Iterable[Any],
        stamps: Iterable[int | None],
        keys: Iterable[Any] | None = None,
    ) -> None:
        """``push`` of each of ``values`` with its timestamp, in order. ``keys``, when given, are
        the values' keys as the input's key selector gives them (None: not known), found by
        whoever routed the records.

        The runtime's one specialised loop, for a keyed (state's key codec) or rebalanced input
        of a step with one instance in STREAMING mode: ``push``'s path with what does not change
        per record hoisted out of it (the key routing inlined; the record's delivery is
        ``_record_path``, as for ``push``, but a map's, which is ``_record_path``'s ``run_map``
        inlined, its outputs into one sink counted once per call). It is the path ``bench/w1.py``
        measures, both its in-process W1 (the source's items in one call) and its Spark W1 (the
        run pass hands each subtask's Arrow batch to ``SubtaskRunner.records``); the loop is
        worth its own code there only. Every other input goes record by record through ``push``."""
        keyed = self._keyed[input_index]
        inst = self._only
        fits = keyed[2] if keyed is not None else self._routes[input_index] == _REBALANCE
        if inst is None or self._batch or not fits:
            push = self.push
            for value, ts in zip(values, stamps):  # noqa: B905 - stamps may run on (repeat)
                push(input_index, value, ts)
            return
        selector, locate, remembered = (
            (keyed[0], keyed[1].locate, keyed[1].remembered()) if keyed is not None else (None, None, None)
        )
        backend, pending = inst.backend, inst.pending
        loader = backend.key_loader if backend is not None else None
        name = self.node.name
        # A map delivers inline, into one sink (``bench/w1.py --only local``: the in-process W1;
        # the count added once per call: ``run`` per record cost 7-9 % there, bench/README) or to
        # its main output's consumers (``_main_sender``: the next map's record path on Spark,
        # e.g. Bytewax's ``stateful_map`` -> ``map``, a call per record less).
        one, sink, counter, sent = inst.one_to_one, inst.sink, self._counter, 0
        direct = one is not None
        # Built once per call: the record path (any other step), or a map's downstream sender.
        run = None if direct else self._record_path(inst, input_index)
        to_main = self._main_sender(inst) if direct and sink is None else None
        shape, conform = inst.check
        rt, failed, one_error = inst.rt, self._function_failed, inst.op.one_to_one_error
        known = itertools.repeat(None) if keys is None else keys
        for value, ts, key in zip(values, stamps, known):  # noqa: B905
            if selector is not None:  # ``route_key``, inlined (a call per record costs ~3% of W1)
                try:
                    if key is None:
                        key = selector(value)
                    # ``locate``, its memo inlined (a call less: ~4 % of W1) for int and str keys
                    # and, their parts checked inline, tuples of them (w1.py's tuple-* shapes).
                    kind = key.__class__
                    if kind is int or kind is str:
                        found = remembered(key)  # type: ignore[misc]
                    elif kind is tuple:
                        for part in key:
                            if part.__class__ is not int and part.__class__ is not str:
                                found = None
                                break
                        else:
                            found = remembered(key)  # type: ignore[misc]
                    else:
                        found = None
                    if found is None:
                        found = locate(key) if key is not None else _no_key()  # type: ignore[misc]
                    kb, kg = found
                except Exception as exc:
                    raise _unroutable(name, selector, value, key, exc)  # noqa: B904 - it sets the cause
                # ``set_located_key``, inlined.
                if loader is not None:
                    loader(kb, kg)
                backend.current_key = key  # type: ignore[union-attr]
                backend.current_key_bytes = kb  # type: ignore[union-attr]
                backend.current_key_group = kg  # type: ignore[union-attr]
            if run is not None:
                run(value, ts, key)
            else:  # ``run``'s map delivery
                rt.timestamp = ts
                try:
                    out = one(value)  # type: ignore[misc]
                    if conform is not None and out.__class__ is not shape:
                        out = conform(out)
                except Exception as exc:
                    raise failed(exc, key, value, translate=one_error)  # noqa: B904 - it sets the cause
                try:
                    if to_main is not None:
                        to_main(out, ts)
                    else:
                        sink(out)  # type: ignore[misc]
                        sent += 1
                except Exception as exc:
                    raise failed(exc, key, value)  # noqa: B904 - it sets the cause
            if pending:
                self._fire_processing_timers(inst)
        if counter is not None:
            counter[0] += sent

    def _function_failed(
        self,
        exc: Exception,
        key: Any,
        record: Any,
        what: str = "function",
        translate: Callable[[Exception], Exception] | None = None,
    ) -> StepError:
        """What a failure ``exc`` of a user function (``what``) or of the steps downstream, on
        ``record`` with ``key``, raises (``raise failed(...)``: it sets the cause): a StepError
        naming the step, the key and the record, caused by ``exc`` or, with ``translate`` (a
        one-to-one function's ``Operator.one_to_one_error``), by what that makes of it; a
        StepError from a step downstream as it is."""
        if translate is not None:
            exc = translate(exc)
        elif isinstance(exc, StepError):
            return exc
        error = StepError(self._where(exc, key, record, what))
        error.__cause__ = exc
        return error

    def _deliver(self, inst: _Instance, input_index: int, value: Any, ts: int | None, key: Any) -> None:
        """The record path: run ``inst``'s function on ``value`` of input ``input_index`` (on a
        keyed step, ``key`` is already its backend's current key) and send its outputs on; see
        ``_record_path``."""
        run = inst.paths.get(input_index)
        if run is None:
            run = inst.paths[input_index] = self._record_path(inst, input_index)
        run(value, ts, key)

    def _emit(
        self, inst: _Instance, outs: Iterable[Any] | None, ts: int | None, key: Any, record: Any
    ) -> None:
        """Send ``inst``'s outputs on: a SideOutput to the consumers of its tag, any other value
        to the main output's (the one sink's ``consume`` directly). Every output of the step leaves
        through here (of records, timers, watermarks, end of input and checkpoints), but a map's
        in ``_record_path``. A failure downstream is a StepError naming this step, the key and the
        record (``key`` and ``record`` None where there is none)."""
        if outs is None:
            return
        sink, sent = inst.sink, 0
        try:
            for out in outs:
                if isinstance(out, SideOutput):
                    self._side_output(out, ts)
                elif sink is not None:
                    sink(out)
                    sent += 1
                else:
                    self._to_main(inst.main, out, ts)
        except Exception as exc:
            raise self._function_failed(exc, key, record)  # noqa: B904 - it sets the cause
        counter = self._counter
        if counter is not None:
            counter[0] += sent

    @staticmethod
    def _to_main(main: _Main, out: Any, ts: int | None) -> None:
        """Hand ``out`` to every consumer of the main output ``main`` (an instance's: a sink's
        ``consume`` directly)."""
        for task, index, consume in main:
            if consume is not None:
                consume(out)
            else:
                task.push(index, out, ts)

    def _side_output(self, out: SideOutput, ts: int | None) -> None:
        for tag, task, index in self.down:
            if tag == out.tag_id:
                task.push(index, out.value, ts)

    def _where(self, exc: BaseException, key: Any, record: Any, what: str = "function") -> str:
        function = getattr(self.node, "function", None)
        if what == "function" and function:
            what = f"function {function}"
        if isinstance(exc, DeclaredTypeError):  # its output, checked against the declared type
            where = f"step '{self.node.name}': {what} returned {exc.arrived()}"
            where += f" for record {record!r}" if record is not None else ""
            where += f" (key {key!r})" if key is not None else ""
            return f"{where}, declared {exc.of} {exc.declared!r}{exc.why()}"
        where = f"step '{self.node.name}': {what} raised {type(exc).__name__}: {exc}"
        if key is not None:
            where += f" (key {key!r}"
            where += f", record {record!r})" if record is not None else ")"
        elif record is not None:
            where += f" (record {record!r})"
        return where

    def _guard(self, what: str, key: Any, record: Any, fn: Callable[..., Any], *args: Any) -> Any:
        """Call a user function; its failure becomes a StepError naming step, key and record."""
        try:
            return fn(*args)
        except Exception as exc:
            raise self._function_failed(exc, key, record, what)  # noqa: B904 - it sets the cause

    # Timestamps and watermarks.
    def _assign(self, value: Any, ts: int | None) -> None:
        node = self.node
        assert isinstance(node, TimestampNode)
        if node.extract is not None:
            ts = self._guard("timestamp assigner", None, value, node.extract, value, ts)
        for _tag, task, index in self.down:
            task.push(index, value, ts)
        if ts is not None and (self.max_ts is None or ts > self.max_ts):
            self.max_ts = ts
            if node.per_element:
                self._emit_watermark()
        if self._until_check:
            self._until_check -= 1
            if not self._until_check:
                self._periodic_watermark(ts)

    def _periodic_watermark(self, ts: int | None) -> None:
        """Flink's periodic emission: the first check starts the interval; a check that finds it
        passed emits the watermark and starts the next one (``now + interval``)."""
        self._until_check = WATERMARK_CHECK_EVERY
        self._stamp.timestamp = ts
        now = self._wm_clock()
        if self._next_emit is None:
            self._next_emit = now + self._wm_interval
        elif now >= self._next_emit:
            self._next_emit = now + self._wm_interval
            self._emit_watermark()

    def _emit_watermark(self) -> None:
        node = self.node
        assert isinstance(node, TimestampNode)
        if self.max_ts is None or node.out_of_orderness_ms is None:
            return
        wm = self.max_ts - node.out_of_orderness_ms - 1
        if wm > self.watermark:
            self.watermark = wm
            for _tag, task, index in self.down:
                task.on_watermark(index, wm)

    def on_watermark(self, input_index: int, wm: int) -> None:
        if isinstance(self.node, SinkNode):
            return
        if isinstance(self.node, TimestampNode):
            return  # an assigner replaces upstream watermarks with its own
        self.input_wm[input_index] = max(self.input_wm[input_index], wm)
        combined = min(self.input_wm)
        if combined <= self.watermark:
            return
        self.watermark = combined
        if self.runner.config.mode is RuntimeMode.STREAMING:
            for inst in self.instances:
                self._advance(inst, combined)
        for _tag, task, index in self.down:
            task.on_watermark(index, combined)

    def _advance(self, inst: _Instance, wm: int) -> None:
        rt = inst.rt
        rt.watermark = wm
        for ts, _kb, key in rt.event_timers.pop_due(wm):
            self._fire(inst, ts, key, TimeDomain.EVENT_TIME)
        if inst.on_watermark is not None:
            rt.timestamp = rt.time_domain = None
            outs = self._guard("on_watermark", None, None, inst.on_watermark, wm, rt)
            self._emit(inst, outs, None, None, None)

    def checkpoint(self, checkpoint_id: int) -> None:
        """Every instance's ``on_checkpoint`` (its state is about to be saved); outputs go on."""
        for inst in self.instances:
            inst.rt.timestamp = inst.rt.time_domain = None
            outs = self._guard("on_checkpoint", None, None, inst.op.on_checkpoint, checkpoint_id, inst.rt)
            self._emit(inst, outs, None, None, None)

    def _fire(self, inst: _Instance, ts: int, key: Any, domain: TimeDomain) -> None:
        rt = inst.rt
        assert rt.backend is not None
        rt.backend.set_current_key(key)
        rt.timestamp = ts if domain is TimeDomain.EVENT_TIME else None
        rt.time_domain = domain
        outs = self._guard("on_timer", key, None, inst.op.on_timer, ts, rt)
        self._emit(inst, outs, ts if domain is TimeDomain.EVENT_TIME else None, key, None)
        rt.time_domain = None

    def _fire_processing_timers(self, inst: _Instance) -> None:
        q = inst.rt.processing_timers
        if len(q):
            nxt = q.next_timestamp()
            if nxt is not None and nxt <= inst.rt.clock():
                for ts, _kb, key in q.pop_due(inst.rt.clock()):
                    self._fire(inst, ts, key, TimeDomain.PROCESSING_TIME)

    # End of input.
    def on_end(self, input_index: int) -> None:
        if not isinstance(self.node, (SourceNode,)):
            self.ended[input_index] = True
            if not all(self.ended):
                return
        if isinstance(self.node, OperatorNode):
            if self.runner.config.mode is RuntimeMode.BATCH and self.node.keyed:
                for inst in self.instances:
                    self._drain_batch(inst)
            else:
                self.on_watermark_all(MAX_TIMESTAMP)
            for inst in self.instances:
                inst.rt.timestamp = None
                outs = self._guard("end_input", None, None, inst.op.end_input, inst.rt)
                self._emit(inst, outs, None, None, None)
            for inst in self.instances:
                self._guard("close", None, None, inst.op.close)
        if not isinstance(self.node, SinkNode):
            if self.watermark < MAX_TIMESTAMP:
                self.watermark = MAX_TIMESTAMP
                for _tag, task, index in self.down:
                    task.on_watermark(index, MAX_TIMESTAMP)
        for _tag, task, index in self.down:
            task.on_end(index)

    def on_watermark_all(self, wm: int) -> None:
        self.input_wm = [wm] * len(self.input_wm)
        if wm > self.watermark:
            self.watermark = wm
            for inst in self.instances:
                self._advance(inst, wm)
            for _tag, task, index in self.down:
                task.on_watermark(index, wm)

    def _drain_batch(self, inst: _Instance) -> None:
        """Flink's BATCH mode: one key at a time; at the end of a key all its timers fire."""
        rt = inst.rt
        for kb in sorted(inst.buffer):
            key, records = inst.buffer[kb]
            rt.watermark = MIN_TIMESTAMP
            assert inst.backend is not None
            inst.backend.set_current_key(key)
            # Flink sorts a key's records by timestamp (none counts as the smallest); the sort is
            # stable, so equal timestamps keep their arrival order.
            records.sort(key=_record_time)
            for input_index, value, ts in records:
                self._deliver(inst, input_index, value, ts, key)
            rt.watermark = MAX_TIMESTAMP
            while True:
                due = [(ts, TimeDomain.EVENT_TIME) for ts, _ in rt.event_timers.pop_key(kb)]
                due += [(ts, TimeDomain.PROCESSING_TIME) for ts, _ in rt.processing_timers.pop_key(kb)]
                if not due:
                    break
                for ts, domain in sorted(due):
                    self._fire(inst, ts, key, domain)
        inst.buffer.clear()

    # For other schedules over these tasks (``_batched``).
    def step_error(self, exc: Exception, what: str = "function") -> StepError:
        """``_function_failed`` with no key or record known: the StepError for ``exc``, raised by
        this step's ``what`` (a StepError from downstream as it is; ``raise``: it sets the cause)."""
        return self._function_failed(exc, None, None, what)


def _record_time(record: tuple[int, Any, int | None]) -> int:
    ts = record[2]
    return MIN_TIMESTAMP if ts is None else ts


class LocalRunner:
    """Runs the part of a plan that feeds ``sinks``, in this process."""

    def __init__(self, sinks: Sequence[Node], config: LocalConfig | None = None) -> None:
        self.config = config or LocalConfig()
        self.nodes = upstream_of(sinks)
        self.tasks: dict[int, _Task] = {n.id: _Task(n, self) for n in self.nodes}
        for node in self.nodes:
            for index, edge in enumerate(node.inputs):
                self.tasks[edge.source.id].down.append((edge.side_tag, self.tasks[node.id], index))

    def run(self) -> None:
        for node in self.nodes:
            self.tasks[node.id].start()
        sources = [self.tasks[n.id] for n in self.nodes if isinstance(n, SourceNode)]
        iters = []
        for task in sources:
            node = task.node
            assert isinstance(node, SourceNode)
            stamps: Iterable[int | None] = (
                node.timestamps if node.timestamps is not None else itertools.repeat(None)
            )
            iters.append((task, zip(node.items, stamps, strict=False)))
        if len(iters) == 1:  # one source: its records in order
            task, it = iters[0]
            main = [(down, index) for tag, down, index in task.down if tag is None]
            if len(main) == 1:  # one consumer takes them all in one call
                down, index = main[0]
                node = task.node
                assert isinstance(node, SourceNode)
                down.push_many(
                    index,
                    node.items,
                    node.timestamps if node.timestamps is not None else itertools.repeat(None),
                )
            else:
                for value, ts in it:
                    for down, index in main:
                        down.push(index, value, ts)
            task.on_end(0)
            return
        # Round-robin over the sources, one record each, as concurrent sources would interleave.
        active = iters
        while active:
            still = []
            for task, it in active:
                item = next(it, None)
                if item is None:
                    task.on_end(0)
                    continue
                value, ts = item
                for tag, down, index in task.down:
                    if tag is None:
                        down.push(index, value, ts)
                still.append((task, it))
            active = still

    def start(self) -> None:
        """Open every task's instances without reading the sources (a schedule other than
        ``run`` then drives the tasks)."""
        for node in self.nodes:
            self.tasks[node.id].start()


def run_local(sinks: Sequence[Node], config: LocalConfig | None = None) -> None:
    """Run the plan that feeds ``sinks`` in this process."""
    LocalRunner(sinks, config).run()
