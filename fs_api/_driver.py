"""FSProcessorDriver: the processor interface of FunctionStream."""

from __future__ import annotations

import abc

from ._context import Context


class FSProcessorDriver(abc.ABC):
    """A stream processor. Only ``process`` is required; every other hook defaults to a no-op
    (``check_heartbeat`` to ``True``), as the Go SDK's BaseDriver does.

    >>> class Echo(FSProcessorDriver):
    ...     def process(self, ctx: Context, source_id: int, data: bytes) -> None:
    ...         ctx.emit(data)
    >>> from fs_api.testing import LocalContext
    >>> ctx = LocalContext()
    >>> Echo().process(ctx, 0, b"hi")
    >>> ctx.emitted
    [(b'hi', 0)]
    """

    def init(self, ctx: Context, config: dict[str, str]) -> None:  # noqa: B027
        """Called once before the first record."""

    @abc.abstractmethod
    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        """Handle one record from input ``source_id``."""

    def process_watermark(self, ctx: Context, source_id: int, watermark: int) -> None:  # noqa: B027
        """Handle a watermark from input ``source_id``."""

    def take_checkpoint(self, ctx: Context, checkpoint_id: int) -> None:  # noqa: B027
        """Called when the runtime checkpoints state."""

    def check_heartbeat(self, ctx: Context) -> bool:
        """Whether the processor is healthy."""
        return True

    def close(self, ctx: Context) -> None:  # noqa: B027
        """Called once after the last record."""

    def custom(self, payload: bytes) -> bytes:
        """Answer a custom control message; empty by default."""
        return b""
