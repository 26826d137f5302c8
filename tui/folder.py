"""``callscope DIR``: the sessions of a folder as a list, like mitmproxy's flows; enter opens one.

Each row is what a headless replay says of the file (protocol, size, how the stream ended, calls
executed and refused), computed in a thread worker so the list appears at once and fills in.
The columns fit the terminal (from 80 cells: no sideways scrolling), laid out again on a
resize: a long name is elided in the middle, a narrow terminal gets short sizes and endings.
The debugger's panes sit under the list and show the session opened last; escape or ``l``
comes back to the list.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable, Static

from ..core.ending import EndingWatch, transport_of
from ..core.engine import Engine, FrameStep, Step
from ..core.errors import CallscopeError
from ..core.limits import DEFAULT_LIMITS, Limits
from ..core.replay import Chunking, TimedBytes
from ..core.session_model import Session
from ..core.timeline import Timeline
from ..core.tools import ToolSet
from . import safe
from .cli_inputs import LoadedInput, toolset_for
from .commands import list_key
from .fitted_list import PADDING, SCROLLBAR, Cells, FittedListScreen, ListingApp
from .footer import FittingFooter

SUFFIXES = (".jsonl", ".sse", ".har")
MAX_LISTED = 5000
COLUMNS = {"file": 60, "protocol": 19, "bytes": 10, "ending": 40, "executed": 8, "refused": 7}
NARROW_COLUMNS = {"file": 18, "protocol": 12, "bytes": 5, "ending": 20, "executed": 4,
                  "refused": 3}
"""In a terminal too narrow for :data:`COLUMNS` (under :data:`WIDE` cells): the size in short
units (``8.1k``), the ending without its byte offset (the size column says it) and the calls
columns under short labels (:data:`NARROW_LABELS`), so every column fits at 80 cells."""
NARROW_LABELS = {"bytes": "size", "executed": "exec", "refused": "ref"}
SHORT_PROTOCOLS = {"openai-responses": "responses", "openai-chat": "chat",
                   "gemini-interactions": "interactions", "gemini-generate": "generate",
                   "bedrock-converse": "converse", "bedrock-invoke": "invoke",
                   "ollama-chat": "ollama"}
"""The protocol in a narrow list: its name without the vendor (each is still one protocol),
so the file column gets the seven cells back: at 80 cells two files in sibling folders with
the same name, elided, looked alike."""
WIDE = 128


def is_narrow(width: int) -> bool:
    return width < WIDE


def fitted(width: int) -> dict[str, int]:
    """The columns' widths in a terminal ``width`` cells wide: the file name takes what the
    others leave (and the ending too, in a wide terminal); nothing scrolls sideways from 80
    cells on."""
    columns = NARROW_COLUMNS if is_narrow(width) else COLUMNS
    fixed = sum(w for name, w in columns.items() if name != "file")
    room = width - fixed - PADDING * len(columns) - SCROLLBAR
    if is_narrow(width):
        return {**columns, "file": max(columns["file"], room)}
    room += COLUMNS["ending"]  # (the ending takes up to its width first, the file the rest)
    ending = max(24, min(COLUMNS["ending"], room - 16))
    return {**COLUMNS, "file": max(16, room - ending), "ending": ending}


def elide(name: str, width: int) -> str:
    """``name`` in ``width`` cells: whole, or elided in the middle, so both its start (the
    folder) and its end (the file's own name and suffix) show."""
    if len(name) <= width:
        return name
    head = (width - 1) // 3
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def short_size(size: int) -> str:
    """A size in at most 5 cells: 968, 8.1k, 512k, 4.0M, 12M."""
    for unit, scale in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(size)


@dataclass(frozen=True, slots=True)
class Entry:
    """One file of the folder, as a headless replay reads it."""

    path: str
    protocol: str = "…"
    size: int = 0
    ending: str = "reading…"
    executed: int | None = None
    refused: int | None = None
    error: str | None = None
    transport: str | None = None
    signal: str | None = None
    """The terminal signal (None: it never came)."""


def sessions_in(directory: str) -> list[str]:
    """The inputs under ``directory`` (recursively), sorted, at most :data:`MAX_LISTED`."""
    found = sorted(str(p) for p in Path(directory).rglob("*")
                   if p.suffix.lower() in SUFFIXES and p.is_file())
    return found[:MAX_LISTED]


def _load(path: str, override: ToolSet | None, limits: Limits) -> tuple[
        list[TimedBytes], str | None, ToolSet, Session]:
    """A session's chunks (refused past ``limits.max_session_bytes``, as ``callscope FILE``
    refuses it), the protocol its header names, the tools it is checked against."""
    loaded = LoadedInput(path)
    chunks = loaded.held(limits.max_session_bytes, note=False)  # (its ending is in its row)
    tools = override.with_request(loaded.request_body) if override is not None \
        else toolset_for(loaded, None)
    return chunks, loaded.protocol, tools, loaded.session


def summarize(path: str, override: ToolSet | None = None,
              limits: Limits = DEFAULT_LIMITS) -> Entry:
    """The row of one file: never raises (a broken file says why in its row)."""
    try:
        chunks, protocol, tools, session = _load(path, override, limits)
        engine, watch = Engine(protocol, tools, limits, contrast=False), EndingWatch()
        for t, data in chunks:
            watch.chunk(watch.received + len(data), t)
            _watch_frames(watch, engine.feed(data, t))
        _watch_frames(watch, engine.close())
        said = watch.ending(engine.state, *transport_of(session.end))
        actions = [d.action for d in engine.pipeline.decisions.values()]
        return Entry(path, engine.state.protocol, watch.received, said.short(),
                     actions.count("execute"), actions.count("refuse"), transport=said.transport,
                     signal=said.signal)
    except (CallscopeError, OSError) as exc:
        return Entry(path, "—", 0, "cannot be read", error=str(exc))


def _watch_frames(watch: EndingWatch, steps: list[Step]) -> None:
    for step in steps:
        if isinstance(step, FrameStep):
            watch.frame(step.frame)


class FolderScreen(FittedListScreen):
    """The folder's sessions; enter opens the one under the cursor."""

    BINDINGS = [Binding("escape", "app.back_to_capture", "Back to the open session", show=True),
                Binding("q", "app.quit", "Quit", show=True)]
    DEFAULT_CSS = """
    FolderScreen { layout: vertical; }
    FolderScreen #folder-info { height: auto; padding: 0 1; background: $panel; }
    FolderScreen #folder { height: 1fr; }
    """

    def __init__(self, directory: str) -> None:
        super().__init__()
        self.directory = directory
        self.entries: dict[str, Entry] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="folder-info")
        yield DataTable(id="folder", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield FittingFooter()

    def fitted(self, width: int) -> dict[str, int]:
        return fitted(width)

    def labels(self, width: int) -> dict[str, str]:
        return NARROW_LABELS if is_narrow(width) else {}

    def rows(self) -> Iterable[tuple[str, Cells]]:
        return ((entry.path, self._cells(entry)) for entry in self.entries.values())

    def open(self, key: str) -> None:
        cast(FolderApp, self.app).open_session(key)

    def _cells(self, entry: Entry) -> tuple[Content | str, ...]:
        w, narrow = self.widths, is_narrow(self.app.size.width)
        name = elide(safe.plain(os.path.relpath(entry.path, self.directory)), w["file"])
        if entry.error is not None:  # (what is wrong, not the path the row already names)
            error = re.sub(r"^@\d+: ", "", entry.error.removeprefix(entry.path))
            ending = safe.content(safe.short(error, w["ending"]), "$text-error")
        elif narrow and entry.transport is not None:
            said = f"{entry.transport} · {entry.signal or 'no signal'}"
            ending = safe.content(safe.short(said, w["ending"]))
        else:
            ending = safe.content(safe.short(entry.ending, w["ending"]))
        size = short_size(entry.size) if narrow else f"{entry.size:,}"
        protocol = SHORT_PROTOCOLS.get(entry.protocol, entry.protocol) if narrow else entry.protocol
        return (Content(name), safe.content(safe.short(protocol, w["protocol"])),
                size.rjust(w["bytes"]), ending,
                "" if entry.executed is None else str(entry.executed).rjust(w["executed"]),
                "" if entry.refused is None else str(entry.refused).rjust(w["refused"]))

    def show(self, entry: Entry) -> None:
        table = self.query_one(DataTable)
        known = entry.path in self.entries
        self.entries[entry.path] = entry
        cells = self._cells(entry)
        if not known:
            table.add_row(*cells, key=entry.path)
            return
        for column, cell in zip(COLUMNS, cells, strict=True):
            table.update_cell(entry.path, column, cell)

    def info(self, listed: int, read: int, opened: bool = False) -> None:
        """The line over the list: how many sessions, how many read, what the keys do (escape
        only once a session is open: before, there is nothing to go back to)."""
        self.query_one("#folder-info", Static).update(Content.assemble(
            ("callscope ", "bold $text-primary"), safe.content(safe.short(self.directory, 80)),
            (f"\n{listed} session{'s' * (listed != 1)}"
             + (f" (read {read})" if read < listed else "") + "; enter opens one"
             + (", escape goes back to the one open" if opened else ""), "$text-muted")))

class FolderApp(ListingApp):
    """A folder's sessions listed; the panes show the one opened."""

    BINDINGS = [list_key("Sessions")]
    list_screen: FolderScreen

    def __init__(self, directory: str, *, protocol: str | None = None,
                 tools: ToolSet | None = None, keymap: dict[str, str] | None = None,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__([], source=directory, keymap=keymap,
                         note="No session open yet: l lists the folder's sessions.")
        self.directory, self.protocol_override, self.tools_override = directory, protocol, tools
        self.limits = limits
        self.paths = sessions_in(directory)
        self.read = 0
        self.opened: str | None = None
        self.list_screen = FolderScreen(directory)
        self.install_screen(self.list_screen, "folder")

    def on_mount(self) -> None:  # runs before CallscopeApp.on_mount (Textual calls both)
        self.push_screen(self.list_screen)
        self.call_after_refresh(self._first_rows)

    def _first_rows(self) -> None:
        for path in self.paths:
            self.list_screen.show(Entry(path))
        self.list_screen.info(len(self.paths), 0)
        self.run_worker(self._summarize_all, thread=True, name="folder", exit_on_error=False)

    def _summarize_all(self) -> None:
        for path in self.paths:
            entry = summarize(path, self.tools_override, self.limits)
            if not self.is_running:
                return
            self.call_from_thread(self._row, entry)

    def _row(self, entry: Entry) -> None:
        self.read += 1
        self.list_screen.show(entry)
        self.list_screen.info(len(self.paths), self.read, self.opened is not None)

    def open_session(self, path: str) -> None:
        try:
            chunks, protocol, tools, session = _load(path, self.tools_override, self.limits)
        except CallscopeError as exc:
            self.notify(safe.short(str(exc), 200), markup=False, severity="error", timeout=6)
            return
        timeline = Timeline.build(chunks, self.protocol_override or protocol, tools,
                                  Chunking("recorded"), None, self.limits)
        timeline.end = session.end
        self.opened, self.recorded_end, self.header = path, session.end, session.header
        self.list_screen.info(len(self.paths), self.read, opened=True)
        self.note = f"{os.path.relpath(path, self.directory)} (l: back to the folder)"
        self.query_one("#status").set_class(True, "-note")
        self.show_timeline(timeline, path, grows=False)
        self.leave_list()

    def has_open(self) -> bool:
        return self.opened is not None
