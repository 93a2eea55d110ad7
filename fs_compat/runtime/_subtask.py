"""One subtask of one step, driven by an ordered stream of events: what an engine runs inside a
task (the Spark adapter runs one per partition and subtask).

The events are the step's input records and the upstream watermarks, in order; the outputs are
the step's records (main and side outputs) and its own watermarks, in order. Input watermarks
come per upstream channel (an upstream subtask): the watermark of an input is the minimum over
its channels, as in Flink.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._local import LocalConfig, _Task
from ._plan import Node, SinkNode
from ._timers import MIN_TIMESTAMP

#: An output: ``(tag, value, ts, wm)``; a record has ``wm is None``, a watermark has ``value``
#: unset (``None``) and ``wm`` set. ``tag`` is None for the main output; with
#: ``SubtaskRunner``'s ``branches``, the branch's index.
Output = tuple[str | int | None, Any, int | None, int | None]
#: A chained step in full: the step, its input the records enter, and the previous step's output
#: it reads (None: the main output; see ``SubtaskRunner``).
ChainLink = tuple[Node, int, str | None]
#: A chained step: a ``ChainLink``, or its short forms (input 0, the main output).
Link = Node | tuple[Node, int] | ChainLink


class _Collector:
    """Stands where the step's downstream tasks would: records what reaches one output tag."""

    def __init__(self, tag: str | int | None, out: list[Output]) -> None:
        self.tag = tag
        self.out = out

    def push(self, input_index: int, value: Any, ts: int | None) -> None:
        self.out.append((self.tag, value, ts, None))

    def on_watermark(self, input_index: int, wm: int) -> None:
        self.out.append((self.tag, None, None, wm))

    def on_end(self, input_index: int) -> None:
        pass


class _Values(_Collector):
    """Stands for the main output when only its record values are wanted: upstream tasks call
    ``node.consume`` (the list's ``append``) directly, as they do a sink's (``fields_only``:
    ``SinkNode``'s)."""

    def __init__(self, values: list[Any], fields_only: bool = False) -> None:
        super().__init__(None, [])
        self.node = SinkNode("values", consume=values.append, fields_only=fields_only)

    def on_watermark(self, input_index: int, wm: int) -> None:
        pass


def _link(link: Link) -> ChainLink:
    """A chained step as ``(step, input, tag read)`` (see ``SubtaskRunner``)."""
    if not isinstance(link, tuple):
        return link, 0, None
    if len(link) == 2:
        return link[0], link[1], None
    return link


class SubtaskRunner:
    """Runs subtask ``index`` of ``node`` over events fed in order.

    ``channels[i]`` is how many upstream channels input ``i`` has; ``tags`` are the side-output
    tags somebody consumes (the main output is always collected). ``chain`` are single-input
    steps that follow ``node`` in the same pass, each consuming the previous one's main output
    (``tags`` then apply to the last of them); a chained step given as ``(step, i)`` takes the
    previous one's main output as its input ``i``, and as ``(step, i, tag)`` the previous one's
    side output ``tag`` (None: the main output). Call ``record`` / ``watermark`` per event,
    ``finish`` at the end of input; ``drain`` takes the outputs so far. With ``values``, the
    main output's record values go to that list instead (no timestamps, no watermarks); with
    ``fields_only`` too, they are read only field by field (``SinkNode.fields_only``: a
    fitting tuple may stand for a declared Row).

    With ``branches`` instead of ``chain`` and ``tags``: several chains that each read an output
    of ``node`` (their first link says which), ``(links, tag)`` each; what comes out of a branch
    is its last step's output ``tag`` (of ``node`` itself for a branch without links), labelled
    with the branch's index in place of a tag.
    """

    def __init__(
        self,
        node: Node,
        index: int,
        config: LocalConfig,
        channels: Sequence[int],
        tags: Sequence[str] = (),
        chain: Sequence[Link] = (),
        values: list[Any] | None = None,
        branches: Sequence[tuple[Sequence[Link], str | None]] = (),
        fields_only: bool = False,
    ) -> None:
        self.config = config
        self._out: list[Output] = []
        self._task = _Task(node, self)
        #: ``record`` without the extra call, for engines' per-record loops.
        self.push: Callable[[int, Any, int | None], None] = self._task.push
        self._chain = [self._task]
        for b, (links, tag) in enumerate(branches):
            last = self._follow(links)
            last.down.append((tag, _Collector(b, self._out), 0))  # type: ignore[arg-type]
        if not branches:
            last = self._follow(chain)
            main = _Collector(None, self._out) if values is None else _Values(values, fields_only)
            last.down.append((None, main, 0))  # type: ignore[arg-type]
            for tag in tags:
                last.down.append((tag, _Collector(tag, self._out), 0))  # type: ignore[arg-type]
        self._channel_wm = [[MIN_TIMESTAMP] * max(1, n) for n in channels]
        self._input_wm = [MIN_TIMESTAMP] * len(channels)
        self._task.start([index])
        for task in self._chain[1:]:
            task.start([index])

    def _follow(self, links: Sequence[Link]) -> _Task:
        """Chain a task per link after the first step's; the last task (the first step's for
        no link)."""
        last = self._task
        for link in links:
            follower, input_index, read = _link(link)
            task = _Task(follower, self)
            last.down.append((read, task, input_index))
            self._chain.append(task)
            last = task
        return last

    @property
    def runtime(self) -> Any:
        """The OperatorRuntime of the first step's instance (its keyed state and timers)."""
        return self._task.instances[0].rt

    def operator_states(self) -> list[Any]:
        """Each step's ``Operator.snapshot_operator_state``, in chain order."""
        return [task.instances[0].op.snapshot_operator_state() for task in self._chain if task.instances]

    def restore_operator_states(self, states: Sequence[Any]) -> None:
        """Give each step back its part of ``operator_states()``."""
        instances = [task.instances[0] for task in self._chain if task.instances]
        for inst, state in zip(instances, states, strict=False):
            if state is not None:
                inst.op.restore_operator_state(state)

    def record(self, input_index: int, value: Any, ts: int | None) -> None:
        self._task.push(input_index, value, ts)

    def records(
        self,
        input_index: int,
        values: Iterable[Any],
        stamps: Iterable[int | None],
        keys: Iterable[Any] | None = None,
    ) -> None:
        """``record`` of each of ``values`` with its timestamp, in order (one call per batch:
        keyed steps take a specialised loop); ``keys`` are their keys where the engine knows
        them (else None), see ``_Task.push_many``."""
        self._task.push_many(input_index, values, stamps, keys)

    def watermark(self, input_index: int, channel: int, wm: int) -> None:
        marks = self._channel_wm[input_index]
        if wm <= marks[channel]:
            return
        marks[channel] = wm
        combined = min(marks)
        if combined > self._input_wm[input_index]:
            self._input_wm[input_index] = combined
            self._task.on_watermark(input_index, combined)

    def processing_time_advanced(self) -> None:
        """Fire the first step's processing-time timers that are due by its clock."""
        self._task._fire_processing_timers(self._task.instances[0])

    def checkpoint(self, checkpoint_id: int) -> None:
        """The engine is about to save state: every step's ``Operator.on_checkpoint``, in order."""
        for task in self._chain:
            task.checkpoint(checkpoint_id)

    def finish(self) -> None:
        for index in range(len(self._input_wm)):
            self._task.on_end(index)

    def pending(self) -> int:
        """How many outputs ``drain`` would take now."""
        return len(self._out)

    def discard(self, mark: int) -> None:
        """Drop the outputs made since ``pending()`` gave ``mark``."""
        del self._out[mark:]

    def drain(self) -> list[Output]:
        out, self._out[:] = list(self._out), []
        return out
