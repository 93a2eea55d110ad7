"""What user code prints in a Spark task of a bounded run, handed to the driver.

A Spark Python worker's standard output is not the driver's: Spark copies it to the executor's
standard error (in a local session, the driver process's). While a task of ``run_batch`` runs
(``TaskTally``, from its start to ``publish``), ``sys.stdout`` is a buffer; what the task printed
travels to the driver with its counts, and ``run_batch`` prints it there, to standard output,
after the Spark job that ran the task and before the sinks get their values. A task that fails
writes what it printed to the worker's own standard output, as it would have without the
buffer, so the lines that explain the failure are not lost; so does a task past ``LIMIT``
characters (the rest of its lines).

>>> at = start()
>>> print("in a task")
>>> take(at)
'in a task\\n'
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

#: The characters a task's buffer holds; what it prints beyond them goes to the worker's own
#: standard output (Spark's executor log), so a task printing per record cannot fill memory.
LIMIT = 4 << 20


class _Buffer(io.TextIOBase):
    """``sys.stdout`` while tasks capture: the text written since, up to ``LIMIT``; ``through``
    is the stream it replaced."""

    def __init__(self, through: TextIO) -> None:
        super().__init__()
        self.through = through
        self.parts: list[str] = []
        self.size = 0
        self.users = 0
        self.full = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.full or self.size + len(text) > LIMIT:
            self.full = True  # from here on, in order, to the worker's own stdout
            self.through.write(text)
        else:
            self.parts.append(text)
            self.size += len(text)
        return len(text)

    def flush(self) -> None:
        self.through.flush()


def start() -> int:
    """Start capturing for a task: the position its text starts at (for ``take``)."""
    buffer = sys.stdout
    if not isinstance(buffer, _Buffer):
        buffer = _Buffer(sys.stdout)
        sys.stdout = buffer
    buffer.users += 1
    return len(buffer.parts)


def take(at: int) -> str:
    """What was printed since ``at`` (``start``), taken out of the buffer; the buffer is
    removed when no task captures any more."""
    buffer = sys.stdout
    if not isinstance(buffer, _Buffer):
        return ""
    text = "".join(buffer.parts[at:])
    del buffer.parts[at:]
    buffer.size -= len(text)
    buffer.users -= 1
    buffer.full = False
    if buffer.users <= 0:
        sys.stdout = buffer.through
    return text


def release() -> None:
    """A task ended without ``take`` (it failed, or its consumer stopped early): what it and any
    other capturing task printed goes to the worker's own standard output, and the buffer is
    removed."""
    buffer = sys.stdout
    if not isinstance(buffer, _Buffer):
        return
    sys.stdout = buffer.through
    if buffer.parts:
        buffer.through.write("".join(buffer.parts))
        buffer.through.flush()
