"""OutputTag: names a side output (PyFlink's ``pyflink.datastream.output_tag``)."""

from __future__ import annotations

import typing
from typing import Any, Generic

from typing_extensions import TypeVar

if typing.TYPE_CHECKING:
    from fs_compat.common import TypeInformation

_T = TypeVar("_T", default=Any)


class OutputTag(Generic[_T]):
    """A side output's name and type: ``yield tag, value`` in a process function sends ``value``
    to it; ``DataStream.get_side_output(tag)`` reads it.

    >>> OutputTag("late").tag_id
    'late'
    """

    def __init__(self, tag_id: str, type_info: TypeInformation[_T] | None = None) -> None:
        if not tag_id:
            raise ValueError("OutputTag tag_id cannot be None or empty string")
        self.tag_id = tag_id
        self.type_info = type_info

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputTag) and other.tag_id == self.tag_id

    def __hash__(self) -> int:
        return hash(self.tag_id)

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"


__all__ = ["OutputTag"]
