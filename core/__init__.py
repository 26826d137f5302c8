"""callscope's engine: sans-IO, bytes in, typed events out.

Nothing in this package imports textual, httpx, httpx_sse or asyncio (a test enforces it).
"""
