"""The three panes: the frame list (and the cursor's frame under it), argument buffers, decisions.
Each renders ``timeline.view(cursor)``."""
