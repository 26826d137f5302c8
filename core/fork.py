"""Cheap forks of the engine's state, for ``callscope check``.

``check`` finishes a copy of the whole pipeline at every frame boundary of a session (see
:mod:`.check`), so a fork is on its hot path. ``copy.copy`` and ``copy.deepcopy`` go through
``__reduce_ex__`` for every object (~5-12 us each); the engine's objects instead say how they
fork: lists and dicts they append to are copied; events, fragments, strings and parsed wire
payloads are shared. Nothing changes those after they are made (payloads included: decisions'
arguments, usage values and records' start inputs are only read), which is what makes sharing safe.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

_T = TypeVar("_T")


def forked(obj: _T, memo: dict[int, Any]) -> _T:
    """``copy.deepcopy(obj, memo)`` for an object whose class says how it forks
    (``__deepcopy__``), called directly: ``copy.deepcopy``'s dispatch and keep-alive list cost
    more than most of these forks; anything else goes to ``copy.deepcopy``. The memo still
    makes an object two tables share one copy; nothing needs keeping alive, as the original
    being forked holds every object seen."""
    deep = getattr(type(obj), "__deepcopy__", None)
    if deep is None:  # (None, an atom, a plain container)
        return copy.deepcopy(obj, memo)
    twin = memo.get(id(obj))
    if twin is None:
        twin = deep(obj, memo)
        memo[id(obj)] = twin
    return twin  # type: ignore[no-any-return]


def shallow_copy(obj: _T) -> _T:
    """``copy.copy`` of an object with a ``__dict__``, without the ``__reduce_ex__`` round trip
    (the dict copied whole and set, half the cost of updating the new object's own)."""
    twin = object.__new__(type(obj))
    twin.__dict__ = obj.__dict__.copy()
    return twin


class Record:
    """Base of a slotted dataclass whose fields are atoms or parsed payload values that nothing
    changes after parsing (a protocol reader's per-call records): its deep copy is a
    field-by-field copy, the payloads shared. ``copy.deepcopy`` still keeps its memo, so a
    record that two tables share stays shared in the copy."""

    __slots__: tuple[str, ...] = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        cls = type(self)
        twin = object.__new__(cls)
        for name in cls.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin
