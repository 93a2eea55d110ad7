"""The Spark adapter: runs the runtime's logical plan as Spark jobs.

Bounded plans (collections, batch DataFrames) run as one ``repartition -> sortWithinPartitions
-> mapInArrow`` per step, with the engine-neutral runtime inside the tasks. Unbounded plans
(streaming DataFrames) run as Structured Streaming queries whose keyed state and timers live in
Spark's checkpointed state store, one entry per key group; ``read_state`` reads a stopped
query's state back, decoded with the job's state declarations. Nothing here knows PyFlink or
Bytewax names.
"""

from ._batch import batch_dataframe, collect_items, run_batch
from ._bounded_stream import END_OF_INPUT, run_bounded_stream, run_stream_epochs
from ._convert import OutputColumns, row_type_of, type_info_of
from ._errors import await_query, user_error
from ._events import SourceBatches, watermark_column
from ._kafka import kafka_package, with_kafka_connector
from ._progress import await_lines as await_stream_lines
from ._progress import streams_built
from ._read_state import read_state
from ._session import (
    EMBEDDED_DEFAULTS,
    LOGGING_ENV,
    LOGGING_KEY,
    default_parallelism,
    is_connect,
    remote_url,
    ship_python_files,
    spark_master,
    spark_session,
)
from ._session import quiet_driver_worker as _quiet_driver_worker
from ._sink_query import start_sink_query
from ._stream import StreamPlanError, end_of_run, stream_dataframe

_quiet_driver_worker()

__all__ = [
    "EMBEDDED_DEFAULTS",
    "END_OF_INPUT",
    "LOGGING_ENV",
    "LOGGING_KEY",
    "OutputColumns",
    "SourceBatches",
    "StreamPlanError",
    "await_query",
    "await_stream_lines",
    "batch_dataframe",
    "collect_items",
    "default_parallelism",
    "end_of_run",
    "is_connect",
    "kafka_package",
    "read_state",
    "remote_url",
    "row_type_of",
    "run_batch",
    "run_bounded_stream",
    "run_stream_epochs",
    "ship_python_files",
    "spark_master",
    "spark_session",
    "start_sink_query",
    "stream_dataframe",
    "streams_built",
    "type_info_of",
    "user_error",
    "watermark_column",
    "with_kafka_connector",
]
