"""A streaming JSON prefix checker: the draft status of argument text, fragment by fragment.

The SDKs re-parse the whole argument buffer after every delta (quadratic in its length). This
checker keeps a tiny state (a stack of open containers and the token in progress) and resumes
where the previous fragment stopped, so each fragment costs in proportion to its own length.
String bodies, which are most of real argument text, are skipped with one regex search.

It answers one question at any moment: what is the text received so far?

* ``empty``: nothing but whitespace yet;
* ``incomplete``: a valid prefix of some JSON text, not yet a whole value;
* ``complete``: a whole JSON value (strict RFC 8259) would parse now, as the gate parses it
  (orjson: a number must fit a double, so ``1E310`` or a 400-digit integer is refused);
* ``invalid``: no continuation can make it valid any more (the offset says where).

It is an indicator for the panes, never the gate: the gate always runs the strict parser on the
whole text once the turn has ended.
"""

from __future__ import annotations

import math
import re
from enum import Enum, StrEnum
from typing import Any

import orjson
from msgspec import Struct

from . import exact_json
from .fork import shallow_copy

_WS = re.compile(r"[ \t\n\r]*")
_STRING_STOP = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')
"""What ends the plain run of a string body: its quote, an escape, a control character, or a
raw surrogate code point (which orjson refuses, paired or not: it cannot be UTF-8)."""
_string_stop = _STRING_STOP.search
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]*")
_NUMBER_FULL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\Z")
_NUMBER_PREFIX = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.(?:[0-9]+(?:[eE](?:[-+]?[0-9]*)?)?)?|[eE](?:[-+]?[0-9]*)?)?)?\Z"
)


def _fits_double(number: str) -> bool:
    """Whether a well-formed JSON number is finite as a double: orjson reads every number as a
    64-bit integer or a double and refuses one that overflows to infinity (``1E310``, ``-1e400``,
    a 400-digit integer), though RFC 8259's grammar allows it. Checked when the number ends
    (an exponent still to come can bring 400 digits back into range: ``1000…0e-200``)."""
    return math.isfinite(float(number))


_LOW_DUE = 5
"""``_escape`` after a high surrogate escape (``\\ud800``): a backslash must come next."""

_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = frozenset('"\\/bfnrt')
_LITERALS = ("true", "false", "null")

NOT_READ: Any = object()
"""What :meth:`JsonPrefixChecker.read_whole` returns for a text it walked rather than parsed."""

MAX_DEPTH = 512
"""Nesting deeper than this is reported invalid (orjson itself stops at 1024)."""


def _nesting(value: Any) -> int:
    """How deep containers nest in a parsed JSON container (``[]`` is 1, ``[[1]]`` 2), level by
    level rather than by recursion: orjson parses up to 1024 levels."""
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [item for container in level
                 for item in (container.values() if type(container) is dict else container)
                 if type(item) is dict or type(item) is list]
    return depth


class Draft(StrEnum):
    EMPTY = "empty"
    INCOMPLETE = "incomplete"
    COMPLETE = "complete"
    INVALID = "invalid"


_EMPTY, _INCOMPLETE, _COMPLETE, _INVALID = Draft.EMPTY, Draft.INCOMPLETE, Draft.COMPLETE, Draft.INVALID
"""The members as module constants: an enum's attribute lookup costs more than the fast path
of :meth:`JsonPrefixChecker.feed` it ends."""


class _Expect(Enum):
    VALUE = "a value"
    FIRST_KEY = "a key or }"
    KEY = "a key"
    COLON = ":"
    OBJ_NEXT = ", or }"
    FIRST_ITEM = "a value or ]"
    ARR_NEXT = ", or ]"
    END = "the end of the text"


_VALUE, _FIRST_KEY, _KEY, _COLON = _Expect.VALUE, _Expect.FIRST_KEY, _Expect.KEY, _Expect.COLON
_OBJ_NEXT, _FIRST_ITEM, _ARR_NEXT, _END = _Expect.OBJ_NEXT, _Expect.FIRST_ITEM, _Expect.ARR_NEXT, _Expect.END
"""The states as module constants (read per character of the machine: cheaper than the enum's
attribute lookup)."""

# What may follow the end of a value, by enclosing container (h11-style table, not an if-chain).
_AFTER_VALUE = {None: _END, "{": _OBJ_NEXT, "[": _ARR_NEXT}


class DraftError(Struct, frozen=True):
    offset: int
    """Character offset in the argument text where it stopped being a valid prefix."""
    message: str


class JsonPrefixChecker:
    """Feed argument text fragments; read :attr:`status` at any time."""

    def __init__(self) -> None:
        self._stack: list[str] = []
        self._expect = _VALUE
        self._offset = 0  # characters consumed so far
        self._seen_value = False
        self._token: str | None = None  # "string", "number", "literal"
        self._is_key = False
        # -1: no escape; 0: after a backslash; 1..4: hex digits still due; _LOW_DUE: a high
        # surrogate escape was read, its low half must follow (as orjson requires)
        self._escape = -1
        self._hex = ""  # the digits of the \u escape being read
        self._high = False  # the \u escape being read must be a low surrogate
        self._number = ""
        self._literal = ""
        self._token_start = 0  # where the number or literal being read began (in the text)
        self.error: DraftError | None = None
        self.max_depth = 0
        """The deepest nesting seen so far (the gate refuses past its limit)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> JsonPrefixChecker:
        """A fork (``callscope check`` copies the turn at every frame boundary): the nesting
        stack is the only mutable field; the rest are strings, numbers, enums and a frozen
        error, shared."""
        twin = shallow_copy(self)
        twin._stack = list(self._stack)
        return twin

    @property
    def status(self) -> Draft:
        if self.error is not None:
            return _INVALID
        if self._expect is _END:
            return _COMPLETE
        if self._token == "number" and not self._stack and _NUMBER_FULL.match(self._number) \
                and _fits_double(self._number):
            return _COMPLETE  # a bare top-level number parses as soon as it is well formed
        if not self._seen_value and self._token is None:
            return _EMPTY
        return _INCOMPLETE

    @property
    def depth(self) -> int:
        return len(self._stack)

    def feed(self, text: str) -> Draft:
        if (self._token == "string" and self._escape < 0 and self.error is None
                and _string_stop(text) is None):
            # Most fragments lie inside a string and hold no quote, backslash or control
            # character: they change nothing but the offset, and the draft stays incomplete.
            self._offset += len(text)
            return _INCOMPLETE
        if self.error is None:
            self._consume(text)
        self._offset += len(text)
        return self.status

    def read_whole(self, text: str, parsed: Any = None) -> tuple[Draft, Any]:
        """:meth:`feed` of a whole argument text to a fresh checker (a provider that sends
        argument objects: Gemini's are serialized whole, a megabyte at a time). An object or
        array that the gate's parser reads is complete, so its state is set at once: what
        walking it would leave (nothing open, only the end may follow, the offset past it and
        the deepest nesting), for what is read next. Anything else is walked, so the rules for
        every other text stay in :meth:`feed`. tests/test_jsonprefix.py holds the two equal.
        Returns the draft and the parse made of such a text (the gate takes it), or
        :data:`NOT_READ`. ``parsed``, when given, is an object or array whose orjson
        serialization ``text`` is: its parse, exactly, so it is taken for one."""
        if self._offset or self._seen_value or self._token is not None:
            return self.feed(text), NOT_READ
        if parsed is not None:
            value = parsed
        else:
            try:
                value = exact_json.loads(text)
            except orjson.JSONDecodeError:
                return self.feed(text), NOT_READ
        depth = _nesting(value) if type(value) is dict or type(value) is list else 0
        if not 0 < depth <= MAX_DEPTH:  # (a scalar, or nested deeper than the checker allows)
            return self.feed(text), NOT_READ
        self._seen_value = True
        self._expect = _END
        self._offset = len(text)
        self.max_depth = depth
        return Draft.COMPLETE, value

    # -- the machine -------------------------------------------------------------------------

    def _fail(self, at: int, message: str) -> None:
        if self.error is None:
            self.error = DraftError(self._offset + at, message)

    def _consume(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n and self.error is None:
            token = self._token
            if token == "string":
                i = self._string(text, i)
            elif token == "number":
                i = self._number_part(text, i)
            elif token == "literal":
                i = self._literal_part(text, i)
            else:
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                if i < n:
                    i = self._structural(text, i)

    def _structural(self, text: str, i: int) -> int:
        """Handle the character at ``i`` outside any token; return where to go on."""
        c = text[i]
        expect = self._expect
        if expect is _END:
            self._fail(i, f"data after the JSON value: {c!r}")
        elif c == '"' and expect in (_FIRST_KEY, _KEY):
            self._token, self._is_key = "string", True
        elif expect in (_VALUE, _FIRST_ITEM):
            if c == "]" and expect is _FIRST_ITEM:
                self._close()
            elif self._value_start(i, c):
                return i  # numbers and literals are read by their token handlers
        elif c == "}" and expect in (_FIRST_KEY, _OBJ_NEXT):
            self._close()
        elif c == "]" and expect is _ARR_NEXT:
            self._close()
        elif c == ":" and expect is _COLON:
            self._expect = _VALUE
        elif c == "," and expect is _OBJ_NEXT:
            self._expect = _KEY
        elif c == "," and expect is _ARR_NEXT:
            self._expect = _VALUE
        else:
            self._fail(i, f"expected {expect.value}, got {c!r}")
        return i + 1

    def _value_start(self, i: int, c: str) -> bool:
        """Start a value; True when the character belongs to a number or literal token."""
        self._seen_value = True
        if c in "{[":
            if len(self._stack) >= MAX_DEPTH:
                self._fail(i, f"nesting deeper than {MAX_DEPTH}")
                return False
            self._stack.append(c)
            self.max_depth = max(self.max_depth, len(self._stack))
            self._expect = _FIRST_KEY if c == "{" else _FIRST_ITEM
        elif c == '"':
            self._token, self._is_key = "string", False
        elif c == "-" or c.isdigit() and c.isascii():
            self._token, self._number, self._token_start = "number", "", self._offset + i
            return True
        elif c in "tfn":
            self._token, self._literal, self._token_start = "literal", "", self._offset + i
            return True
        else:
            self._fail(i, f"expected {self._expect.value}, got {c!r}")
        return False

    def _close(self) -> None:
        self._stack.pop()
        self._value_done()

    def _value_done(self) -> None:
        self._token = None
        self._expect = _AFTER_VALUE[self._stack[-1] if self._stack else None]

    def _string(self, text: str, i: int) -> int:
        n = len(text)
        while i < n:
            if self._escape >= 0:
                if not self._escape_char(text[i], i):
                    return n
                i += 1
                continue
            match = _STRING_STOP.search(text, i)
            if match is None:
                return n
            i = match.start()
            c = text[i]
            if c == '"':
                if self._is_key:
                    self._token, self._expect = None, _COLON
                else:
                    self._value_done()
                return i + 1
            if c == "\\":
                self._escape = 0
                i += 1
            elif c < " ":
                self._fail(i, f"control character {c!r} inside a string")
                return n
            else:
                self._fail(i, f"a raw surrogate code point U+{ord(c):04X} inside a string")
                return n
        return n

    def _escape_char(self, c: str, i: int) -> bool:
        """One character of an escape sequence; False when it makes the text invalid."""
        escape = self._escape
        if escape == _LOW_DUE:
            if c != "\\":
                self._fail(i, "a high surrogate escape without its low half")
                return False
            self._escape = 0
        elif escape == 0:  # after a backslash
            if c == "u":
                self._escape, self._hex = 4, ""
            elif self._high:
                self._fail(i, "a high surrogate escape without its low half")
                return False
            elif c in _ESCAPES:
                self._escape = -1
            else:
                self._fail(i, f"invalid escape \\{c}")
                return False
        elif c in _HEX:
            self._hex += c
            if escape > 1:
                self._escape = escape - 1
            else:
                return self._code_point(int(self._hex, 16), i)
        else:
            self._fail(i, f"invalid \\u escape digit {c!r}")
            return False
        return True

    def _code_point(self, code: int, i: int) -> bool:
        """A ``\\uXXXX`` escape was read: surrogates must come in pairs, high then low (orjson
        refuses a lone half, as its UTF-8 output could not hold it)."""
        self._escape = -1
        if self._high:
            self._high = False
            if not 0xDC00 <= code <= 0xDFFF:
                self._fail(i, f"\\u{code:04x} where the low half of a surrogate pair was due")
                return False
        elif 0xD800 <= code <= 0xDBFF:
            self._high, self._escape = True, _LOW_DUE
        elif 0xDC00 <= code <= 0xDFFF:
            self._fail(i, f"a low surrogate escape \\u{code:04x} without its high half")
            return False
        return True

    def _number_part(self, text: str, i: int) -> int:
        end = _NUMBER_CHARS.match(text, i).end()  # type: ignore[union-attr]
        self._number += text[i:end]
        if not _NUMBER_PREFIX.match(self._number):
            # (at the number's start: where the fragment began would depend on the chunking)
            self._fail(self._token_start - self._offset, f"malformed number {self._number[:20]!r}")
            return len(text)
        if end < len(text):  # the number ended inside this fragment
            if not _NUMBER_FULL.match(self._number):
                self._fail(end, f"malformed number {self._number[:20]!r}")
                return len(text)
            if not _fits_double(self._number):
                self._fail(end, f"number out of range of a double {self._number[:20]!r}")
                return len(text)
            self._value_done()
        return end

    def _literal_part(self, text: str, i: int) -> int:
        take = text[i: i + 5 - len(self._literal)]
        word = self._literal + take
        for literal in _LITERALS:
            common = min(len(literal), len(word))
            if word[:common] == literal[:common]:
                if len(word) >= len(literal):
                    self._value_done()
                    return i + len(literal) - len(self._literal)
                self._literal = word
                return len(text)
        self._fail(self._token_start - self._offset, f"invalid literal {word!r}")
        return len(text)


def draft_status(text: str) -> Draft:
    """The status of a whole text at once (a convenience for tests and one-off checks)."""
    checker = JsonPrefixChecker()
    checker.feed(text)
    return checker.status
