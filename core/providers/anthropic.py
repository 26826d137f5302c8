"""Anthropic Messages streaming (``POST /v1/messages``, ``"stream": true``).

Grammar: ``message_start`` -> per content block ``content_block_start`` / ``content_block_delta``*
/ ``content_block_stop`` -> ``message_delta``+ -> ``message_stop`` (the terminal event; there is no
``[DONE]``). ``ping`` may appear anywhere; ``error`` may arrive after the 200 (PROTOCOLS.md §3).

Calls are keyed by content-block ``index``, which is shared with text and thinking blocks, so a
tool call is often ``block:1``. The ``toolu_…`` id appears only in ``content_block_start``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..events import (
    ArgumentsAppended,
    CallOpened,
    StopReported,
    UsageReported,
)
from ..frame import Frame
from ..gate.codes import Code
from ..hot_path import INT, STRING, block_shape
from .base import Handler, int_or_none, short, text_or_none
from .blocks import Block, BlockReader
from .specs.anthropic import SPEC
from .stops import report_stop

STOP_REASONS = SPEC.stop_reasons
"""stop_reason -> verdict (declared in :mod:`.specs.anthropic`)."""

CALL_BLOCKS: dict[str, str] = {
    # content block type -> CallOpened.kind. The SDK tracks tool input for exactly these block
    # types (anthropic-sdk-python PR #1558: server_tool_use deltas were once dropped); the MCP
    # connector's mcp_tool_use is run by Anthropic too, hence "server_tool".
    "tool_use": "function",
    "server_tool_use": "server_tool",
    "mcp_tool_use": "server_tool",
}

TEXT_BLOCKS: dict[str, tuple[str, str]] = {
    # content block type -> (TextAppended channel, field holding its initial text)
    "text": ("text", "text"),
    "thinking": ("reasoning", "thinking"),
}

TEXT_DELTAS: dict[str, tuple[str, str]] = {
    # delta type -> (TextAppended channel, field holding the text)
    "text_delta": ("text", "text"),
    "thinking_delta": ("reasoning", "thinking"),
}

QUIET_DELTAS = frozenset({"signature_delta", "citations_delta"})
"""Documented delta types that carry neither call input nor displayable text."""

BEFORE_START_OK = frozenset({"message_start", "ping", "error"})
"""Event types that may legitimately arrive before ``message_start``."""


_BLOCK_DELTA = "content_block_delta"

_new = tuple.__new__
"""Builds an :class:`ArgumentsAppended` on the fast path without the named tuple's generated
``__new__`` (a Python lambda around this call), as core/sse_fast.py does for frames."""



class AnthropicReader(BlockReader):
    name: ClassVar[str] = SPEC.name
    # A tool without parameters streams exactly one ``partial_json: ""`` (fixture
    # tool_no_args_empty_partial_json.sse, vercel/ai #10747): its input is ``{}``.
    empty_arguments_mean_empty_object: ClassVar[bool] = SPEC.empty_arguments_mean_empty_object

    restarted_code: ClassVar[Code] = Code.BLOCK_RESTARTED
    not_stopped_code: ClassVar[Code] = Code.BLOCK_NOT_STOPPED
    hot_shape = block_shape(  # (the API's own bytes: values index, partial_json)
        b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":", INT,
        b',"delta":{"type":"input_json_delta","partial_json":', STRING, b"}}")

    def __init__(self) -> None:
        super().__init__()
        self._started = False
        self._message_id: str | None = None
        self._messages = 0
        self._prefix = ""
        self._open: dict[int, Block] = {}
        self._usage: dict[str, Any] = {}
        self._message_calls: list[str] = []  # the keys of the current message's calls
        self._stopped = False  # a message_delta gave a stop reason

    # -- frame-level checks ---------------------------------------------------------------

    def event_type(self, frame: Frame, payload: Any) -> Any:
        """``data.type`` is the discriminator; the ``event:`` line is checked against it here,
        the one hook that sees both the frame and the payload before dispatch."""
        kind = payload.get("type") if type(payload) is dict else None  # the base's, inline
        if frame.event == kind and self._started:
            return kind
        # What follows is read differently by the SDK (it skips or raises): said on the block's
        # call when the frame belongs to one, so the gate will not run what the SDK never saw.
        index = payload.get("index") if type(payload) is dict else None
        block = self._open.get(index) if type(index) is int else None
        key = block.key if block is not None else self._key(index) if type(index) is int else None
        if frame.event is None:
            # anthropic-python skips events without an event: line (_streaming.py:82-110), so
            # what we read here is something the official SDK would never have seen.
            self.anomaly(frame, Code.EVENT_NAME_MISSING,
                         f"no event: line for {short(kind)} (the anthropic SDK skips such events)",
                         key=key)
        elif frame.event != kind:
            self.anomaly(frame, Code.EVENT_NAME_MISMATCH,
                         f"event: {short(frame.event)} but data.type is {short(kind)}", key=key)
        if not self._started and isinstance(kind, str) and kind not in BEFORE_START_OK:
            self.anomaly(frame, Code.EVENT_BEFORE_START,
                         f"{short(kind)} before message_start (the anthropic SDK raises here)",
                         key=key)
        return kind

    def hot_fragment(self, event: str | None, payload: Any, index: int) -> tuple[str, str] | None:
        """An ``input_json_delta`` under its own ``event:`` name, after ``message_start``, for
        an open block that has had its first fragment (the fast branch of
        :meth:`_on_block_delta`)."""
        if event != _BLOCK_DELTA or type(payload) is not dict or not self._started \
                or payload.get("type") != _BLOCK_DELTA:
            return None
        at, delta = payload.get("index"), payload.get("delta")
        if type(at) is not int or type(delta) is not dict or delta.get("type") != "input_json_delta":
            return None
        fragment = delta.get("partial_json")
        return self.hot_values([at, fragment]) if type(fragment) is str else None

    def hot_values(self, values: list[Any]) -> tuple[str, str] | None:
        """(index, partial_json) of a hot delta: for an open block that has had its first."""
        at, fragment = values
        block = self._open.get(at) if self._started else None
        if block is None or not block.appended:
            return None
        return block.key, fragment

    # -- handlers ---------------------------------------------------------------------------

    def _on_message_start(self, frame: Frame, payload: dict[str, Any]) -> None:
        message = payload.get("message")
        if not isinstance(message, dict):
            self.anomaly(frame, Code.BAD_MESSAGE, f"message_start without a message object: "
                                                  f"{short(message)}")
        msg_id = text_or_none(message.get("id")) if isinstance(message, dict) else None
        if not self._started:
            self._started = True
            self._messages = 1
            self._message_id = msg_id
        elif msg_id == self._message_id:
            # vercel/ai #18331: a benign repeat; keys stay as they are.
            self.anomaly(frame, Code.DUPLICATE_MESSAGE_START,
                         f"message_start repeated for the same id {short(msg_id)}")
        else:
            self._splice(frame, msg_id)
        usage = message.get("usage") if isinstance(message, dict) else None
        self._report_usage(frame, usage)

    def _splice(self, frame: Frame, msg_id: str | None) -> None:
        """A second message with a different id: another generation spliced into this stream.

        Its blocks restart at index 0, so with bare ``block:<index>`` keys the second
        message's deltas would land in the first message's buffers. In the synthetic fixture
        the first message's tool block 1 is still open with ``{"value":"Spark`` and the second
        message's own tool block 1 sends ``{"value":"Sparkle Day"}``: one key would yield the
        concatenation, a "valid-looking" mess. So each distinct message after the first gets
        a prefix ``msg<n>/`` (its ordinal, not its id: ids are untrusted, may be absent, and
        ordinals keep keys short and deterministic); the first message keeps the documented
        ``block:<index>`` keys. The first message's open blocks will never be stopped (their
        index space is gone), so they are closed here and flagged, not left dangling.
        """
        old = self._message_id
        self.anomaly(frame, Code.SPLICED_MESSAGE_START,
                     f"message_start with id {short(msg_id)} while message {short(old)} is "
                     "in progress; its blocks are keyed apart")
        replaced = f"message {short(old)} was replaced by {short(msg_id)}"
        still_open = {block.key for block in self._open.values()}
        self._close_open(frame, replaced)
        # Its stopped blocks are cut too: no message_delta or message_stop vouched for them.
        self.cut_calls(frame, (key for key in self._message_calls if key not in still_open),
                       f"{replaced} before it ended")
        self._message_calls = []
        self._messages += 1
        self._prefix = f"msg{self._messages}/"
        self._message_id = msg_id
        self._usage = {}  # usage belongs to a message; the new one starts afresh

    def _on_block_start(self, frame: Frame, payload: dict[str, Any]) -> None:
        index = self._index(frame, payload)
        if index is None:
            return
        block = payload.get("content_block")
        if not isinstance(block, dict):
            self.anomaly(frame, Code.BAD_BLOCK, "content_block_start without a content_block object")
            block = {}
        btype = text_or_none(block.get("type"))
        key = self._key(index)
        self.restart(frame, self._open.get(index), key,
                     lambda: f"block {index} started again before content_block_stop")
        kind = CALL_BLOCKS.get(btype or "")
        entry = Block(key, btype, kind)
        if kind is not None:
            self._message_calls.append(key)
            self.emit(CallOpened(frame.index, key, id=text_or_none(block.get("id")),
                                 name=text_or_none(block.get("name")), kind=kind))
            start_input = block.get("input")
            if start_input not in (None, {}):
                # The docs say input is always {} here. A filled object (a proxy, a future
                # block type) becomes the call's input at its close if no delta follows; it
                # is never prefixed to deltas (the litellm #4537 "{}{...}" bug).
                entry.start = start_input
        elif btype in TEXT_BLOCKS:
            channel, field = TEXT_BLOCKS[btype]
            self.text(frame, channel, block.get(field))
        self._open[index] = entry

    def _on_block_delta(self, frame: Frame, payload: dict[str, Any]) -> None:
        index = payload.get("index")
        delta = payload.get("delta")
        if type(index) is int and type(delta) is dict and delta.get("type") == "input_json_delta":
            block = self._open.get(index)
            fragment = delta.get("partial_json")
            if block is not None and block.appended and type(fragment) is str:
                # Nearly every event of a tool-call stream: one more fragment for a block whose
                # first fragment _json_delta has checked. The rest takes the general path.
                self._out.append(_new(ArgumentsAppended, (frame.index, block.key, fragment)))
                return
        index = self._index(frame, payload)
        if index is None:
            return
        delta = payload.get("delta")
        dtype = delta.get("type") if isinstance(delta, dict) else None
        if not isinstance(delta, dict) or not isinstance(dtype, str):
            self.anomaly(frame, Code.BAD_DELTA, f"content_block_delta without a typed delta "
                         f"({short(delta)})", key=self._key(index))
            return
        if dtype == "input_json_delta":
            self._json_delta(frame, index, delta)
        elif dtype in TEXT_DELTAS:
            self._text_delta(frame, index, dtype, delta)
        elif dtype not in QUIET_DELTAS:
            self.anomaly(frame, Code.UNKNOWN_DELTA, f"unknown delta type {short(dtype)}",
                         key=self._key(index))

    def _json_delta(self, frame: Frame, index: int, delta: dict[str, Any]) -> None:
        block = self._open.get(index)
        key = self._key(index) if block is None else block.key  # the block's key: no f-string
        fragment = delta.get("partial_json")
        if not isinstance(fragment, str):
            self.anomaly(frame, Code.BAD_DELTA,
                         f"input_json_delta without a string partial_json ({short(fragment)})",
                         key=key)
            return
        if block is None:
            # Never started: the accumulator reports the unknown key; remember the block so
            # content_block_stop / message_delta can close what it holds.
            block = self._open[index] = Block(key, None, "function")
        elif block.start is not None and not block.appended:
            self.anomaly(frame, Code.START_INPUT_THEN_DELTAS,
                         f"block {index} had a non-empty start input and also input deltas; "
                         "the deltas are the input", key=key)
        block.appended = True
        self.emit(ArgumentsAppended(frame.index, key, fragment))

    def _text_delta(self, frame: Frame, index: int, dtype: str, delta: dict[str, Any]) -> None:
        if index not in self._open:
            self.anomaly(frame, Code.DELTA_WITHOUT_START,
                         f"{dtype} for block {index}, which never started", key=self._key(index))
            self._open[index] = Block(self._key(index), None, None)
        channel, field = TEXT_DELTAS[dtype]
        self.text(frame, channel, delta.get(field))

    def _on_block_stop(self, frame: Frame, payload: dict[str, Any]) -> None:
        index = self._index(frame, payload)
        if index is None:
            return
        self.stop(frame, self._open.pop(index, None), self._key(index),
                  lambda: f"content_block_stop for block {index}, which is not open")

    def _on_message_delta(self, frame: Frame, payload: dict[str, Any]) -> None:
        # The max_tokens recording goes straight from an input delta to message_delta: the
        # block that never got content_block_stop is closed here (and flagged).
        self._close_open(frame, "message_delta arrived first")
        delta = payload.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        reason = delta.get("stop_reason")
        if reason is not None:  # null is "not yet": message_stop says when it never came
            report_stop(self, SPEC, frame, "stop_reason", reason)
            self._stopped = True
        details = delta.get("stop_details")
        if isinstance(details, dict):
            # A refusal's explanation is the only text the user gets for it.
            self.text(frame, "refusal", details.get("explanation"))
        self._report_usage(frame, payload.get("usage"))

    def _on_message_stop(self, frame: Frame, payload: dict[str, Any]) -> None:
        self._close_open(frame, "message_stop arrived first")
        if not self._stopped:  # no stop_reason at all: not known to be a success
            self.anomaly(frame, Code.MISSING_STOP_REASON,
                         "message_stop without any stop_reason; treated as failed")
            self.emit(StopReported(frame.index, "none", cut=False, failed=True))
        self.end_turn(frame, "message_stop")

    def _on_ping(self, frame: Frame, payload: dict[str, Any]) -> None:
        """Keep-alive: nothing to read."""

    def _on_error(self, frame: Frame, payload: dict[str, Any]) -> None:
        # e.g. overloaded_error after the 200; the turn then usually ends without message_stop.
        self.error_payload(frame, payload.get("error", payload))

    handlers: ClassVar[dict[str, Handler]] = {
        "message_start": _on_message_start,
        "content_block_start": _on_block_start,
        _BLOCK_DELTA: _on_block_delta,
        "content_block_stop": _on_block_stop,
        "message_delta": _on_message_delta,
        "message_stop": _on_message_stop,
        "ping": _on_ping,
        "error": _on_error,
    }

    # -- helpers ----------------------------------------------------------------------------

    def _key(self, index: int) -> str:
        return f"{self._prefix}block:{index}"

    def _index(self, frame: Frame, payload: dict[str, Any]) -> int | None:
        index = int_or_none(payload.get("index"))
        if index is not None:
            return index
        self.anomaly(frame, Code.BAD_INDEX, f"{short(payload.get('type'))} without an integer "
                     f"index ({short(payload.get('index'))})")
        return None

    def _close_open(self, frame: Frame, why: str) -> None:
        self.cut_open(frame, ((block, f"block {index} ({short(block.type or 'unknown type')}) "
                                      f"never got content_block_stop; {why}")
                              for index, block in sorted(self._open.items())))
        self._open.clear()

    def _report_usage(self, frame: Frame, usage: Any) -> None:
        """Usage is cumulative (later wins), and ``message_delta`` often carries only
        ``output_tokens``: merge field by field so every report is the whole picture."""
        if isinstance(usage, dict):
            self._usage.update(usage)
            self.emit(UsageReported(frame.index, dict(self._usage)))
        elif usage is not None:
            self.anomaly(frame, Code.BAD_USAGE, f"usage is not an object ({short(usage)})")

