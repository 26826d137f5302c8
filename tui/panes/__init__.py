"""The three panes: raw frames, argument buffers, decisions. Each renders ``timeline.view(cursor)``."""
