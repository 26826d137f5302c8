"""A harness under test in another process, spoken to in JSON lines (``docs/testing.md``).

``callscope check --harness CMD`` starts CMD once (split like a shell would, run without one)
and writes one line per variant of the stream to its stdin::

    {"type": "stream", "version": 1, "id": 3, "source": "capture.jsonl",
     "protocol": "openai-chat", "tools": [...], "chunks": ["ZGF0YTog...", ...]}

``tools`` are the definitions the input declares (or ``--tools``), verbatim; ``chunks`` are
the reads in order, base64 (a read may end inside a UTF-8 character). The harness
is not told which variant a stream is (a chunking, or a cut): it must tell from the bytes, as it
would in production. It answers each with one line on stdout, in order::

    {"id": 3, "executed": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
    {"id": 3, "error": "what went wrong"}      (it failed on that stream: executed nothing)

When callscope is done it closes stdin; the harness exits. Its stderr is passed through. A line
that is not JSON, an answer for another id, an exit or no answer within the timeout stops the
check with one line naming the command and what happened.
"""

from __future__ import annotations

import base64
import queue
import shlex
import subprocess
import threading
from collections.abc import Iterator
from typing import IO, Any

import orjson

from ..core.inert import plain, preview
from ..core.sweep_compare import HarnessBroken

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 30.0


class HarnessFailed(Exception):
    """The harness reported an error on one stream (it executed nothing there)."""


class ProcessHarness:
    """A running harness process; call it like a Python harness (one stream per call)."""

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.command = command
        if not 0 < timeout < float("inf"):
            raise HarnessBroken(f"--harness-timeout {timeout}: a number of seconds > 0")
        self.timeout = timeout
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise HarnessBroken(f"--harness {command!r}: {exc}") from None
        if not argv:
            raise HarnessBroken("--harness: an empty command")
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as exc:
            raise HarnessBroken(f"--harness {plain(command)[:80]!r}: cannot start it "
                                f"({exc.strerror or exc})") from None
        self._lines: queue.Queue[bytes] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        self._next = 0
        self.context: dict[str, Any] = {}
        """Sent with every stream (``source``, ``protocol``, ``tools``): what the caller knows."""

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output

    def _broken(self, what: str) -> HarnessBroken:
        return HarnessBroken(f"--harness {plain(self.command)[:80]!r}: {what}")

    def __call__(self, chunks: Iterator[bytes]) -> list[Any]:
        self._next += 1
        ident = self._next
        message = {"type": "stream", "version": PROTOCOL_VERSION, "id": ident, **self.context,
                   "chunks": [base64.b64encode(c).decode("ascii") for c in chunks]}
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(orjson.dumps(message) + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._broken(f"exited (status {self.process.poll()}) before stream {ident}"
                               ) from None
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._broken(f"no answer to stream {ident} within {self.timeout:g} s") from None
        if not line:
            raise self._broken(f"exited (status {self.process.wait()}) without answering "
                               f"stream {ident}")
        return self._answer(ident, line)

    def _answer(self, ident: int, line: bytes) -> list[Any]:
        try:
            answer = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise self._broken(f"answer {ident} is not JSON: {preview(line[:80])}") from None
        if not isinstance(answer, dict) or answer.get("id") != ident:
            raise self._broken(f"answer {ident} is not {{\"id\": {ident}, ...}}: "
                               f"{preview(answer)}")
        if "error" in answer:
            raise HarnessFailed(str(answer["error"])[:200])
        executed = answer.get("executed")
        if not isinstance(executed, list):
            raise self._broken(f"answer {ident} has no \"executed\" list")
        return executed

    def close(self) -> None:
        """Close its stdin and wait for it to exit (killed if it does not within the timeout)."""
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> ProcessHarness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
