"""The base of the app's action mixins (:mod:`.app_search`, :mod:`.app_rebuild`,
:mod:`.app_outputs`): what they use of :class:`~.app.CallscopeApp`, declared for the type checker.

At run time :class:`AppMixin` is ``object``, so CallscopeApp stays the only App subclass among its
bases; to the type checker it is an App with the state and methods CallscopeApp defines, and
CallscopeApp's own definitions are checked against these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

    from ..core.lanes import CallView
    from ..core.session_model import SessionHeader, StreamEnd
    from ..core.timeline import Timeline
    from .follow import Follower
    from .indexer import Indexer
    from .player import Player

    class AppMixin(App[None]):
        timeline: Timeline
        cursor: int
        source: str
        recorded_end: StreamEnd | None
        header: SessionHeader | None
        since: int | None
        undo: list[tuple[Timeline, int]]
        player: Player
        follower: Follower
        search_text: str
        filtering: bool
        matches: list[int]
        _searched: int
        indexer: Indexer | None

        @property
        def building(self) -> bool: ...
        def _load(self, cursor: int | None = None) -> None: ...
        def refresh_view(self) -> None: ...
        def move(self, k: int | None, *, quiet: bool = False, stepped: bool = False) -> None: ...
        def action_goto_frame(self, index: int) -> None: ...
        def _selected_call(self) -> CallView | None: ...
else:
    AppMixin = object
