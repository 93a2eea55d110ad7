"""Bytewax's ``bytewax.tracing``: logging and tracing configuration, with its names.

Bytewax traces its Rust runtime and sends the spans to Jaeger or an OpenTelemetry collector.
fs-compat has no such runtime: :func:`setup_tracing` sets the level of fs-compat's own log
messages (logger ``fs_compat``, printed to standard output as Bytewax prints its logs) and sends
no spans; a :class:`JaegerConfig` or :class:`OtlpTracingConfig` is checked and kept
(:attr:`BytewaxTracer.config`), so a program that sets up tracing runs unchanged. On Spark, the
Spark UI and the run's job summary show the steps and their records instead.

>>> from fs_compat.bytewax.tracing import OtlpTracingConfig, setup_tracing
>>> tracer = setup_tracing(OtlpTracingConfig(service_name="my-flow"), log_level="INFO")
>>> tracer.config.url, tracer.log_level
('grpc://127.0.0.1:4317', 'INFO')
>>> tracer.close()
"""

from __future__ import annotations

import logging
import sys

import attrs

__all__ = ["BytewaxTracer", "JaegerConfig", "OtlpTracingConfig", "TracingConfig", "setup_tracing"]

#: Bytewax's log levels, most severe first, and the ``logging`` level each is here.
_LEVELS = {
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": 5,
}


def _jaeger_endpoint(value: object) -> str:
    return "127.0.0.1:6831" if value is None else str(value)


def _otlp_url(value: object) -> str:
    return "grpc://127.0.0.1:4317" if value is None else str(value)


def _ratio(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        name = type(instance).__name__
        raise ValueError(f"{name}: sampling_ratio must be a number from 0.0 to 1.0, got {value!r}")


def _service(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{type(instance).__name__}: service_name must be a non-empty str, got {value!r}")


@attrs.frozen
class TracingConfig:
    """Where traces go: the base of :class:`JaegerConfig` and :class:`OtlpTracingConfig`."""


@attrs.frozen
class JaegerConfig(TracingConfig):
    """Bytewax's Jaeger configuration (``endpoint`` defaults to ``"127.0.0.1:6831"``), kept and
    not used: fs-compat sends no spans.

    >>> JaegerConfig("my-flow").endpoint
    '127.0.0.1:6831'
    >>> JaegerConfig("my-flow", sampling_ratio=2.0)
    Traceback (most recent call last):
    ...
    ValueError: JaegerConfig: sampling_ratio must be a number from 0.0 to 1.0, got 2.0
    """

    service_name: str = attrs.field(validator=_service)
    endpoint: str = attrs.field(default=None, converter=_jaeger_endpoint)
    sampling_ratio: float = attrs.field(default=1.0, validator=_ratio)


@attrs.frozen
class OtlpTracingConfig(TracingConfig):
    """Bytewax's OpenTelemetry collector configuration (``url`` defaults to
    ``"grpc://127.0.0.1:4317"``), kept and not used: fs-compat sends no spans."""

    service_name: str = attrs.field(validator=_service)
    url: str = attrs.field(default=None, converter=_otlp_url)
    sampling_ratio: float = attrs.field(default=1.0, validator=_ratio)


@attrs.define
class BytewaxTracer:
    """What :func:`setup_tracing` returns (keep a reference, as with Bytewax): the configuration
    and level in force, and the handler that prints fs-compat's log messages; :meth:`close`
    removes it."""

    config: TracingConfig | None
    log_level: str
    handler: logging.Handler

    def close(self) -> None:
        """Stop printing fs-compat's log messages through this tracer."""
        logging.getLogger("fs_compat").removeHandler(self.handler)


def setup_tracing(tracing_config: TracingConfig | None = None, log_level: str | None = None) -> BytewaxTracer:
    """Print fs-compat's log messages at ``log_level`` and above (one of ``"ERROR"`` (the
    default), ``"WARN"``, ``"INFO"``, ``"DEBUG"``, ``"TRACE"``) to standard output; keep
    ``tracing_config`` (no spans are sent). A second call replaces the first's handler.

    >>> setup_tracing(log_level="LOUD")
    Traceback (most recent call last):
    ...
    ValueError: setup_tracing: log_level must be one of 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE', got 'LOUD'
    """
    if tracing_config is not None and not isinstance(tracing_config, TracingConfig):
        raise TypeError(
            "setup_tracing: tracing_config must be a JaegerConfig or an OtlpTracingConfig, "
            f"got {type(tracing_config).__name__}"
        )
    level = "ERROR" if log_level is None else str(log_level).upper()
    if level not in _LEVELS:
        allowed = ", ".join(repr(name) for name in _LEVELS)
        raise ValueError(f"setup_tracing: log_level must be one of {allowed}, got {log_level!r}")
    logger = logging.getLogger("fs_compat")
    for old in [h for h in logger.handlers if getattr(h, "_fs_compat_tracing", False)]:
        logger.removeHandler(old)
    handler = logging.StreamHandler(sys.stdout)
    handler._fs_compat_tracing = True  # type: ignore[attr-defined]  # marks the handler as ours
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(_LEVELS[level])
    logger.addHandler(handler)
    logger.setLevel(_LEVELS[level])
    return BytewaxTracer(tracing_config, level, handler)
