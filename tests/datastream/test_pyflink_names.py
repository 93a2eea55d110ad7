"""PyFlink 2.3's public names of ``pyflink.datastream`` and ``pyflink.common`` import from fs-compat;
the scheduling, checkpointing and state-backend ones are built and checked as in PyFlink 2.3
(defaults and messages compared with ``apache-flink==2.3.0``) and kept without effect on results."""

from __future__ import annotations

import importlib

import pytest

import fs_compat.common as common
import fs_compat.datastream as datastream
from fs_compat.common import Configuration
from fs_compat.datastream import (
    CheckpointingMode,
    EmbeddedRocksDBStateBackend,
    ExternalizedCheckpointRetention,
    FileSystemCheckpointStorage,
    JobManagerCheckpointStorage,
    MemorySize,
    PredefinedOptions,
    SlotSharingGroup,
    SourceFunction,
    StreamExecutionEnvironment,
)

#: ``pyflink.datastream.__all__`` of apache-flink 2.3.0, but the async names (not ported).
DATASTREAM_2_3 = [
    "AggregateFunction", "BroadcastConnectedStream", "BroadcastProcessFunction", "BroadcastStream",
    "CheckpointConfig", "CheckpointStorage", "CheckpointingMode", "CoFlatMapFunction", "CoMapFunction",
    "CoProcessFunction", "ConnectedStreams", "CountWindow", "CustomCheckpointStorage", "CustomStateBackend",
    "DataStream", "DataStreamSink", "EmbeddedRocksDBStateBackend", "ExternalizedCheckpointRetention",
    "FileSystemCheckpointStorage", "FilterFunction", "FlatMapFunction", "GlobalWindow", "HashMapStateBackend",
    "JobManagerCheckpointStorage", "KeySelector", "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction",
    "KeyedProcessFunction", "KeyedStream", "MapFunction", "MemorySize", "MergingWindowAssigner", "OutputTag",
    "Partitioner", "PredefinedOptions", "ProcessFunction", "ProcessWindowFunction", "ReduceFunction",
    "RuntimeContext", "RuntimeExecutionMode", "SinkFunction", "SlotSharingGroup", "SourceFunction",
    "StateBackend", "StreamExecutionEnvironment", "TimeDomain", "TimeWindow", "TimerService", "Trigger",
    "TriggerResult", "Window", "WindowAssigner", "WindowFunction", "WindowedStream",
]  # fmt: skip


@pytest.mark.parametrize("name", DATASTREAM_2_3)
def test_every_pyflink_datastream_name_imports(name: str) -> None:
    assert hasattr(datastream, name)


@pytest.mark.parametrize(
    "module",
    [
        "checkpoint_config",
        "checkpoint_storage",
        "checkpointing_mode",
        "externalized_checkpoint_retention",
        "slot_sharing_group",
        "state_backend",
        "connectors.base",
        "connectors.file_system",
        "connectors.kafka",
        "connectors.number_seq",
        "formats.csv",
        "formats.json",
    ],
)
def test_pyflink_datastream_modules_import(module: str) -> None:
    importlib.import_module(f"fs_compat.datastream.{module}")


@pytest.mark.parametrize(
    "name",
    ["ByteArraySchema", "DeserializationSchema", "Encoder", "SerializationSchema", "SimpleStringSchema"],
)
def test_serialization_names_import_from_common(name: str) -> None:
    assert hasattr(common, name)


def test_slot_sharing_groups_are_checked_and_kept() -> None:
    with pytest.raises(ValueError, match="The cpu cores and task heap memory are required"):
        SlotSharingGroup.builder("g").set_cpu_cores(1.0).build()
    with pytest.raises(ValueError, match="The cpu cores should be positive"):
        SlotSharingGroup.builder("g").set_cpu_cores(0)
    group = (
        SlotSharingGroup.builder("g")
        .set_cpu_cores(1.0)
        .set_task_heap_memory(MemorySize.of_mebi_bytes(100))
        .set_external_resource("gpu", 1.0)
        .build()
    )
    assert group.get_task_off_heap_memory() == MemorySize(bytes_size=0)
    assert str(group.get_task_off_heap_memory()) == "0 bytes"
    assert group.get_external_resources() == {"gpu": 1.0}
    assert (
        group
        == SlotSharingGroup.builder("g")
        .set_cpu_cores(1)
        .set_task_heap_memory_mb(100)
        .set_external_resource("gpu", 1)
        .build()
    )
    assert SlotSharingGroup.builder("plain").build().get_cpu_cores() is None
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "local")
    )
    assert env.register_slot_sharing_group(group) is env
    ds = env.from_collection([1, 2]).map(lambda v: v + 1).slot_sharing_group(group).slot_sharing_group("name")
    assert ds.execute_and_collect(limit=5) == [2, 3]


def test_checkpoint_config_defaults_and_checks_are_flinks() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    config = env.get_checkpoint_config()
    assert (config.is_checkpointing_enabled(), config.get_checkpoint_interval()) == (False, -1)
    assert config.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE  # off: Flink 2 says so
    assert (config.get_checkpoint_timeout(), config.get_max_concurrent_checkpoints()) == (600_000, 1)
    assert (
        config.get_externalized_checkpoint_retention()
        is ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS
    )
    assert config.is_fail_on_checkpointing_errors() and not config.is_unaligned_checkpoints_enabled()
    assert env.enable_checkpointing(1000) is env
    assert (env.get_checkpoint_interval(), env.get_checkpointing_mode()) == (
        1000,
        CheckpointingMode.EXACTLY_ONCE,
    )
    env.enable_checkpointing(2000, CheckpointingMode.AT_LEAST_ONCE)
    assert env.get_checkpointing_consistency_mode() is CheckpointingMode.AT_LEAST_ONCE
    for call, message in [
        (
            lambda: config.set_checkpoint_interval(5),
            "Checkpoint interval must be larger than or equal to 10 ms",
        ),
        (
            lambda: config.set_checkpoint_timeout(0),
            "Checkpoint timeout must be larger than or equal to 10 ms",
        ),
        (lambda: config.set_max_concurrent_checkpoints(0), "must be at least one"),
        (lambda: config.set_min_pause_between_checkpoints(-1), "Pause value must be zero or positive"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


def test_state_backends_and_storages_keep_their_settings() -> None:
    rocks = EmbeddedRocksDBStateBackend(True)
    assert rocks.is_incremental_checkpoints_enabled()
    assert (rocks.get_predefined_options(), rocks.get_number_of_transfer_threads()) == (
        PredefinedOptions.DEFAULT,
        4,
    )
    assert not EmbeddedRocksDBStateBackend().is_incremental_checkpoints_enabled()
    storage = FileSystemCheckpointStorage("file:///tmp/ck")
    assert (storage.get_checkpoint_path(), storage.get_savepoint_path()) == ("file:/tmp/ck", None)
    assert (storage.get_min_file_size_threshold(), storage.get_write_buffer_size()) == (20480, 4096)
    memory = JobManagerCheckpointStorage()
    assert (memory.get_checkpoint_path(), memory.get_max_state_size()) == (None, 5 * 1024 * 1024)


def test_java_only_names_raise_when_used_naming_the_alternative() -> None:
    with pytest.raises(NotImplementedError, match=r"env\.from_source\(FileSource"):
        SourceFunction("org.example.MySource")
    with pytest.raises(NotImplementedError, match="no JVM"):
        datastream.CustomStateBackend(object())


#: ``pyflink.common.__all__`` of apache-flink 2.3.0.
COMMON_2_3 = [
    "AssignerWithPeriodicWatermarksWrapper", "ByteArraySchema", "CompletableFuture", "ConfigOption",
    "ConfigOptions", "Configuration", "DeserializationSchema", "Duration", "Encoder", "ExecutionConfig",
    "InputDependencyConstraint", "Instant", "JobClient", "JobExecutionResult", "JobID", "JobStatus",
    "RestartStrategies", "RestartStrategyConfiguration", "Row", "RowKind", "SerializationSchema",
    "SimpleStringSchema", "Time", "TypeInformation", "TypeSerializer", "Types", "WatermarkStrategy",
]  # fmt: skip


@pytest.mark.parametrize("name", COMMON_2_3)
def test_every_pyflink_common_name_imports(name: str) -> None:
    assert hasattr(common, name)


def test_job_level_names_of_common() -> None:
    from fs_compat.common import ConfigOptions, JobClient, JobStatus, RestartStrategies

    terminal = {s.name for s in JobStatus if s.is_terminal_state()}
    assert terminal == {"FAILED", "CANCELED", "FINISHED", "SUSPENDED"}
    assert not JobStatus.SUSPENDED.is_globally_terminal_state()
    fixed = RestartStrategies.fixed_delay_restart(3, 10_000)
    assert fixed.get_description() == "Restart with fixed delay (10000 ms). #3 restart attempts."
    option = ConfigOptions.key("my.key").int_type().default_value(5)
    assert (option.key(), option.default_value(), option.has_default_value()) == ("my.key", 5, True)
    with pytest.raises(NotImplementedError, match=r"execute\(\) runs the job to its end"):
        JobClient(object())
    assert common.ExecutionConfig is datastream.ExecutionConfig
    assert common.JobExecutionResult is datastream.JobExecutionResult


def test_execution_config_keeps_pyflinks_settings_with_their_defaults() -> None:
    config = StreamExecutionEnvironment.get_execution_environment().get_config()
    assert (config.is_closure_cleaner_enabled(), config.is_object_reuse_enabled()) == (True, False)
    assert (config.get_task_cancellation_interval(), config.get_task_cancellation_timeout()) == (
        30_000,
        180_000,
    )
    assert config.enable_object_reuse() is config and config.is_object_reuse_enabled()
    assert config.get_latency_tracking_interval() == 0
    assert config.has_auto_generated_uids_enabled() and not config.is_use_snapshot_compression()
    assert (common.ExecutionConfig.PARALLELISM_DEFAULT, common.ExecutionConfig.PARALLELISM_UNKNOWN) == (
        -1,
        -2,
    )
