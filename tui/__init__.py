"""The Textual app and the command line."""

if __name__ != "callscope.tui":  # the top-level folder, imported from a checkout
    raise ImportError("import callscope.tui, not the top-level 'tui' folder of the checkout: the two "
                      "would load every module twice, as different modules", name=__name__)
