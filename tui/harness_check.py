"""``callscope check --harness CMD``: the user's harness, in any language, under test.

CMD is started once and fed every variant of every input over the JSON-lines protocol of
:mod:`..net.harness_process`; each input's report is printed (``docs/testing.md`` explains the
findings), with the session that reproduces each finding. Exit 1 when any input has a finding,
2 when an input could not be read or the harness could not be run.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import CallscopeError
from ..core.inert import plain
from ..core.sweep_compare import HarnessBroken


def cmd_check_harness(args: Any, out: TextIO, limits: Any) -> int:
    from ..core.session import open_input
    from ..core.sweep_files import check_session, declared_tools
    from ..net.harness_process import ProcessHarness

    # Without --findings: a new folder in the temporary directory, made at the first finding.
    folder = Path(args.findings) if args.findings else Path(tempfile.gettempdir()) / (
        f"callscope-findings-{secrets.token_hex(4)}")
    failed = broken = 0
    with ProcessHarness(args.harness, timeout=args.harness_timeout) as harness:
        for path in args.inputs:
            try:
                session = open_input(path)
                harness.context = {
                    "source": path, "protocol": args.protocol or session.header.protocol,
                    "tools": args.tool_definitions if args.tool_definitions is not None
                    else declared_tools(session)}
                report = check_session(harness, path, tools=args.tool_definitions,
                                       protocol=args.protocol, seeds=range(1, args.seeds + 1),
                                       out_dir=folder, every_byte_up_to=args.every_byte_up_to,
                                       window=args.window, quirk=args.quirk, limits=limits)
            except HarnessBroken:
                raise  # (the harness itself: no later input can be checked either)
            except CallscopeError as exc:
                out.flush()
                print(f"callscope: {plain(str(exc))}", file=sys.stderr)
                broken += 1
                continue
            for line in report.lines():
                out.write(plain(line)[:2000] + "\n")
            out.flush()
            failed += not report.ok
    return 2 if broken else 1 if failed else 0
