"""Play: move the cursor frame by frame, at the recorded pace (or a fixed one), until a breakpoint.

The player only moves the app's cursor; the panes follow as they do for any key. Breakpoints are
semantic, not positional: stop when a call is refused, when a draft first parses, on an anomaly,
or at a frame of a named event type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
from textual.timer import Timer

from ..core.timeline import Kind

if TYPE_CHECKING:
    from .app import CallscopeApp

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0)
FIXED_PACE = 0.25
"""Seconds per frame at 1x when the recording has no usable timing (one chunk, no times)."""
MAX_GAP = 3.0
"""A long silence in the recording is shortened to this many seconds (at 1x)."""
MIN_GAP = 0.001
"""Frames completed by the same read have no time between them, but a Textual timer cannot wait
0 s: its task divides by the interval, dies, and play stalled there with the icon still on."""
BREAKPOINTS: dict[str, tuple[Kind, str]] = {
    "refusal": ("refusal", "a call is refused"),
    "parse": ("parse", "a draft first parses as complete JSON"),
    "anomaly": ("anomaly", "an anomaly is found"),
}


class Player:
    def __init__(self, app: CallscopeApp) -> None:
        self.app = app
        self.playing = False
        self.speed = 1.0
        self.breakpoints: set[str] = set()
        self.event_break: str | None = None
        """Stop at a frame of this event type (the SSE event name, or the payload's type)."""
        self._timer: Timer | None = None

    def toggle(self) -> None:
        if self.playing:
            self.pause()
            return
        app = self.app
        if app.cursor >= len(app.timeline) - 1:
            app.move(0)
        self.playing = True
        self._schedule()
        app.refresh_view()

    def pause(self, reason: str | None = None) -> None:
        was_playing = self.playing
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if reason:
            self.app.notify(reason, markup=False)
        if was_playing:
            self.app.refresh_view()

    def change_speed(self, direction: int) -> None:
        i = min(range(len(SPEEDS)), key=lambda j: abs(SPEEDS[j] - self.speed))
        self.speed = SPEEDS[min(max(i + direction, 0), len(SPEEDS) - 1)]
        self.app.refresh_view()

    def toggle_breakpoint(self, name: str) -> None:
        self.breakpoints ^= {name}
        state = "on" if name in self.breakpoints else "off"
        self.app.notify(f"Break when {BREAKPOINTS[name][1]}: {state}", timeout=2)
        self.app.refresh_view()

    def set_event_break(self, name: str | None) -> None:
        self.event_break = name
        state = f"on {name!r}" if name else "off"
        self.app.notify(f"Break on event type: {state}", timeout=2, markup=False)
        self.app.refresh_view()

    def _is_event_break(self, target: int) -> bool:
        frame = self.app.timeline.view(target).frame
        if frame is None or self.event_break is None:
            return False
        if frame.event == self.event_break:
            return True
        try:  # data-only protocols name the event inside the payload
            payload = orjson.loads(frame.data)
        except orjson.JSONDecodeError:
            return False
        return isinstance(payload, dict) and self.event_break in (
            payload.get("type"), payload.get("event_type"), payload.get("object"))

    def _gap(self, k: int, target: int) -> float:
        """The recorded time between the frames at k and at target, at the chosen speed."""
        tl = self.app.timeline
        now, then = tl.view(k).frame, tl.view(target).frame
        timed = len(tl.chunks) > 1 and tl.chunks[0].t != tl.chunks[-1].t
        if timed and now is not None and then is not None:
            t_now, t_then = tl.frame_times(now.index)[1], tl.frame_times(then.index)[1]
            if t_now is not None and t_then is not None:
                return float(min(max(t_then - t_now, 0.0) / self.speed, MAX_GAP))
        return FIXED_PACE / self.speed

    def _target(self) -> int | None:
        app = self.app
        target: int | None = app.timeline.next_step(app.cursor, "frame")
        if target is None and app.cursor < len(app.timeline) - 1:
            target = len(app.timeline) - 1  # the end-of-stream decisions after the last frame
        return target

    def _schedule(self) -> None:
        target = self._target()
        if target is None:
            self.pause("End of the stream.")
            return
        self._timer = self.app.set_timer(max(self._gap(self.app.cursor, target), MIN_GAP),
                                         self._tick)

    def _tick(self) -> None:
        target = self._target()
        if not self.playing or target is None:
            return
        app, hit = self.app, None
        for name in sorted(self.breakpoints):
            kind, what = BREAKPOINTS[name]
            k = app.timeline.next_step(app.cursor, kind)
            if k is not None and k <= target and (hit is None or k < hit[0]):
                hit = (k, what)
        if hit is None and self._is_event_break(target):
            hit = (target, f"a {self.event_break} event")
        app.move(hit[0] if hit else target, quiet=True, stepped=True)
        if hit:
            self.pause(f"Breakpoint: {hit[1]} (step {hit[0]}).")
        else:
            self._schedule()
