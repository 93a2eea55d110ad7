"""PyFlink's job-level names of ``pyflink.common``: ``ExecutionConfig``, ``JobExecutionResult``,
``JobID``, ``JobStatus``, ``JobClient``, ``CompletableFuture``, ``RestartStrategies``,
``ConfigOptions``, ``InputDependencyConstraint``, ``TypeSerializer``."""

from __future__ import annotations

import abc
import datetime
import enum
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a type only: the runtime sits above fs_compat.common
    from fs_compat.runtime import JobSummary


class ExecutionConfig:
    """Flink's ExecutionConfig: the watermark interval and the job parameters mean something
    here; the other settings PyFlink 2.3 can set (closure cleaner, object reuse, latency tracking,
    task cancellation, auto-generated uids, snapshot compression) are kept with Flink's defaults
    and have no effect."""

    #: Flink's "use the default parallelism" marker.
    PARALLELISM_DEFAULT = -1
    #: Flink's "parallelism not known" marker.
    PARALLELISM_UNKNOWN = -2

    def __init__(self) -> None:
        self._auto_watermark_interval = 200
        self._job_parameters: dict[str, str] = {}
        self._closure_cleaner = True
        self._object_reuse = False
        self._latency_tracking_interval = 0
        self._task_cancellation_interval = 30_000
        self._task_cancellation_timeout = 180_000
        self._auto_generated_uids = True
        self._snapshot_compression = False

    def enable_closure_cleaner(self) -> ExecutionConfig:
        """Accepted and kept (functions are copied with cloudpickle)."""
        self._closure_cleaner = True
        return self

    def disable_closure_cleaner(self) -> ExecutionConfig:
        """Accepted and kept."""
        self._closure_cleaner = False
        return self

    def is_closure_cleaner_enabled(self) -> bool:
        """True unless disabled."""
        return self._closure_cleaner

    def enable_object_reuse(self) -> ExecutionConfig:
        """Accepted and kept: each step gets the values its input step made, as with reuse."""
        self._object_reuse = True
        return self

    def disable_object_reuse(self) -> ExecutionConfig:
        """Accepted and kept."""
        self._object_reuse = False
        return self

    def is_object_reuse_enabled(self) -> bool:
        """False unless enabled."""
        return self._object_reuse

    def set_latency_tracking_interval(self, interval: int) -> ExecutionConfig:
        """Accepted and kept (no latency markers here)."""
        self._latency_tracking_interval = interval
        return self

    def get_latency_tracking_interval(self) -> int:
        """The interval given (0 by default)."""
        return self._latency_tracking_interval

    def set_task_cancellation_interval(self, interval: int) -> ExecutionConfig:
        """Accepted and kept."""
        self._task_cancellation_interval = interval
        return self

    def get_task_cancellation_interval(self) -> int:
        """The interval given (30 s by default)."""
        return self._task_cancellation_interval

    def set_task_cancellation_timeout(self, timeout: int) -> ExecutionConfig:
        """Accepted and kept."""
        self._task_cancellation_timeout = timeout
        return self

    def get_task_cancellation_timeout(self) -> int:
        """The timeout given (180 s by default)."""
        return self._task_cancellation_timeout

    def enable_auto_generated_uids(self) -> ExecutionConfig:
        """Accepted and kept."""
        self._auto_generated_uids = True
        return self

    def disable_auto_generated_uids(self) -> ExecutionConfig:
        """Accepted and kept (a step's ``uid`` only labels it here)."""
        self._auto_generated_uids = False
        return self

    def has_auto_generated_uids_enabled(self) -> bool:
        """True unless disabled."""
        return self._auto_generated_uids

    def set_use_snapshot_compression(self, use_snapshot_compression: bool) -> ExecutionConfig:
        """Accepted and kept (Spark compresses its state store)."""
        self._snapshot_compression = use_snapshot_compression
        return self

    def is_use_snapshot_compression(self) -> bool:
        """False unless set."""
        return self._snapshot_compression

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        """How often (ms of processing time) timestamp assigners emit their watermark, as in
        Flink; 0: no watermark before the end of input. A small bounded input, handled in less
        than one interval, sees its first watermark at its end. For a watermark after every
        record use ``WatermarkStrategy.with_per_element_watermarks()`` (fs-compat extension)."""
        if interval < 0:
            raise ValueError(f"Auto watermark interval must not be negative, got {interval}")
        self._auto_watermark_interval = interval
        return self

    def get_auto_watermark_interval(self) -> int:
        """The interval given to ``set_auto_watermark_interval`` (ms; 200 by default)."""
        return self._auto_watermark_interval

    def set_global_job_parameters(self, global_job_parameters_dict: dict[str, str]) -> ExecutionConfig:
        """Parameters every function reads with ``RuntimeContext.get_job_parameter``."""
        self._job_parameters = dict(global_job_parameters_dict)
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        """A copy of the job parameters."""
        return dict(self._job_parameters)


class JobID:
    """A job's id (PyFlink's ``JobID``): 32 hex digits, new for every job."""

    def __init__(self, hex_id: str) -> None:
        self._hex = hex_id

    def __str__(self) -> str:
        return self._hex

    def __repr__(self) -> str:
        return f"JobID({self._hex!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobID) and other._hex == self._hex

    def __hash__(self) -> int:
        return hash(self._hex)


class JobExecutionResult:
    """What ``env.execute()`` returns: the job's id and net runtime, as in PyFlink, and (an
    fs-compat extension) its summary, ``get_job_summary()``: records in and out per step, the
    keyed state each step holds at the end, wall time."""

    def __init__(self, job_name: str, summary: JobSummary | None = None) -> None:
        self._job_name = job_name
        self._summary = summary
        self._job_id = JobID(uuid.uuid4().hex)

    def get_job_name(self) -> str:
        """The name given to ``execute``."""
        return self._job_name

    def get_job_id(self) -> JobID:
        """The job's id, new for every run."""
        return self._job_id

    def get_net_runtime(self) -> int:
        """The job's wall time in milliseconds."""
        return 0 if self._summary is None else round(self._summary.wall_time_s * 1000)

    def get_accumulator_result(self, accumulator_name: str) -> object:
        """None: Python jobs have no Flink accumulators (see ``get_job_summary`` for counts)."""
        return self.get_all_accumulator_results().get(accumulator_name)

    def get_all_accumulator_results(self) -> dict[str, object]:
        """Empty: Python jobs have no Flink accumulators (see ``get_job_summary`` for counts)."""
        return {}

    def get_job_summary(self) -> JobSummary | None:
        """fs-compat extension: what the job did per step (``fs_compat.runtime.JobSummary``:
        ``steps`` with ``records_in``, ``records_out``, ``state_keys``, ``state_bytes``;
        ``wall_time_s``; ``render()`` for a table)."""
        return self._summary

    def __str__(self) -> str:
        return f"JobExecutionResult(job_name={self._job_name!r}, job_id={self._job_id})"


class JobStatus(enum.Enum):
    """The states of a Flink job (fs-compat jobs run to their end in ``execute()``)."""

    CREATED = 0
    RUNNING = 1
    FAILING = 2
    FAILED = 3
    CANCELLING = 4
    CANCELED = 5
    FINISHED = 6
    RESTARTING = 7
    SUSPENDED = 8
    RECONCILING = 9

    def is_globally_terminal_state(self) -> bool:
        """FAILED, CANCELED or FINISHED: the job will not run again."""
        return self in (JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED)

    def is_terminal_state(self) -> bool:
        """A globally terminal state, or SUSPENDED."""
        return self.is_globally_terminal_state() or self is JobStatus.SUSPENDED


class InputDependencyConstraint(enum.Enum):
    """When a batch consumer may be scheduled (accepted; Spark schedules its stages)."""

    ANY = 0
    ALL = 1


_ASYNC = "execute_async is not supported: execute() runs the job to its end and returns its result"


class JobClient:
    """A running job's handle (``execute_async``, not supported): raises NotImplementedError
    when made."""

    def __init__(self, j_job_client: Any = None) -> None:
        raise NotImplementedError(f"JobClient: {_ASYNC}")


class CompletableFuture:
    """A JobClient's future (not supported): raises NotImplementedError when made."""

    def __init__(self, j_completable_future: Any = None, py_class: Any = None) -> None:
        raise NotImplementedError(f"CompletableFuture: {_ASYNC}")


def _millis(delay: int | datetime.timedelta) -> int:
    if isinstance(delay, datetime.timedelta):
        return int(delay.total_seconds() * 1000)
    if isinstance(delay, int):
        return delay
    raise TypeError(f"the delay must be an int (ms) or a datetime.timedelta, got {type(delay).__name__}")


class RestartStrategyConfiguration:
    """How a failed job restarts (accepted and kept: Spark retries failed tasks,
    ``spark.task.maxFailures``, and a streaming query restarts from its checkpoint)."""

    def __init__(self, description: str = "") -> None:
        self._description = description

    def get_description(self) -> str:
        """What the strategy does."""
        return self._description


class RestartStrategies:
    """Builds RestartStrategyConfigurations (accepted and kept, see RestartStrategyConfiguration)."""

    class NoRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Never restart."""

        def __init__(self) -> None:
            super().__init__("Restart deactivated.")

    class FallbackRestartStrategyConfiguration(RestartStrategyConfiguration):
        """The cluster's strategy."""

        def __init__(self) -> None:
            super().__init__("Cluster level default restart strategy")

    class FixedDelayRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Restart up to ``restart_attempts`` times, ``delay_between_attempts_interval`` apart."""

        def __init__(
            self, restart_attempts: int, delay_between_attempts_interval: int | datetime.timedelta
        ) -> None:
            self._attempts = restart_attempts
            self._delay = _millis(delay_between_attempts_interval)
            super().__init__(
                f"Restart with fixed delay ({self._delay} ms). #{restart_attempts} restart attempts."
            )

        def get_restart_attempts(self) -> int:
            """The number of attempts."""
            return self._attempts

        def get_delay_between_attempts_interval(self) -> datetime.timedelta:
            """The delay between attempts."""
            return datetime.timedelta(milliseconds=self._delay)

    class FailureRateRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Restart unless ``max_failure_rate`` failures happen within ``failure_interval``."""

        def __init__(
            self,
            max_failure_rate: int,
            failure_interval: int | datetime.timedelta,
            delay_between_attempts_interval: int | datetime.timedelta,
        ) -> None:
            self._rate = max_failure_rate
            self._interval = _millis(failure_interval)
            self._delay = _millis(delay_between_attempts_interval)
            super().__init__(
                f"Failure rate restart with maximum of {max_failure_rate} failures within interval "
                f"{self._interval} ms and fixed delay {self._delay} ms."
            )

        def get_max_failure_rate(self) -> int:
            """The failures tolerated within the interval."""
            return self._rate

        def get_failure_interval(self) -> datetime.timedelta:
            """The interval failures are counted in."""
            return datetime.timedelta(milliseconds=self._interval)

        def get_delay_between_attempts_interval(self) -> datetime.timedelta:
            """The delay between attempts."""
            return datetime.timedelta(milliseconds=self._delay)

    @staticmethod
    def no_restart() -> RestartStrategyConfiguration:
        """Never restart."""
        return RestartStrategies.NoRestartStrategyConfiguration()

    @staticmethod
    def fall_back_restart() -> RestartStrategyConfiguration:
        """The cluster's strategy."""
        return RestartStrategies.FallbackRestartStrategyConfiguration()

    @staticmethod
    def fixed_delay_restart(
        restart_attempts: int, delay_between_attempts: int | datetime.timedelta
    ) -> RestartStrategyConfiguration:
        """Restart up to ``restart_attempts`` times, ``delay_between_attempts`` (ms) apart."""
        return RestartStrategies.FixedDelayRestartStrategyConfiguration(
            restart_attempts, delay_between_attempts
        )

    @staticmethod
    def failure_rate_restart(
        failure_rate: int,
        failure_interval: int | datetime.timedelta,
        delay_interval: int | datetime.timedelta,
    ) -> RestartStrategyConfiguration:
        """Restart unless ``failure_rate`` failures happen within ``failure_interval``."""
        return RestartStrategies.FailureRateRestartStrategyConfiguration(
            failure_rate, failure_interval, delay_interval
        )


class ConfigOption:
    """A configuration key with its default value (``ConfigOptions.key(...)``)."""

    def __init__(self, key: str, default_value: Any = None, type_name: str = "string") -> None:
        self._key = key
        self._default = default_value
        self._type = type_name

    def key(self) -> str:
        """The key."""
        return self._key

    def default_value(self) -> Any:
        """The default value (None when there is none)."""
        return self._default

    def has_default_value(self) -> bool:
        """Whether there is a default value."""
        return self._default is not None

    def __repr__(self) -> str:
        return f"Key: '{self._key}' , default: {self._default}"


class ConfigOptions:
    """Builds ConfigOptions: ``ConfigOptions.key("k").int_type().default_value(1)``."""

    class TypedConfigOptionBuilder:
        """A typed option builder."""

        def __init__(self, key: str, type_name: str) -> None:
            self._key = key
            self._type = type_name

        def default_value(self, value: Any) -> ConfigOption:
            """The option with a default value."""
            return ConfigOption(self._key, value, self._type)

        def no_default_value(self) -> ConfigOption:
            """The option without a default value."""
            return ConfigOption(self._key, None, self._type)

    class OptionBuilder:
        """An option builder: pick the value type."""

        def __init__(self, key: str) -> None:
            self._key = key

        def _typed(self, type_name: str) -> ConfigOptions.TypedConfigOptionBuilder:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, type_name)

        def boolean_type(self) -> ConfigOptions.TypedConfigOptionBuilder:
            """Boolean values."""
            return self._typed("boolean")

        def int_type(self) -> ConfigOptions.TypedConfigOptionBuilder:
            """Integer values."""
            return self._typed("int")

        def long_type(self) -> ConfigOptions.TypedConfigOptionBuilder:
            """Long values."""
            return self._typed("long")

        def float_type(self) -> ConfigOptions.TypedConfigOptionBuilder:
            """Float values."""
            return self._typed("float")

        def double_type(self) -> ConfigOptions.TypedConfigOptionBuilder:
            """Double values."""
            return self._typed("double")

        def string_type(self) -> ConfigOptions.TypedConfigOptionBuilder:
            """String values."""
            return self._typed("string")

    @staticmethod
    def key(key: str) -> ConfigOptions.OptionBuilder:
        """A builder of the option ``key``."""
        return ConfigOptions.OptionBuilder(key)


class TypeSerializer(abc.ABC):
    """Turns values into bytes and back (PyFlink's serializer interface; codecs do this here,
    chosen by TypeInformation)."""

    @abc.abstractmethod
    def serialize(self, element: Any, stream: Any) -> None:
        """Write ``element`` to ``stream``."""

    @abc.abstractmethod
    def deserialize(self, stream: Any) -> Any:
        """Read one element from ``stream``."""


class AssignerWithPeriodicWatermarksWrapper:
    """A Java watermark assigner wrapper (PyFlink internals): raises NotImplementedError when
    made; use ``WatermarkStrategy``."""

    def __init__(self, j_assigner_with_periodic_watermarks: Any = None) -> None:
        raise NotImplementedError(
            "AssignerWithPeriodicWatermarksWrapper wraps a Java object; use WatermarkStrategy"
        )
