"""Helpers for building operator functions (``bytewax.operators.helpers``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["map_dict_value"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def map_dict_value(key: _K, mapper: Callable[[_V], _V]) -> Callable[[dict[_K, _V]], dict[_K, _V]]:
    """A function for ``op.map`` that replaces ``d[key]`` with ``mapper(d[key])`` in the dict it is
    given (in place) and returns the dict.

    >>> f = map_dict_value("name", str.upper)
    >>> f({"name": "ada", "email": "ada@example.org"})
    {'name': 'ADA', 'email': 'ada@example.org'}
    """

    def mapped(obj: dict[_K, _V]) -> dict[_K, _V]:
        obj[key] = mapper(obj[key])
        return obj

    return mapped
