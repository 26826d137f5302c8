"""callscope's engine: sans-IO, bytes in, typed events out.

Nothing in this package imports textual, httpx, httpx_sse or asyncio (a test enforces it).
"""

if __name__ != "callscope.core":  # the top-level folder, imported from a checkout
    raise ImportError("import callscope.core, not the top-level 'core' folder of the checkout: the two "
                      "would load every module twice, as different modules", name=__name__)
