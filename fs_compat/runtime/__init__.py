"""The engine-neutral keyed runtime: state specs and their binding to ``fs_api_advanced`` keyed
states, the Operator interface every step implements, timers, watermarks, and the in-process
target. Nothing here knows PyFlink or Bytewax names; the Spark adapter runs the same code
inside Spark tasks."""

from ._batched import BatchedRunner, end_order
from ._clocks import RecordTimeClock
from ._errors import describe_callable, unpicklable_message
from ._keys import MAX_PARALLELISM, KeyEncoder, key_group_bytes, subtask_of
from ._local import LocalConfig, LocalRunner, RuntimeMode, StepError, route_custom, route_key, run_local
from ._metrics import METRIC_KINDS, MetricValue, merge_metrics, snapshot_metrics
from ._operator import (
    NOT_KEYED_TIMERS,
    Operator,
    OperatorRuntime,
    SideOutput,
    TaskInfo,
    TimeDomain,
    TimerService,
    overrides,
)
from ._plan import (
    Edge,
    ExternalSourceNode,
    Node,
    OperatorNode,
    SinkNode,
    SourceNode,
    TimestampNode,
    upstream_of,
)
from ._selectors import row_field, row_fields
from ._state import (
    NOT_KEYED_MESSAGE,
    AggregatingState,
    AppendingState,
    KeyedStateBackend,
    ListState,
    MapState,
    ReducingState,
    State,
    StateAccessError,
    StateEntry,
    StateKind,
    StateSpec,
    ValueState,
    stable_pickle,
)
from ._subtask import SubtaskRunner
from ._summary import (
    JobSummary,
    StepSummary,
    collect_summaries,
    counted_push,
    latest_summaries,
    publish,
    run_local_summarized,
    state_size,
    summarize,
)
from ._timers import MAX_TIMESTAMP, MIN_TIMESTAMP, TimerQueue

__all__ = [
    "AggregatingState",
    "AppendingState",
    "BatchedRunner",
    "end_order",
    "Edge",
    "ExternalSourceNode",
    "JobSummary",
    "KeyEncoder",
    "KeyedStateBackend",
    "ListState",
    "LocalConfig",
    "LocalRunner",
    "MAX_PARALLELISM",
    "MAX_TIMESTAMP",
    "METRIC_KINDS",
    "MIN_TIMESTAMP",
    "MapState",
    "MetricValue",
    "NOT_KEYED_MESSAGE",
    "NOT_KEYED_TIMERS",
    "Node",
    "Operator",
    "OperatorNode",
    "OperatorRuntime",
    "RecordTimeClock",
    "ReducingState",
    "RuntimeMode",
    "SideOutput",
    "SinkNode",
    "SourceNode",
    "State",
    "StateAccessError",
    "StateEntry",
    "StateKind",
    "StateSpec",
    "StepError",
    "StepSummary",
    "SubtaskRunner",
    "TaskInfo",
    "TimeDomain",
    "TimerQueue",
    "TimerService",
    "TimestampNode",
    "ValueState",
    "collect_summaries",
    "counted_push",
    "describe_callable",
    "key_group_bytes",
    "latest_summaries",
    "merge_metrics",
    "overrides",
    "publish",
    "route_custom",
    "route_key",
    "row_field",
    "row_fields",
    "run_local",
    "run_local_summarized",
    "snapshot_metrics",
    "stable_pickle",
    "state_size",
    "subtask_of",
    "summarize",
    "unpicklable_message",
    "upstream_of",
]
