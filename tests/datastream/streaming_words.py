"""A job two test modules run as a Structured Streaming query: running word counts of the text files
a continuously monitored folder receives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fs_compat.common import Duration, Types, WatermarkStrategy
from fs_compat.datastream import DataStream, StreamExecutionEnvironment
from fs_compat.datastream.connectors.file_system import FileSource, StreamFormat


def running_word_counts(env: StreamExecutionEnvironment, inputs: Path) -> DataStream[Any]:
    """``(word, count so far)`` for every word of the lines of the files in ``inputs``."""
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(inputs))
        .monitor_continuously(Duration.of_seconds(1))
        .build()
    )
    return (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "lines")
        .flat_map(str.split, Types.STRING())
        .map(lambda w: (w, 1), Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
