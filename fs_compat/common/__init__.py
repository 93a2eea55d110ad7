"""PyFlink's ``pyflink.common``: ``Types``/``TypeInformation``, ``Row``/``RowKind``, ``Time``,
``Duration``, ``Instant``, ``Configuration``, ``WatermarkStrategy`` and the serialization schemas
(``SimpleStringSchema``, ``Encoder`` ...).

>>> from fs_compat.common import Row, Types
>>> info = Types.ROW([Types.STRING(), Types.INT()])
>>> info.codec().decode(info.codec().encode(("a", 1)))
Row(f0='a', f1=1)
"""

from ._configuration import Configuration
from ._job import (
    AssignerWithPeriodicWatermarksWrapper,
    CompletableFuture,
    ConfigOption,
    ConfigOptions,
    ExecutionConfig,
    InputDependencyConstraint,
    JobClient,
    JobExecutionResult,
    JobID,
    JobStatus,
    RestartStrategies,
    RestartStrategyConfiguration,
    TypeSerializer,
)
from ._row import Row, RowKind
from ._time import Duration, Instant, Time
from ._typeinfo import (
    BasicArrayTypeInfo,
    BasicType,
    BasicTypeInfo,
    DateTypeInfo,
    InstantTypeInfo,
    ListTypeInfo,
    MapTypeInfo,
    ObjectArrayTypeInfo,
    PickledBytesTypeInfo,
    PrimitiveArrayTypeInfo,
    RowTypeInfo,
    SqlTimeTypeInfo,
    TimestampTypeInfo,
    TimeTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    Types,
)
from ._watermark import TimestampAssigner, WatermarkStrategy
from .serialization import (
    ByteArraySchema,
    DeserializationSchema,
    Encoder,
    SerializationSchema,
    SimpleStringSchema,
)

__all__ = [
    "AssignerWithPeriodicWatermarksWrapper",
    "BasicArrayTypeInfo",
    "BasicType",
    "BasicTypeInfo",
    "ByteArraySchema",
    "CompletableFuture",
    "ConfigOption",
    "ConfigOptions",
    "Configuration",
    "DateTypeInfo",
    "DeserializationSchema",
    "Duration",
    "Encoder",
    "ExecutionConfig",
    "InputDependencyConstraint",
    "Instant",
    "InstantTypeInfo",
    "JobClient",
    "JobExecutionResult",
    "JobID",
    "JobStatus",
    "ListTypeInfo",
    "MapTypeInfo",
    "ObjectArrayTypeInfo",
    "PickledBytesTypeInfo",
    "PrimitiveArrayTypeInfo",
    "RestartStrategies",
    "RestartStrategyConfiguration",
    "Row",
    "RowKind",
    "RowTypeInfo",
    "SerializationSchema",
    "SimpleStringSchema",
    "SqlTimeTypeInfo",
    "Time",
    "TimeTypeInfo",
    "TimestampAssigner",
    "TimestampTypeInfo",
    "TupleTypeInfo",
    "TypeInformation",
    "TypeSerializer",
    "Types",
    "WatermarkStrategy",
]
