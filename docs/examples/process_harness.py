"""The example harnesses behind `callscope check --harness`, over the JSON-lines protocol.

    callscope check --harness 'python docs/examples/process_harness.py naive' SESSION...
    callscope check --harness 'python docs/examples/process_harness.py safe' SESSION...

One JSON object per line in (a stream: its reads, base64), one per line out (what was executed).
Any language can do the same: docs/testing.md has the protocol.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from naive_harness import naive_harness  # noqa: E402
from safe_harness import make_safe_harness  # noqa: E402


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "safe"
    for line in sys.stdin:
        stream = json.loads(line)
        chunks = (base64.b64decode(c) for c in stream["chunks"])
        harness = naive_harness if which == "naive" else make_safe_harness(stream.get("tools") or [])
        try:
            executed = harness(chunks)
        except Exception as exc:  # executed nothing on this stream; say why
            answer = {"id": stream["id"], "error": f"{type(exc).__name__}: {exc}"}
        else:
            answer = {"id": stream["id"],
                      "executed": [{"name": name, "arguments": args} for name, args in executed]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
