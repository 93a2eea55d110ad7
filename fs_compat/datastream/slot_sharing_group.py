"""PyFlink's ``pyflink.datastream.slot_sharing_group``: ``SlotSharingGroup`` and ``MemorySize``.

Slot sharing groups are Flink's scheduling hints: which steps may share a task slot, and the
resources that slot asks for. Spark places tasks itself (size executors with ``spark.*``
settings), so here a group is a stored, no-op resource hint: it is built and checked as in
PyFlink, ``ds.slot_sharing_group(group)`` and ``env.register_slot_sharing_group(group)`` accept
it, and results never depend on it.

>>> group = (
...     SlotSharingGroup.builder("heavy")
...     .set_cpu_cores(1.0)
...     .set_task_heap_memory_mb(100)
...     .build()
... )
>>> group.get_name(), group.get_cpu_cores(), group.get_task_heap_memory().get_mebi_bytes()
('heavy', 1.0, 100)
>>> group.get_managed_memory()
MemorySize(0)
"""

from __future__ import annotations

from typing import Any

__all__ = ["MemorySize", "SlotSharingGroup"]

_UNITS = (("tb", 1 << 40), ("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10))


class MemorySize:
    """A number of bytes, viewable in different units.

    >>> MemorySize.of_mebi_bytes(3).get_kibi_bytes()
    3072
    >>> str(MemorySize.of_mebi_bytes(2)), str(MemorySize(bytes_size=1000))
    ('2 mb', '1000 bytes')
    """

    def __init__(self, j_memory_size: Any = None, bytes_size: int | None = None) -> None:
        if j_memory_size is not None:
            raise NotImplementedError(
                "MemorySize(j_memory_size) wraps a Java object, and there is no JVM here; use "
                "MemorySize(bytes_size=...) or MemorySize.of_mebi_bytes(...)"
            )
        if bytes_size is None or bytes_size < 0:
            raise ValueError(f"bytes_size must be a number of bytes >= 0, got {bytes_size!r}")
        self._bytes = int(bytes_size)

    @staticmethod
    def of_mebi_bytes(mebi_bytes: int) -> MemorySize:
        """``mebi_bytes`` MiB."""
        return MemorySize(bytes_size=mebi_bytes << 20)

    def get_bytes(self) -> int:
        """The size in bytes."""
        return self._bytes

    def get_kibi_bytes(self) -> int:
        """The size in KiB (rounded down)."""
        return self._bytes >> 10

    def get_mebi_bytes(self) -> int:
        """The size in MiB (rounded down)."""
        return self._bytes >> 20

    def get_gibi_bytes(self) -> int:
        """The size in GiB (rounded down)."""
        return self._bytes >> 30

    def get_tebi_bytes(self) -> int:
        """The size in TiB (rounded down)."""
        return self._bytes >> 40

    def get_java_memory_size(self) -> Any:
        """Not supported (raises NotImplementedError): there is no JVM; use ``get_bytes()``."""
        raise NotImplementedError("MemorySize.get_java_memory_size: there is no JVM here; use get_bytes()")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemorySize) and other._bytes == self._bytes

    def __hash__(self) -> int:
        return hash(self._bytes)

    def __lt__(self, other: MemorySize) -> bool:
        if not isinstance(other, MemorySize):
            raise Exception(f"Does not support comparison with non-MemorySize {other}")
        return self._bytes < other._bytes

    def __le__(self, other: MemorySize) -> bool:
        return self == other or self < other

    def __str__(self) -> str:
        for label, size in _UNITS:
            if self._bytes and self._bytes % size == 0:
                return f"{self._bytes // size} {label}"
        return f"{self._bytes} bytes"

    def __repr__(self) -> str:
        return f"MemorySize({self._bytes})"


_REQUIRED = (
    "The cpu cores and task heap memory are required when specifying the resource of a slot "
    "sharing group. You need to explicitly configure them with positive value."
)


class SlotSharingGroup:
    """A slot sharing group's name and resources (built with ``SlotSharingGroup.builder``).
    Accepted and ignored when running: Spark schedules tasks, there are no task slots."""

    def __init__(
        self,
        name: str,
        cpu_cores: float | None = None,
        task_heap_memory: MemorySize | None = None,
        task_off_heap_memory: MemorySize | None = None,
        managed_memory: MemorySize | None = None,
        external_resources: dict[str, float] | None = None,
    ) -> None:
        self._name = name
        self._cpu_cores = cpu_cores
        self._task_heap_memory = task_heap_memory
        self._task_off_heap_memory = task_off_heap_memory
        self._managed_memory = managed_memory
        self._external_resources = dict(external_resources or {})

    def get_name(self) -> str:
        """The group's name."""
        return self._name

    def get_managed_memory(self) -> MemorySize | None:
        """The managed memory asked for; None when the group names no resources."""
        return self._managed_memory

    def get_task_heap_memory(self) -> MemorySize | None:
        """The task heap memory asked for; None when the group names no resources."""
        return self._task_heap_memory

    def get_task_off_heap_memory(self) -> MemorySize | None:
        """The task off-heap memory asked for; None when the group names no resources."""
        return self._task_off_heap_memory

    def get_cpu_cores(self) -> float | None:
        """The CPU cores asked for; None when the group names no resources."""
        return self._cpu_cores

    def get_external_resources(self) -> dict[str, float]:
        """The external resources asked for (name -> amount)."""
        return dict(self._external_resources)

    def get_java_slot_sharing_group(self) -> Any:
        """Not supported (raises NotImplementedError): there is no JVM."""
        raise NotImplementedError("SlotSharingGroup.get_java_slot_sharing_group: there is no JVM here")

    @staticmethod
    def builder(name: str) -> SlotSharingGroup.Builder:
        """A builder of a group named ``name``."""
        return SlotSharingGroup.Builder(name)

    def _key(self) -> tuple[Any, ...]:
        return (
            self._name,
            self._cpu_cores,
            self._task_heap_memory,
            self._task_off_heap_memory,
            self._managed_memory,
            tuple(sorted(self._external_resources.items())),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SlotSharingGroup) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"SlotSharingGroup({self._name!r})"

    class Builder:
        """Builds a SlotSharingGroup; every setter returns the builder. Naming any resource
        requires positive CPU cores and task heap memory (``build`` checks, as Flink does)."""

        def __init__(self, name: str) -> None:
            self._name = name
            self._cpu_cores: float | None = None
            self._heap: MemorySize | None = None
            self._off_heap: MemorySize | None = None
            self._managed: MemorySize | None = None
            self._external: dict[str, float] = {}

        def set_cpu_cores(self, cpu_cores: float) -> SlotSharingGroup.Builder:
            """The CPU cores (> 0)."""
            if cpu_cores <= 0:
                raise ValueError("The cpu cores should be positive.")
            self._cpu_cores = float(cpu_cores)
            return self

        def set_task_heap_memory(self, task_heap_memory: MemorySize) -> SlotSharingGroup.Builder:
            """The task heap memory (> 0)."""
            if task_heap_memory.get_bytes() <= 0:
                raise ValueError("The task heap memory should be positive.")
            self._heap = task_heap_memory
            return self

        def set_task_heap_memory_mb(self, task_heap_memory_mb: int) -> SlotSharingGroup.Builder:
            """The task heap memory in MiB (> 0)."""
            return self.set_task_heap_memory(MemorySize.of_mebi_bytes(task_heap_memory_mb))

        def set_task_off_heap_memory(self, task_off_heap_memory: MemorySize) -> SlotSharingGroup.Builder:
            """The task off-heap memory."""
            self._off_heap = task_off_heap_memory
            return self

        def set_task_off_heap_memory_mb(self, task_off_heap_memory_mb: int) -> SlotSharingGroup.Builder:
            """The task off-heap memory in MiB."""
            return self.set_task_off_heap_memory(MemorySize.of_mebi_bytes(task_off_heap_memory_mb))

        def set_managed_memory(self, managed_memory: MemorySize) -> SlotSharingGroup.Builder:
            """The managed memory."""
            self._managed = managed_memory
            return self

        def set_managed_memory_mb(self, managed_memory_mb: int) -> SlotSharingGroup.Builder:
            """The managed memory in MiB."""
            return self.set_managed_memory(MemorySize.of_mebi_bytes(managed_memory_mb))

        def set_external_resource(self, name: str, value: float) -> SlotSharingGroup.Builder:
            """An external resource (replaces one of the same name)."""
            self._external[name] = float(value)
            return self

        def build(self) -> SlotSharingGroup:
            """The group; ValueError when resources are named without CPU cores and heap memory."""
            if self._cpu_cores is not None and self._heap is not None:
                zero = MemorySize(bytes_size=0)
                return SlotSharingGroup(
                    self._name,
                    self._cpu_cores,
                    self._heap,
                    self._off_heap or zero,
                    self._managed or zero,
                    self._external,
                )
            named = (self._cpu_cores, self._heap, self._off_heap, self._managed)
            if any(v is not None for v in named) or self._external:
                raise ValueError(_REQUIRED)
            return SlotSharingGroup(self._name)
