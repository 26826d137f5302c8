"""Protocol detection from the stream itself (PROTOCOLS.md §7.2).

Looks at one dispatched frame at a time and answers a protocol name, or None when the frame
does not tell (a ping, ``[DONE]``, an error both Responses and Anthropic could send). The engine
keeps asking until a frame tells; a stream where none does is ``unknown`` and replays as frames.

Each protocol's spec recognises its own frames (:attr:`.providers.spec.ProtocolSpec.recognise`);
detection asks them in :data:`.providers.specs.DETECTION_ORDER`, first from the frame alone (an
``event:`` field may tell without parsing), then from the parsed object.
"""

from __future__ import annotations

from typing import Any

import orjson

from .frame import Frame
from .providers import DETECTION


def detect(frame: Frame) -> str | None:
    if not frame.dispatch:
        return None
    for spec in DETECTION:
        if spec.recognise(frame, None):
            return spec.name
    try:
        payload: Any = orjson.loads(frame.data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(payload, dict):
        return None
    for spec in DETECTION:
        if spec.recognise(frame, payload):
            return spec.name
    return None
