"""PyFlink's ``pyflink.datastream.connectors.number_seq``: ``NumberSequenceSource``.

>>> from fs_compat.common import WatermarkStrategy
>>> from fs_compat.datastream import StreamExecutionEnvironment
>>> env = StreamExecutionEnvironment.get_execution_environment()
>>> numbers = env.from_source(NumberSequenceSource(1, 3), WatermarkStrategy.no_watermarks(), "seq")
>>> numbers.map(lambda n: n * 10).execute_and_collect(limit=5)
[10, 20, 30]
"""

from ._number_seq import (
    NumberSequenceSource,
)

__all__ = [
    "NumberSequenceSource",
]
