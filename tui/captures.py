"""``callscope proxy`` in the debugger: the captured sessions listed live, any of them opened.

The recording proxy runs in a child process of its own (``callscope proxy --headless
--events``), so the screen never holds the interpreter lock the relay needs: a response is
relayed as fast as with no debugger (``python -m bench.proxy_bench``). The child writes every
capture fact as a line on its standard output (``net/relay_events.py``); a reader thread here
turns each line into a fact in the app's :class:`~.inbox.Inbox`. Each capture is a growing
:class:`~callscope.core.timeline.Timeline`, extended in the app's thread: the list shows its
gate verdicts as they happen, and opening a capture that is still streaming follows it live.
When the app closes, the child is stopped (SIGTERM: streams in flight end their sessions as
cut, with a time) and the facts it wrote last are applied before the command reports.

:class:`.captures_screen.CapturesScreen` is the list; it sits on top of the debugger's panes,
which show the capture opened last (escape or ``l`` comes back to the list).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping

from textual.content import Content
from textual.timer import Timer

from ..core.errors import CallscopeError
from ..core.redact import redact_url
from ..core.timeline import Timeline
from ..core.tools import ToolSet, tools_from_request
from ..net.proxy import check_upstream
from ..net.relay_events import read_event
from . import safe
from .capture_model import (
    Capture,
    CaptureChunk,
    CaptureEnded,
    CaptureFact,
    CaptureStarted,
    ProxyEvent,
    fact_of,
    relay_command,
)
from .captures_screen import CapturesScreen
from .fitted_list import ListingApp
from .inbox import SLICE, Inbox
from .live import end_notice

LOG_LINES = 4
"""The proxy's latest log lines shown under the list (requests that are not captures too)."""


SCREEN_NICENESS = 10
"""How much the debugger lowers its own priority below the relay's (``yield_cpu``)."""
STDERR_LINES = 20
STDERR_LINE_BYTES = 2000
WAIT_AT_EXIT = 15.0
"""Seconds the command waits, after the app closed, for the relay to end its sessions."""
LIST_REFRESH = 0.5
"""Seconds between two updates of the captures list (the panes of the capture open follow
:data:`~.follow.REFRESH`). Textual's DataTable paints every visible row again after any cell
changed (its render caches are keyed by an update count): with 20 captures streaming that was
~20 ms a paint, a fifth of a core at 10 a second; twice a second still shows the bytes grow."""


# -- the app -------------------------------------------------------------------------------------

class ProxyApp(ListingApp):
    """The recording proxy with its captures list; the panes show the capture opened."""

    ITEM = "capture"
    list_screen: CapturesScreen

    def __init__(self, upstream: str, directory: str, *, port: int = 0,
                 timeout: float = 600.0, redact: tuple[str, ...] = (),
                 yield_cpu: bool = False, keymap: Mapping[str, str] | None = None) -> None:
        """``yield_cpu``: once the relay is started, this process lowers its own scheduling
        priority (:data:`SCREEN_NICENESS`), so on a busy machine the screen waits for a core and
        the relayed streams do not (the command line does; tests leave it off, as it would
        outlast the app). ``keymap``: the keys remapped (the one an earlier ``--keymap`` saved)."""
        super().__init__([], source=directory, keymap=keymap,
                         note="No capture open yet: l lists the captures.")
        self.upstream = check_upstream(upstream)
        self.command = relay_command(self.upstream, directory, port, timeout, redact)
        self.yield_cpu = yield_cpu
        self.port = port
        self.url: str | None = None
        self.error: str | None = None
        self.directory = directory
        self.captures: dict[str, Capture] = {}
        self.inbox: Inbox[CaptureFact] = Inbox(self.call_later, self.take_fact,
                                               resume=self.call_after_refresh, after=self._grew)
        self._grown: dict[int, Timeline] = {}  # by id: the timelines a slice extended
        self.log_lines: deque[str] = deque(maxlen=LOG_LINES)
        self.list_screen = CapturesScreen()
        self.install_screen(self.list_screen, "captures")  # kept (and its table) when popped
        self._list_timer: Timer | None = None
        self._changed: dict[str, Capture] = {}
        self._caught_up: dict[str, Capture] = {}
        """Caught up, their rows not yet made again (that is done for all of them at once)."""
        self._shown_at = 0.0
        self._said_info: tuple[str, int] | None = None
        self._said_log: list[str] | None = None
        """The captures whose row is out of date (a row is made again only when it changed,
        and only while the list is on screen: a long list costs nothing per read)."""
        self._lock = threading.Lock()
        self._closing = False
        self._late: list[CaptureFact] = []
        """Facts read after the app closed (the ends of streams the stop cut)."""
        self._relay: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._errors: threading.Thread | None = None
        self._said: deque[str] = deque(maxlen=STDERR_LINES)
        """The relay's last lines on its standard error (read on all along: a pipe nobody
        reads fills, and the relay would block on its next warning)."""

    def on_mount(self) -> None:  # runs before CallscopeApp.on_mount (Textual calls both)
        self.push_screen(self.list_screen)
        try:
            # Its stdin stays open while this process lives: if it dies, the relay stops too.
            self._relay = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            self.post_message(ProxyEvent(error=f"cannot start the relay: {exc}"))
        else:
            # Before the reader starts: Linux keeps a nice value per thread and a thread takes
            # its creator's, so the reader (which parses every fact) yields the CPU too.
            if self.yield_cpu and hasattr(os, "nice"):
                with contextlib.suppress(OSError):
                    os.nice(SCREEN_NICENESS)
            self._errors = threading.Thread(target=self._read_errors, args=(self._relay,),
                                            name="callscope-relay-stderr", daemon=True)
            self._errors.start()
            self._reader = threading.Thread(target=self._read_relay, args=(self._relay,),
                                            name="callscope-relay-reader", daemon=True)
            self._reader.start()
        self.call_after_refresh(self._show_list)

    # -- the relay's pipe (a thread of its own) ----------------------------------------------

    def _read_errors(self, relay: subprocess.Popen[bytes]) -> None:
        assert relay.stderr is not None
        for line in relay.stderr:
            text = line[:STDERR_LINE_BYTES].decode("utf-8", "replace").strip()
            if text:
                self._said.append(text)

    def _read_relay(self, relay: subprocess.Popen[bytes]) -> None:
        """Every fact the relay writes, in order, to the inbox (or, once the app closed, kept
        for :meth:`wait_relay`); the relay's error when it stops before listening."""
        assert relay.stdout is not None and relay.stderr is not None
        listening = False
        for line in relay.stdout:
            event = read_event(line)
            if event is None:
                continue
            fact = fact_of(event)
            with self._lock:
                closing = self._closing
                if closing and fact is not None:
                    self._late.append(fact)
            if closing:
                continue
            if fact is not None:
                self.inbox.put(fact)
            elif event.kind == "url":
                listening = True
                self.post_message(ProxyEvent(url=event.text))
            elif event.kind == "log":
                self.post_message(ProxyEvent(line=event.text))
        if not listening and not self._closing:
            if self._errors is not None:
                self._errors.join(WAIT_AT_EXIT)  # the relay's last words, once it is gone
            error = (self._said[-1].removeprefix("callscope: ") if self._said
                     else "the relay stopped")
            self.post_message(ProxyEvent(error=error))

    def on_unmount(self) -> None:
        with self._lock:
            self._closing = True
        if self._relay is not None and self._relay.poll() is None:
            self._relay.send_signal(signal.SIGTERM)  # its streams end their sessions as cut

    def wait_relay(self, timeout: float = WAIT_AT_EXIT) -> None:
        """After the app closed: wait for the relay to stop, then end the captures it ended
        last (their facts came after the screen was gone)."""
        relay = self._relay
        if relay is None:
            return
        if relay.stdin is not None:
            with contextlib.suppress(OSError):
                relay.stdin.close()
        try:
            relay.wait(timeout)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()
        for thread in (self._reader, self._errors):
            if thread is not None:
                thread.join(timeout)
        for fact in self._late:
            capture = self.captures.get(fact.path)
            if isinstance(fact, CaptureStarted) and capture is None:
                self.on_capture_started(fact)
            elif isinstance(fact, CaptureChunk) and capture is not None:
                capture.waiting.extend(fact.chunks)
            elif isinstance(fact, CaptureEnded) and capture is not None and capture.ending is None:
                capture.ending = fact.end
        for capture in self.captures.values():  # what the report says is what the relay saw
            capture.catch_up()

    # -- facts, in the app's thread ----------------------------------------------------------

    def on_proxy_event(self, message: ProxyEvent) -> None:
        if message.url is not None:
            self.url = message.url
        if message.error is not None:
            self.error = message.error
            self.notify(message.error, severity="error", markup=False, timeout=30)
        if message.line is not None:
            self.log_lines.append(message.line)
        if (message.url is not None or message.error is not None) and (
                self.is_running and self.screen is self.list_screen):
            self._show_list()  # where it listens (or why not) is said at once
        else:
            self._list_changed()

    def take_fact(self, fact: CaptureFact) -> None:
        """One fact from the proxy's thread, in the app's thread (from the inbox)."""
        if isinstance(fact, CaptureChunk):
            self.on_capture_chunk(fact)
        elif isinstance(fact, CaptureStarted):
            self.on_capture_started(fact)
        else:
            self.on_capture_ended(fact)

    def _grew(self) -> None:
        """Once per slice of the inbox: refresh what the reads of the slice changed."""
        for timeline in self._grown.values():
            self.follower.grew(timeline)
        self._grown.clear()
        self._list_changed()

    def on_capture_started(self, message: CaptureStarted) -> None:
        header = message.header
        body = (header.request or {}).get("body")
        try:
            tools = ToolSet(tools_from_request(body), request=body)
        except CallscopeError:  # broken tool definitions: the gate checks without schemas
            tools = ToolSet(request=body)
        capture = Capture(len(self.captures) + 1, message.path, header,
                          Timeline.live(header.protocol, tools), redact_url(self.upstream))
        self.captures[message.path] = capture
        self._list_changed(capture)

    def on_capture_chunk(self, message: CaptureChunk) -> None:
        """The reads wait in the capture; only the capture open (followed) takes them now, the
        others when the list shows them or they are opened."""
        capture = self.captures.get(message.path)
        if capture is None or capture.ending is not None or capture.timeline.closed:
            return
        capture.waiting.extend(message.chunks)
        if self.follower.stream is capture.timeline:
            if capture.catch_up():
                self._grown[id(capture.timeline)] = capture.timeline  # refreshed once per slice
        self._list_changed(capture)

    def on_capture_ended(self, message: CaptureEnded) -> None:
        capture = self.captures.get(message.path)
        if capture is None or capture.ending is not None:
            return
        capture.ending = message.end
        self._list_changed(capture)
        if self.follower.stream is capture.timeline:
            capture.catch_up()
            self.follower.grew(capture.timeline)
            if self.screen is not self.list_screen:
                self.notify(end_notice(message.end), markup=False, timeout=4,
                            severity="information" if message.end.kind == "clean" else "error")

    def _list_changed(self, capture: Capture | None = None, wait: float = LIST_REFRESH) -> None:
        if capture is not None:
            self._changed[capture.path] = capture
        if self._list_timer is None and self._list_shown():
            self._list_timer = self.set_timer(wait, self._list_tick)

    def _list_shown(self) -> bool:
        """Whether the list is on screen and stays there (not being left for the panes)."""
        return self.is_running and self.screen is self.list_screen and not self._leaving

    def _list_tick(self) -> None:
        # A refresh timed while the list showed may come due once it is being left: its rows
        # wait (in _changed) for the list's return, which shows them (on_screen_resume).
        self._list_timer = None
        if self._list_shown():
            self._show_list()

    def _show_list(self) -> None:
        """Bring the list up to date, at most every :data:`LIST_REFRESH`: the captures that
        changed since are caught up, for one slice of the inbox's budget at a time (keys and
        paints come between), then their rows are made again (the others are as they were) and
        the info and log lines if they changed. A table cell updated makes Textual paint the
        whole table again: the rows are updated together, once per refresh."""
        self._list_timer = None
        if not self.is_running:  # closing: the list's widgets are going away
            return
        deadline, done = time.perf_counter() + SLICE, 0
        for capture in list(self._changed.values()):
            if done and time.perf_counter() > deadline:
                break
            capture.catch_up()
            del self._changed[capture.path]
            self._caught_up[capture.path] = capture
            done += 1
        if self._changed and time.perf_counter() - self._shown_at < LIST_REFRESH:
            self._list_changed(wait=0.001)  # the rest first, then the rows together
            return
        where = (f"listening on {self.url} -> {safe.short(redact_url(self.upstream), 80)}"
                 if self.url else self.error or "starting…")
        said = (where, len(self.captures))
        info = None if said == self._said_info else Content.assemble(
            ("callscope proxy ", "bold $text-primary"), safe.content(where),
            ("\npoint your agent's base URL at it; streamed responses are recorded in ",
             "$text-muted"), safe.content(safe.short(self.directory, 60)),
            (f"\n{len(self.captures)} capture{'s' * (len(self.captures) != 1)}; enter opens one "
             "(even while it streams), escape goes back to the open capture", "$text-muted"))
        log = list(self.log_lines)
        self.list_screen.show(list(self._caught_up.values()), info,
                              None if log == self._said_log else log)
        self._caught_up, self._said_info, self._said_log = {}, said, log
        self._shown_at = time.perf_counter()
        if self._changed:
            self._list_changed()

    # -- actions -------------------------------------------------------------------------------

    def open_capture(self, path: str) -> None:
        capture = self.captures.get(path)
        if capture is None:
            return
        self.note = f"capture #{capture.number} {capture.request.get('method', '?')} {capture.url}"
        self.query_one("#status").set_class(True, "-note")
        self.header = capture.header
        capture.catch_up()
        self.show_timeline(capture.timeline, os.path.basename(capture.path))
        self.leave_list()
        end = capture.timeline.end
        if end is not None and end.kind != "clean":  # an error body is in no pane: say it
            self.notify(end_notice(end), markup=False, severity="error", timeout=8)

    def has_open(self) -> bool:
        return self.follower.stream is not None

    def before_list(self) -> None:
        self._show_list()
