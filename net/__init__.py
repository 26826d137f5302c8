"""Network edges (live client, recording proxy, emulator server). The engine never imports this."""

if __name__ != "callscope.net":  # the top-level folder, imported from a checkout
    raise ImportError("import callscope.net, not the top-level 'net' folder of the checkout: the two "
                      "would load every module twice, as different modules", name=__name__)
