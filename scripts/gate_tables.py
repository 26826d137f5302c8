"""Write the gate's rule table and code registry into README.md (between its markers).

Run after changing core/gate/rules.py or core/gate/codes.py; tests/test_gate_tables.py fails
until the README matches."""

from __future__ import annotations

import pathlib
import sys

from callscope.core.gate.tables import replace_section

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def main() -> int:
    text = README.read_text(encoding="utf-8")
    new = replace_section(text)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"{README.name}: gate tables rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
