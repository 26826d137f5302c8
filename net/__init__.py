"""Network edges (live client, recording proxy, emulator server). The engine never imports this."""
