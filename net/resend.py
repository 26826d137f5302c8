"""``callscope live --request FILE``: send again a request an agent made, as it was captured.

The request comes from a session (its header's ``request``: a proxy capture, a ``live``
recording, an imported HAR: ``FILE.har#N``). Captured credentials were redacted, so they are
put back from the environment, as the protocol's live shape says (its auth headers, the same
variables ``live`` reads); redacted query parameters are dropped. Everything else is sent as it
was captured: the body (tools, messages, options) and the client's own headers, less those that
describe one connection (``host``, ``content-length``, hop-by-hop ones).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from ..core.errors import CallscopeError
from ..core.redact import REDACTED
from ..core.tools import tools_from_request
from .capture_rules import protocol_for_path
from .live import PROVIDERS, LiveRequest, api_key, provider_shape, with_headers

_NOT_RESENT = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding",
                         "te", "trailer", "upgrade", "proxy-authorization", "accept-encoding"})


def _url(recorded: str, base_url: str | None) -> str:
    """The recorded URL less redacted parameters; at ``base_url``'s origin when given."""
    parts = urlsplit(recorded)
    query = "&".join(p for p in parts.query.split("&") if p and REDACTED not in p
                     and "%5BREDACTED%5D" not in p)
    scheme, netloc = parts.scheme, parts.netloc
    if base_url:
        base = urlsplit(base_url)
        if not (base.scheme and base.netloc):
            raise CallscopeError(f"--base-url {base_url!r} is not an absolute URL")
        scheme, netloc = base.scheme, base.netloc
    return urlunsplit((scheme, netloc, parts.path, query, ""))


def request_from_file(path: str, *, provider: str | None = None, base_url: str | None = None,
                      env: Mapping[str, str] | None = None,
                      headers: Iterable[tuple[str, str]] = ()) -> LiveRequest:
    """The captured request of ``path``, ready for :func:`~callscope.net.live.record`."""
    from ..core.importers import open_input

    env = os.environ if env is None else env
    session = open_input(path)
    request = session.header.request
    url = request.get("url") if isinstance(request, dict) else None
    if not isinstance(request, dict) or not isinstance(url, str) or not url.startswith("http"):
        raise CallscopeError(f"{path}: no request with a URL is recorded there to send again")
    body = request.get("body")
    if not isinstance(body, dict):
        raise CallscopeError(f"{path}: the recorded request body is not a JSON object")
    if provider is not None:
        protocol, shape = provider_shape(provider)
    else:
        protocol = session.header.protocol or protocol_for_path(urlsplit(url).path) or ""
        if protocol not in PROVIDERS:
            raise CallscopeError(f"{path}: which provider the request is for is not recorded: "
                                 "say --provider")
        shape = PROVIDERS[protocol]
    recorded = request.get("headers")
    kept = {str(k): str(v) for k, v in (recorded.items() if isinstance(recorded, dict) else ())
            if str(k).lower() not in _NOT_RESENT and str(v) != REDACTED}
    auth = shape.auth(api_key(protocol, shape, env))
    sent = with_headers(with_headers(kept, auth.items()), [("accept-encoding", "identity")])
    return LiveRequest(protocol, _url(url, base_url), with_headers(sent, headers), body,
                       tools_from_request(body), f"callscope live --request {path}")
