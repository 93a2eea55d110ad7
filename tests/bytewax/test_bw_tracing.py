"""``fs_compat.bytewax.tracing``: Bytewax's tracing set-up runs unchanged; the log level is honoured
for fs-compat's own messages and no spans are sent."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest

from fs_compat.bytewax.tracing import (
    BytewaxTracer,
    JaegerConfig,
    OtlpTracingConfig,
    TracingConfig,
    setup_tracing,
)


@pytest.fixture
def tracers() -> Iterator[list[BytewaxTracer]]:
    made: list[BytewaxTracer] = []
    logger = logging.getLogger("fs_compat")
    level = logger.level
    yield made
    for tracer in made:
        tracer.close()
    logger.setLevel(level)


def test_the_configs_have_bytewax_defaults_and_check_their_fields() -> None:
    assert JaegerConfig("flow") == JaegerConfig("flow", "127.0.0.1:6831", 1.0)
    assert OtlpTracingConfig("flow").url == "grpc://127.0.0.1:4317"
    assert OtlpTracingConfig("flow", url="grpc://collector:4317", sampling_ratio=0.5).sampling_ratio == 0.5
    assert isinstance(JaegerConfig("flow"), TracingConfig)
    with pytest.raises(
        ValueError,
        match=re.escape("OtlpTracingConfig: sampling_ratio must be a number from 0.0 to 1.0, got -0.1"),
    ):
        OtlpTracingConfig("flow", sampling_ratio=-0.1)
    with pytest.raises(TypeError, match="JaegerConfig: service_name must be a non-empty str, got ''"):
        JaegerConfig("")


def test_messages_below_the_level_are_not_printed(
    tracers: list[BytewaxTracer], capsys: pytest.CaptureFixture[str]
) -> None:
    tracers.append(setup_tracing())  # Bytewax's default: ERROR
    log = logging.getLogger("fs_compat.test")
    log.info("quiet")
    log.error("loud")
    out = capsys.readouterr().out
    assert "quiet" not in out
    assert "ERROR fs_compat.test: loud" in out


def test_a_second_set_up_replaces_the_first_and_close_stops_printing(
    tracers: list[BytewaxTracer], capsys: pytest.CaptureFixture[str]
) -> None:
    tracers.append(setup_tracing(JaegerConfig("flow"), log_level="ERROR"))
    tracer = setup_tracing(OtlpTracingConfig("flow"), log_level="info")
    tracers.append(tracer)
    assert (tracer.log_level, tracer.config) == ("INFO", OtlpTracingConfig("flow"))
    log = logging.getLogger("fs_compat.test")
    log.info("once")
    assert capsys.readouterr().out.count("INFO fs_compat.test: once") == 1
    tracer.close()
    log.error("after close")
    assert "after close" not in capsys.readouterr().out


def test_bad_arguments_name_what_was_expected() -> None:
    with pytest.raises(
        TypeError, match="tracing_config must be a JaegerConfig or an OtlpTracingConfig, got dict"
    ):
        setup_tracing({"service_name": "flow"})  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match="log_level must be one of 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE', got 7"
    ):
        setup_tracing(log_level=7)  # type: ignore[arg-type]
