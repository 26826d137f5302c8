"""JSONPath placement for streamed arguments: parse the paths Vertex sends and assemble the
pieces into one JSON object (pure: no events, no I/O).

:func:`parse_json_path` turns the RFC 9535 normalized-path subset into member names and
indexes; :func:`place` puts one piece's value at its path in a tree the caller owns, keeping a
streamed string as a list of fragments (:class:`StreamedString`) so that appending stays
linear; :func:`plain` turns the tree into plain JSON values once, when the call closes.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import orjson

from .base import short

_QUOTED = {"'": re.compile(r"'((?:[^'\\]|\\.)*)'", re.S),
           '"': re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)}
_REQUOTE = re.compile(r'\\(.)|"', re.S)
MAX_DEPTH = 128  # deeper paths are rejected: serializers have recursion limits (orjson 255)


class BadPath(Exception):
    """A jsonPath that cannot be parsed or placed (reported as ``bad_json_path``)."""


def parse_json_path(path: str) -> list[str | int]:
    """Parse the RFC 9535 normalized-path subset Vertex uses into member names and indexes.

    Accepted: ``$``, ``.name`` (any run of characters up to the next ``.`` or ``[``, more
    lenient than the RFC's shorthand so keys like ``foo-bar`` still place), ``[0]``,
    ``['name']`` and ``["name"]`` with JSON-style escapes. Wildcards, slices, filters,
    negative indexes and descendant segments raise :class:`BadPath`.
    """
    if not path.startswith("$"):
        raise BadPath("does not start with $")
    segments: list[str | int] = []
    i, n = 1, len(path)
    while i < n:
        if path[i] == ".":
            j = i + 1
            while j < n and path[j] not in ".[":
                j += 1
            name = path[i + 1:j]
            if not name or name == "*":
                raise BadPath(f"unsupported segment at offset {i}")
            segments.append(name)
            i = j
        elif path[i] == "[" and i + 1 < n and path[i + 1] in "'\"":
            name, i = _quoted(path, i + 1)
            if i >= n or path[i] != "]":
                raise BadPath(f"expected ] at offset {i}")
            segments.append(name)
            i += 1
        elif path[i] == "[":
            j = path.find("]", i)
            digits = path[i + 1:j] if j > 0 else ""
            if not (digits.isascii() and digits.isdigit()) or len(digits) > 9:
                raise BadPath(f"unsupported selector at offset {i}")
            segments.append(int(digits))
            i = j + 1
        else:
            raise BadPath(f"unexpected {short(path[i])} at offset {i}")
        if len(segments) > MAX_DEPTH:
            raise BadPath(f"deeper than {MAX_DEPTH} segments")
    return segments


def _quoted(path: str, start: int) -> tuple[str, int]:
    """A quoted member name starting at its quote; returns it and the offset after it."""
    match = _QUOTED[path[start]].match(path, start)
    if match is None:
        raise BadPath("unterminated quoted name")
    # Rewrite the body as a JSON string body (\' is not a JSON escape; a bare " inside single
    # quotes must be escaped) and let orjson decode the escapes: it rejects lone surrogates.
    body = _REQUOTE.sub(lambda m: ("'" if m[1] == "'" else m[0]) if m[1] else '\\"', match[1])
    try:
        return orjson.loads(f'"{body}"'), match.end()
    except orjson.JSONDecodeError:
        raise BadPath("bad escape in quoted name") from None


class StreamedString:
    """A string value being streamed: fragments kept in a list, joined once at close."""

    __slots__ = ("parts", "closed")

    def __init__(self, first: str, closed: bool) -> None:
        self.parts = [first]
        self.closed = closed


def plain(node: Any) -> Any:
    """The assembled tree as plain JSON values (dict order = first-seen key order)."""
    if isinstance(node, StreamedString):
        return "".join(node.parts)
    if isinstance(node, dict):
        return {k: plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node


def unfinished(node: Any, path: str = "$") -> str | None:
    """The path of a streamed string whose last piece said more would follow (willContinue),
    or None: such a call was cut inside that string."""
    if isinstance(node, StreamedString):
        return None if node.closed else path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(
        node, list) else ()
    for key, value in items:
        found = unfinished(value, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}")
        if found is not None:
            return found
    return None


def _slot(node: dict[str, Any] | list[Any], seg: str | int) -> tuple[bool, Any]:
    """Whether ``node[seg]`` exists, and its value; BadPath when seg cannot address node."""
    if isinstance(node, dict):
        if isinstance(seg, int):
            raise BadPath(f"index [{seg}] into an object")
        return seg in node, node.get(seg)
    if isinstance(seg, str):
        raise BadPath(f"member {short(seg, 40)} of an array")
    if seg > len(node):
        raise BadPath(f"index [{seg}] skips past the end of an array of {len(node)}")
    return seg < len(node), node[seg] if seg < len(node) else None


def _store(node: dict[str, Any] | list[Any], seg: str | int, value: Any) -> None:
    """Set ``node[seg]`` (appending at the end of an array); _slot has checked the address."""
    if isinstance(node, dict):
        node[str(seg)] = value
    elif int(seg) == len(node):
        node.append(value)
    else:
        node[int(seg)] = value


Placement = Literal["added", "appended", "reopened", "replaced"]
"""What :func:`place` did: set a new value, appended to a streamed string (``reopened``: one
whose last piece had closed it), or replaced an earlier value."""


def place(root: dict[str, Any], segments: list[str | int], value: Any, *, is_str: bool,
          will: bool) -> Placement:
    """Put one piece into ``root``, creating the objects and arrays its path needs; a string
    piece (``is_str``) at a path already holding a streamed string is appended to it, and
    ``will`` (more of this string follows) keeps that string open. Raises :class:`BadPath`,
    leaving ``root`` as it was, when the path cannot be placed."""
    if not segments:
        raise BadPath("a value cannot replace the argument object")
    node: dict[str, Any] | list[Any] = root
    created: tuple[dict[str, Any] | list[Any], str | int] | None = None
    try:
        for seg, following in zip(segments, segments[1:], strict=False):
            want: type = list if isinstance(following, int) else dict
            present, child = _slot(node, seg)
            if not present:
                child = want()
                _store(node, seg, child)
                created = created or (node, seg)
            elif not isinstance(child, want):
                raise BadPath(f"{short(seg, 40)} holds a {type(child).__name__}, "
                              f"not a {want.__name__}")
            node = child
        present, old = _slot(node, segments[-1])
    except BadPath:
        if created is not None:  # leave no empty containers behind for a rejected piece
            parent, seg = created
            parent.pop(str(seg)) if isinstance(parent, dict) else parent.pop()
        raise
    if is_str and isinstance(old, StreamedString):
        reopened = old.closed
        old.parts.append(value)
        old.closed = not will
        return "reopened" if reopened else "appended"
    _store(node, segments[-1], StreamedString(value, not will) if is_str else value)
    return "replaced" if present else "added"
