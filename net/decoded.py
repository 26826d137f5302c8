"""A compressed body recorded twice: as it came, and decoded into a session beside it.

A server may compress a stream despite ``Accept-Encoding: identity``. The session then holds
the compressed bytes (nothing received is changed), its header says so (``content_encoding``,
and ``decoded``: the name of the decoded session, or None when callscope cannot decode that
coding), and for gzip and deflate a second session ``NAME.decoded.jsonl`` holds the stream
itself, chunk by chunk at the same times: that one replays and reads as the stream.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

from msgspec.structs import replace

from ..core.session import Chunk, SessionHeader, SessionWriter, StreamEnd
from .capture_rules import DECODABLE


def decoded_path(path: str) -> str:
    return path.removesuffix(".jsonl") + ".decoded.jsonl"


def encoding_of(headers: Any) -> str:
    """The response's content coding, lower case; "" for none."""
    value = str(headers.get("content-encoding", "") or "").strip().lower()
    return "" if value == "identity" else value


def header_notes(path: str, encoding: str) -> dict[str, Any]:
    """What the raw session's header says about a compressed body (nothing for a plain one)."""
    if not encoding:
        return {}
    return {"content_encoding": encoding,
            "decoded": os.path.basename(decoded_path(path)) if encoding in DECODABLE else None}


class DecodedCopy:
    """The decoded session beside ``path``, written chunk by chunk."""

    def __init__(self, path: str, header: SessionHeader, encoding: str) -> None:
        headers = {k: v for k, v in (header.response_headers or {}).items()
                   if k.lower() != "content-encoding"}
        self.header = replace(header, response_headers=headers, extra={
            **header.extra, "decoded_from": os.path.basename(path), "content_encoding": encoding,
            "decoded": None})
        self.writer = SessionWriter(decoded_path(path), self.header)
        self._decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS | 32)  # gzip or zlib, told apart
        self._broken = False

    @staticmethod
    def open(path: str, header: SessionHeader, encoding: str) -> DecodedCopy | None:
        return DecodedCopy(path, header, encoding) if encoding in DECODABLE else None

    def write(self, chunk: Chunk) -> Chunk | None:
        """The decoded bytes of one raw chunk (written), or None when it decodes to nothing."""
        if self._broken:
            return None
        try:
            plain = self._decoder.decompress(chunk.data)
        except zlib.error:
            self._broken = True  # the raw session keeps the bytes; this one stops growing
            return None
        if not plain:
            return None
        decoded = Chunk(chunk.t, plain)
        self.writer.write(decoded)
        return decoded

    def finish(self, end: StreamEnd) -> None:
        self.writer.finish(end)
