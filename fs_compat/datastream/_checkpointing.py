"""PyFlink's checkpointing and state-backend names: built and checked as in PyFlink 2.3, kept, and
accepted without effect on results.

Flink checkpoints a job's state to restart it after a failure; here a bounded job runs to its end
(Spark retries failed tasks), and a streaming job is Spark Structured Streaming queries whose
state and source offsets live in their checkpoint location. The one setting that maps onto Spark:
a ``FileSystemCheckpointStorage`` path or ``execution.checkpointing.dir`` in the configuration is
where ``env.execute()`` checkpoints a streaming job's queries. State backends are Spark's state
store (``spark.sql.streaming.stateStore.providerClass``); the classes are accepted and ignored.
"""

from __future__ import annotations

import enum
from typing import Any

from fs_compat.common import Duration


class CheckpointingMode(enum.Enum):
    """The consistency of checkpoints: ``EXACTLY_ONCE`` or ``AT_LEAST_ONCE`` (accepted; Spark's
    streaming queries recover exactly once from their checkpoints)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


class ExternalizedCheckpointRetention(enum.Enum):
    """Whether checkpoints outlive a cancelled job (accepted; a Spark query's checkpoint location
    is kept until you delete it)."""

    DELETE_ON_CANCELLATION = 0
    RETAIN_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


class CheckpointConfig:
    """The checkpoint settings of an environment (``env.get_checkpoint_config()``): kept, with
    Flink's defaults and checks; see the module docstring for what they mean here."""

    def __init__(self, j_checkpoint_config: Any = None) -> None:
        if j_checkpoint_config is not None:
            raise NotImplementedError(
                "CheckpointConfig(j_checkpoint_config) wraps a Java object, and there is no JVM here; use "
                "env.get_checkpoint_config()"
            )
        self._interval = -1
        self._mode = CheckpointingMode.EXACTLY_ONCE
        self._timeout = 600_000
        self._min_pause = 0
        self._max_concurrent = 1
        self._tolerable_failures = 0
        self._retention = ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS
        self._unaligned = False
        self._force_unaligned = False
        self._aligned_timeout = Duration.of_millis(0)

    def is_checkpointing_enabled(self) -> bool:
        """Whether an interval was set (``env.enable_checkpointing``)."""
        return self._interval > 0

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """The mode; ``AT_LEAST_ONCE`` while checkpointing is off, as in Flink 2."""
        return self._mode if self.is_checkpointing_enabled() else CheckpointingMode.AT_LEAST_ONCE

    def set_checkpointing_mode(self, checkpointing_mode: CheckpointingMode) -> CheckpointConfig:
        """The mode (accepted)."""
        self._mode = checkpointing_mode
        return self

    def get_checkpoint_interval(self) -> int:
        """The interval in ms (-1: off)."""
        return self._interval

    def set_checkpoint_interval(self, checkpoint_interval: int) -> CheckpointConfig:
        """The interval in ms (>= 10)."""
        _check(checkpoint_interval >= 10, "Checkpoint interval must be larger than or equal to 10 ms")
        self._interval = checkpoint_interval
        return self

    def get_checkpoint_timeout(self) -> int:
        """The timeout in ms (10 minutes by default)."""
        return self._timeout

    def set_checkpoint_timeout(self, checkpoint_timeout: int) -> CheckpointConfig:
        """The timeout in ms (>= 10; accepted)."""
        _check(checkpoint_timeout >= 10, "Checkpoint timeout must be larger than or equal to 10 ms")
        self._timeout = checkpoint_timeout
        return self

    def get_min_pause_between_checkpoints(self) -> int:
        """The minimal pause in ms."""
        return self._min_pause

    def set_min_pause_between_checkpoints(self, min_pause_between_checkpoints: int) -> CheckpointConfig:
        """The minimal pause in ms (>= 0; accepted)."""
        _check(min_pause_between_checkpoints >= 0, "Pause value must be zero or positive")
        self._min_pause = min_pause_between_checkpoints
        return self

    def get_max_concurrent_checkpoints(self) -> int:
        """The maximum of concurrent checkpoints."""
        return self._max_concurrent

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> CheckpointConfig:
        """The maximum of concurrent checkpoints (>= 1; accepted)."""
        _check(
            max_concurrent_checkpoints >= 1, "The maximum number of concurrent attempts must be at least one."
        )
        self._max_concurrent = max_concurrent_checkpoints
        return self

    def is_fail_on_checkpointing_errors(self) -> bool:
        """Whether a failed checkpoint fails the job (no tolerated failures)."""
        return self._tolerable_failures == 0

    def set_fail_on_checkpointing_errors(self, fail_on_checkpointing_errors: bool) -> CheckpointConfig:
        """Fail the job on a failed checkpoint, or tolerate any number (accepted)."""
        self._tolerable_failures = 0 if fail_on_checkpointing_errors else 2**31 - 1
        return self

    def get_tolerable_checkpoint_failure_number(self) -> int:
        """How many failed checkpoints are tolerated."""
        return self._tolerable_failures

    def set_tolerable_checkpoint_failure_number(
        self, tolerable_checkpoint_failure_number: int
    ) -> CheckpointConfig:
        """How many failed checkpoints are tolerated (>= 0; accepted)."""
        _check(
            tolerable_checkpoint_failure_number >= 0,
            "The tolerable failure checkpoint number must be non-negative.",
        )
        self._tolerable_failures = tolerable_checkpoint_failure_number
        return self

    def set_externalized_checkpoint_retention(
        self, retention_mode: ExternalizedCheckpointRetention
    ) -> CheckpointConfig:
        """Whether checkpoints outlive a cancelled job (accepted)."""
        self._retention = retention_mode
        return self

    def is_externalized_checkpoints_enabled(self) -> bool:
        """Whether checkpoints outlive a cancelled job."""
        return self._retention is not ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS

    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention | None:
        """The retention mode."""
        return self._retention

    def is_unaligned_checkpoints_enabled(self) -> bool:
        """Whether unaligned checkpoints are on."""
        return self._unaligned

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> CheckpointConfig:
        """Unaligned checkpoints (accepted: Spark commits at micro-batch boundaries)."""
        self._unaligned = enabled
        return self

    def disable_unaligned_checkpoints(self) -> CheckpointConfig:
        """Unaligned checkpoints off."""
        return self.enable_unaligned_checkpoints(False)

    def set_aligned_checkpoint_timeout(self, alignment_timeout: Duration) -> CheckpointConfig:
        """The alignment timeout (accepted)."""
        self._aligned_timeout = alignment_timeout
        return self

    def get_aligned_checkpoint_timeout(self) -> Duration:
        """The alignment timeout (0 by default)."""
        return self._aligned_timeout

    def set_alignment_timeout(self, alignment_timeout: Duration) -> CheckpointConfig:
        """The alignment timeout (accepted; the deprecated name)."""
        return self.set_aligned_checkpoint_timeout(alignment_timeout)

    def get_alignment_timeout(self) -> Duration:
        """The alignment timeout (the deprecated name)."""
        return self._aligned_timeout

    def set_force_unaligned_checkpoints(self, force_unaligned_checkpoints: bool = True) -> CheckpointConfig:
        """Force unaligned checkpoints (accepted)."""
        self._force_unaligned = force_unaligned_checkpoints
        return self

    def is_force_unaligned_checkpoints(self) -> bool:
        """Whether unaligned checkpoints are forced."""
        return self._force_unaligned


def _no_java(api: str, instead: str) -> NotImplementedError:
    return NotImplementedError(f"{api} wraps a Java object, and there is no JVM here; {instead}")


class CheckpointStorage:
    """Where checkpoints go (Flink); here a streaming job's queries checkpoint to
    ``execution.checkpointing.dir``."""

    def __init__(self, j_checkpoint_storage: Any = None) -> None:
        if j_checkpoint_storage is not None:
            raise _no_java("CheckpointStorage(j_checkpoint_storage)", "use FileSystemCheckpointStorage(path)")


class JobManagerCheckpointStorage(CheckpointStorage):
    """Checkpoints in the JobManager's memory (accepted; there is no JobManager)."""

    DEFAULT_MAX_STATE_SIZE = 5 * 1024 * 1024

    def __init__(
        self,
        checkpoint_path: str | None = None,
        max_state_size: int | None = None,
        j_jobmanager_checkpoint_storage: Any = None,
    ) -> None:
        if j_jobmanager_checkpoint_storage is not None:
            raise _no_java("JobManagerCheckpointStorage(j_...)", "use JobManagerCheckpointStorage(path)")
        self._path = checkpoint_path
        self._max_state_size = self.DEFAULT_MAX_STATE_SIZE if max_state_size is None else max_state_size

    def get_checkpoint_path(self) -> str | None:
        """The path given (None by default)."""
        return self._path

    def get_max_state_size(self) -> int:
        """The largest state kept (5 MiB by default)."""
        return self._max_state_size

    def get_savepoint_path(self) -> str | None:
        """None: savepoints are Flink's."""
        return None


def _flink_path(path: str) -> str:
    """A path as Flink's ``Path`` shows it (``file:///x`` -> ``file:/x``)."""
    return "file:/" + path[len("file:///") :] if path.startswith("file:///") else path


class FileSystemCheckpointStorage(CheckpointStorage):
    """Checkpoints under ``checkpoint_path`` (accepted: a streaming job's Spark queries
    checkpoint under the configured ``execution.checkpointing.dir``, Flink's key for it)."""

    MAX_FILE_STATE_THRESHOLD = 1024 * 1024

    def __init__(
        self,
        checkpoint_path: str | None = None,
        file_state_size_threshold: int | None = None,
        write_buffer_size: int = -1,
        j_filesystem_checkpoint_storage: Any = None,
    ) -> None:
        if j_filesystem_checkpoint_storage is not None or checkpoint_path is None:
            raise ValueError("FileSystemCheckpointStorage needs a checkpoint_path")
        self._path = _flink_path(checkpoint_path)
        self._threshold = 20480 if file_state_size_threshold is None else file_state_size_threshold
        self._write_buffer_size = 4096 if write_buffer_size == -1 else write_buffer_size

    def get_checkpoint_path(self) -> str:
        """The checkpoint path."""
        return self._path

    def get_savepoint_path(self) -> str | None:
        """None: savepoints are Flink's."""
        return None

    def get_min_file_size_threshold(self) -> int:
        """The file state size threshold (20 KiB by default; accepted)."""
        return self._threshold

    def get_write_buffer_size(self) -> int:
        """The write buffer size (4 KiB by default; accepted)."""
        return self._write_buffer_size


class CustomCheckpointStorage(CheckpointStorage):
    """A Java checkpoint storage: not supported (raises NotImplementedError when made)."""

    def __init__(self, j_custom_checkpoint_storage: Any = None) -> None:
        raise _no_java(
            "CustomCheckpointStorage", "set execution.checkpointing.dir for Spark's query checkpoints"
        )


class PredefinedOptions(enum.Enum):
    """RocksDB option presets (accepted)."""

    DEFAULT = 0
    SPINNING_DISK_OPTIMIZED = 1
    SPINNING_DISK_OPTIMIZED_HIGH_MEM = 2
    FLASH_SSD_OPTIMIZED = 3


class StateBackend:
    """Where keyed state lives (Flink); here: in the process, and in Spark's state store for
    streaming queries. Accepted and ignored."""

    def __init__(self, j_state_backend: Any = None) -> None:
        if j_state_backend is not None:
            raise _no_java(
                "StateBackend(j_state_backend)", "use HashMapStateBackend() or EmbeddedRocksDBStateBackend()"
            )


class HashMapStateBackend(StateBackend):
    """State on the heap (accepted and ignored)."""

    def __init__(self, j_hashmap_state_backend: Any = None) -> None:
        super().__init__(j_hashmap_state_backend)


class EmbeddedRocksDBStateBackend(StateBackend):
    """State in RocksDB (accepted and ignored: a streaming query's state store is Spark's,
    ``spark.sql.streaming.stateStore.providerClass``); its settings are kept."""

    def __init__(
        self,
        enable_incremental_checkpointing: bool | None = None,
        j_embedded_rocks_db_state_backend: Any = None,
    ) -> None:
        super().__init__(j_embedded_rocks_db_state_backend)
        self._incremental = bool(enable_incremental_checkpointing)
        self._paths: list[str] = []
        self._predefined = PredefinedOptions.DEFAULT
        self._options: str | None = None
        self._transfer_threads = 4

    def set_db_storage_paths(self, *paths: str) -> None:
        """Where RocksDB keeps its files (accepted)."""
        self._paths = list(paths)

    def get_db_storage_paths(self) -> list[str]:
        """The storage paths given."""
        return list(self._paths)

    def is_incremental_checkpoints_enabled(self) -> bool:
        """Whether incremental checkpoints were asked for."""
        return self._incremental

    def set_predefined_options(self, options: PredefinedOptions) -> None:
        """A RocksDB preset (accepted)."""
        self._predefined = options

    def get_predefined_options(self) -> PredefinedOptions:
        """The preset (``DEFAULT``)."""
        return self._predefined

    def set_options(self, options_factory_class_name: str) -> None:
        """A Java options factory (accepted)."""
        self._options = options_factory_class_name

    def get_options(self) -> str | None:
        """The options factory given."""
        return self._options

    def get_number_of_transfer_threads(self) -> int:
        """Transfer threads (4 by default)."""
        return self._transfer_threads

    def set_number_of_transfer_threads(self, number_of_transfering_threads: int) -> None:
        """Transfer threads (accepted)."""
        self._transfer_threads = number_of_transfering_threads


class CustomStateBackend(StateBackend):
    """A Java state backend: not supported (raises NotImplementedError when made)."""

    def __init__(self, j_custom_state_backend: Any = None) -> None:
        raise _no_java("CustomStateBackend", "state lives in Spark's state store for streaming queries")
