"""PyFlink's ``pyflink.common``: ``Types``/``TypeInformation``, ``Row``/``RowKind``, ``Time``,
``Duration``, ``Instant``, ``Configuration`` and ``WatermarkStrategy``.

>>> from fs_compat.common import Row, Types
>>> info = Types.ROW([Types.STRING(), Types.INT()])
>>> info.codec().decode(info.codec().encode(("a", 1)))
Row(f0='a', f1=1)
"""

from ._configuration import Configuration
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

__all__ = [
    "BasicArrayTypeInfo",
    "BasicType",
    "BasicTypeInfo",
    "Configuration",
    "DateTypeInfo",
    "Duration",
    "Instant",
    "InstantTypeInfo",
    "ListTypeInfo",
    "MapTypeInfo",
    "ObjectArrayTypeInfo",
    "PickledBytesTypeInfo",
    "PrimitiveArrayTypeInfo",
    "Row",
    "RowKind",
    "RowTypeInfo",
    "SqlTimeTypeInfo",
    "Time",
    "TimeTypeInfo",
    "TimestampAssigner",
    "TimestampTypeInfo",
    "TupleTypeInfo",
    "TypeInformation",
    "Types",
    "WatermarkStrategy",
]
