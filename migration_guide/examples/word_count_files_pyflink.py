"""PyFlink's word-count example with ``--input`` and ``--output``: a ``FileSource`` of text lines,
a keyed ``reduce``, and a ``FileSink`` with an ``OutputFileConfig`` and a rolling policy.

Run without arguments, it writes a small text file to a temporary folder, counts its words into
another one, and prints the part files it finds there: their layout (a bucket per hour, named
``yyyy-MM-dd--HH``; part files ``prefix-<uuid>-<n>.ext``) and their lines, sorted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections.abc import Iterator

from pyflink.common import Encoder, Types, WatermarkStrategy
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import (
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)

TEXT = """The quick brown fox
jumps over the lazy dog;
the dog sleeps, the fox runs.
"""


def split(line: str) -> Iterator[str]:
    yield from re.findall(r"[a-z]+", line.lower())


def word_count(input_path: str, output_path: str) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)

    ds = env.from_source(
        source=FileSource.for_record_stream_format(StreamFormat.text_line_format(), input_path)
        .process_static_file_set()
        .build(),
        watermark_strategy=WatermarkStrategy.for_monotonous_timestamps(),
        source_name="file_source",
    )
    counts = (
        ds.flat_map(split)
        .map(lambda word: (word, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    counts.sink_to(
        sink=FileSink.for_row_format(base_path=output_path, encoder=Encoder.simple_string_encoder())
        .with_output_file_config(
            OutputFileConfig.builder().with_part_prefix("prefix").with_part_suffix(".ext").build()
        )
        .with_rolling_policy(RollingPolicy.default_rolling_policy())
        .build()
    )
    env.execute("word count")


def show(output_path: str) -> None:
    """The layout of the part files under ``output_path``, and their lines, sorted."""
    lines: list[str] = []
    for folder, _dirs, files in sorted(os.walk(output_path)):
        for name in sorted(files):
            bucket = os.path.relpath(folder, output_path)
            hourly = re.fullmatch(r"\d{4}-\d{2}-\d{2}--\d{2}", bucket) is not None
            part = re.sub(r"^prefix-[0-9a-f-]{36}-(\d+)\.ext$", r"prefix-<uuid>-\1.ext", name)
            print(f"{'<yyyy-MM-dd--HH>' if hourly else bucket}/{part}")
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                lines.extend(f.read().splitlines())
    for line in sorted(lines):
        print(line)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", dest="input", required=False, help="Input file(s) to process.")
    parser.add_argument("--output", dest="output", required=False, help="Output folder.")
    known, _ = parser.parse_known_args(argv)
    if known.input and known.output:
        word_count(known.input, known.output)
        return
    with tempfile.TemporaryDirectory() as work:
        input_path = os.path.join(work, "input.txt")
        with open(input_path, "w", encoding="utf-8") as f:
            f.write(TEXT)
        output_path = os.path.join(work, "counts")
        word_count(input_path, output_path)
        show(output_path)


if __name__ == "__main__":
    main(sys.argv[1:])
