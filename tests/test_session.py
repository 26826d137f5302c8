"""The session file format: exact round trips, lazy loading, every broken input, atomic saves,
and redaction of credentials."""

from __future__ import annotations

import base64
import os
import pathlib
import stat
import tempfile
import tracemalloc

import orjson
import pytest
from callscope.core import session as session_module
from callscope.core.errors import CallscopeError, InputError
from callscope.core.importers import open_input
from callscope.core.session import (
    END_KINDS,
    REDACTED,
    Chunk,
    Session,
    SessionHeader,
    SessionWriter,
    StreamEnd,
    open_session,
    redact_body,
    redact_headers,
    redact_text,
    redact_url,
    save_session,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def write_lines(path, *lines: bytes | str | dict) -> str:
    """Write a session file by hand, one JSON line per dict (str/bytes lines are verbatim)."""
    out = []
    for line in lines:
        if isinstance(line, dict):
            line = orjson.dumps(line)
        out.append(line.encode() if isinstance(line, str) else line)
    path.write_bytes(b"\n".join(out) + b"\n")
    return str(path)


HEADER = {"callscope": "session", "version": 1, "source": "constructed"}


def load_all(path: str) -> tuple[Session, list[Chunk]]:
    s = open_input(path)
    return s, list(s.chunks())


# -- round trips -------------------------------------------------------------------------------

tricky = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=32).map(lambda s: s.encode("utf-8")),
    st.sampled_from([b"", b"\r", b"\r\n", b"\x00", b"\xef\xbb\xbfdata: x\n\n", b"\xe2\x9c",
                     b"\x9c\x93\n", "\u2028\u2029\x85".encode(), b"\xed\xa0\x80", b"\\u0000"]),
)
ends = st.builds(
    StreamEnd,
    kind=st.sampled_from(sorted(END_KINDS - {"http_error"})),
    detail=st.none() | st.text(max_size=20),
    at=st.none() | st.floats(0, 1e6),
) | st.builds(StreamEnd, kind=st.just("http_error"), status=st.integers(100, 599),
              body=st.none() | st.binary(max_size=40))


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.floats(0, 5), tricky), max_size=12), end=ends)
def test_any_bytes_round_trip_exactly(steps, end):
    t, chunks = 0.0, []
    for dt, data in steps:
        t += dt
        chunks.append(Chunk(t, data))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        save_session(path, SessionHeader(source="constructed"), chunks, end)
        loaded = open_input(path)
        back = list(loaded.chunks())
        assert [c.data for c in back] == [c.data for c in chunks]
        assert [c.t for c in back] == [round(c.t, 6) for c in chunks]
        last = round(chunks[-1].t, 6) if chunks else 0.0  # (an end is never before a read)
        expected_at = None if end.at is None else max(round(end.at, 6), last)
        assert loaded.end == StreamEnd(end.kind, end.status, end.body, end.detail, expected_at)
        # One record per line for any line splitter, U+2028 and NEL included.
        with open(path, encoding="utf-8") as f:
            assert len(f.read().splitlines()) == len(chunks) + 2


def test_text_when_utf8_else_base64(tmp_path):
    path = str(tmp_path / "s.jsonl")
    save_session(path, SessionHeader(), [Chunk(0, b"data: \xe2\x9c\x93\r\n\r\n"),
                                         Chunk(0.5, b"data: \xe2\x9c")], StreamEnd("clean"))
    lines = [orjson.loads(x) for x in open(path, "rb").read().splitlines()]
    assert lines[1] == {"t": 0, "text": "data: \u2713\r\n\r\n"}
    assert lines[2] == {"t": 0.5, "b64": base64.b64encode(b"data: \xe2\x9c").decode()}
    assert lines[3] == {"end": "clean"}


def test_header_round_trip_keeps_unknown_members(tmp_path):
    header = SessionHeader(
        protocol="openai-chat", source="live", recorded_at="2026-01-02T03:04:05Z",
        provenance="fixtures/SOURCES.md line 3", status=200, tools=[{"type": "function"}],
        request={"method": "POST", "url": "https://api.example/v1", "headers": {"A": "b"},
                 "body": {"model": "m", "stream": True}},
        response_headers={"content-type": "text/event-stream"},
        extra={"future_member": [1, 2]},
    )
    path = str(tmp_path / "s.jsonl")
    save_session(path, header, [], StreamEnd("clean", at=1.0))
    assert open_session(path).header == header
    assert open(path, "rb").read().startswith(b'{"callscope":"session","version":1,')


def test_session_chunks_can_be_iterated_again(tmp_path):
    path = str(tmp_path / "s.jsonl")
    save_session(path, SessionHeader(), [Chunk(0, b"a"), Chunk(1, b"b")], StreamEnd("cut"))
    s = open_session(path)
    assert list(s.chunks()) == list(s.chunks()) == [Chunk(0, b"a"), Chunk(1, b"b")]
    memory = Session.from_chunks(SessionHeader(), (c for c in [Chunk(0, b"x")]),
                                 StreamEnd("clean"))
    assert list(memory.chunks()) == list(memory.chunks()) == [Chunk(0, b"x")]


def test_stream_end_rejects_unknown_kind():
    with pytest.raises(ValueError):
        StreamEnd("finished")


# -- streaming load ----------------------------------------------------------------------------

def test_large_file_loads_lazily(tmp_path):
    n = 200_000
    body = b"".join(b'{"t":%d,"text":"data: {\\"i\\": %08d, \\"pad\\": \\"%s\\"}\\n\\n"}\n'
                    % (i, i, b"x" * 40) for i in range(n))
    path = tmp_path / "big.jsonl"
    # A broken line near the end: only reading the whole file would find it.
    path.write_bytes(orjson.dumps(HEADER) + b"\n" + body + b"not json\n" + b'{"end":"clean"}\n')
    assert path.stat().st_size > 15_000_000
    tracemalloc.start()
    try:
        s = open_input(str(path))
        first = next(s.chunks())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first.data.startswith(b'data: {"i": 00000000')
    assert s.end == StreamEnd("clean")  # read from the tail before any chunk
    assert peak < 2_000_000
    count = 0
    with pytest.raises(InputError) as err:
        for _ in s.chunks():
            count += 1
    assert count == n and err.value.line == n + 2


def test_save_streams_from_a_generator(tmp_path):
    chunks = (Chunk(i / 1000, b"data: %d\n\n" % i) for i in range(20_000))
    tracemalloc.start()
    try:
        save_session(str(tmp_path / "s.jsonl"), SessionHeader(), chunks, StreamEnd("clean"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    assert sum(1 for _ in open_session(str(tmp_path / "s.jsonl")).chunks()) == 20_000


# -- broken inputs -----------------------------------------------------------------------------

CHUNK = {"t": 0, "text": "data: x\n\n"}
END = {"end": "clean"}

BROKEN = {
    "bad JSON": ([HEADER, CHUNK, '{"t": 1, "text": "a"', END], 3, "bad JSON"),
    "unknown version": ([{**HEADER, "version": 2}, END], 1, "unknown session version 2"),
    "version missing": ([{"callscope": "session"}, END], 1, "no integer 'version'"),
    "other marker": ([{**HEADER, "callscope": "trace"}, END], 1, "not a session"),
    "bad base64": ([HEADER, {"t": 0, "b64": "!!!"}, END], 2, "bad base64"),
    "no header": ([CHUNK, END], 1, "no session header"),
    "not UTF-8": ([HEADER, b'{"t":0,"text":"\xff"}', END], 2, "not UTF-8"),
    "neither chunk nor end": ([HEADER, CHUNK, {"t": 1}, END], 3, "neither a chunk"),
    "not an object": ([HEADER, "[1, 2]", END], 2, "neither a chunk"),
    "data after the end": ([HEADER, CHUNK, END, CHUNK, END], 4, "data after the end line"),
    "time going back": ([HEADER, {"t": 2, "text": "a"}, {"t": 1, "text": "b"}, END], 3,
                        "earlier than the previous"),
    "negative time": ([HEADER, {"t": -1, "text": "a"}, END], 2, "seconds >= 0"),
    "chunk without time": ([HEADER, {"text": "a"}, END], 2, "without its time"),
    "text and b64": ([HEADER, {"t": 0, "text": "a", "b64": "YQ=="}, END], 2, "both"),
    "bad header member": ([{**HEADER, "status": "200"}, END], 1, "'status' should be"),
    "unknown end kind": ([HEADER, CHUNK, {"end": "finished"}], 3, "unknown end kind"),
    "body on a clean end": ([HEADER, {"end": "clean", "text": "x"}], 2, "only an http_error"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_session_names_the_line(tmp_path, name):
    lines, line, message = BROKEN[name]
    path = write_lines(tmp_path / "s.jsonl", *lines)
    with pytest.raises(InputError) as err:
        load_all(path)
    assert err.value.line == line
    assert message in err.value.message
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert "\n" not in str(err.value)


def test_empty_file(tmp_path):
    (tmp_path / "e.jsonl").write_bytes(b"")
    for opener in (open_input, open_session):
        with pytest.raises(InputError, match="empty file"):
            opener(str(tmp_path / "e.jsonl"))


def test_line_over_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(session_module, "MAX_LINE_BYTES", 100)
    path = write_lines(tmp_path / "s.jsonl", HEADER, {"t": 0, "text": "x" * 8_000_000}, END)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="longer than the limit of 100 bytes") as err:
            load_all(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.value.line == 2
    assert peak < 1_000_000  # refused without reading the line into memory
    with pytest.raises(CallscopeError, match="at most 100 bytes"):
        save_session(str(tmp_path / "w.jsonl"), SessionHeader(), [Chunk(0, b"x" * 200)],
                     StreamEnd("clean"))


def test_missing_end_line_keeps_every_chunk(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", HEADER, CHUNK, {"t": 1, "b64": "/w=="})
    s, chunks = load_all(path)
    assert s.end.kind == "missing" and "no end line" in (s.end.detail or "")
    assert [c.data for c in chunks] == [b"data: x\n\n", b"\xff"]


def test_header_only_file_has_a_missing_end(tmp_path):
    s, chunks = load_all(write_lines(tmp_path / "s.jsonl", HEADER))
    assert s.end.kind == "missing" and chunks == []


def test_torn_last_line_is_reported_not_raised(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps(HEADER) + b"\n" + orjson.dumps(CHUNK) + b'\n{"t":1,"te')
    s, chunks = load_all(str(path))
    assert s.end.kind == "missing" and "line 3 was cut short" in (s.end.detail or "")
    assert chunks == [Chunk(0, b"data: x\n\n")]


@pytest.mark.parametrize("command", ["replay", "check"])
def test_the_cli_says_when_a_line_was_cut_short(tmp_path, capsys, command):
    """Found by review: replay and check read a session whose last line was cut short without
    a word. They still read it (a cut recording is a cut stream), and say so on stderr."""
    from callscope.tui.cli import main as cli_main

    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps(HEADER) + b"\n" + orjson.dumps(CHUNK) + b'\n{"t":1,"te')
    assert cli_main([command, str(path)]) == 0
    err = capsys.readouterr().err
    assert err == f"callscope: note: {path}: line 3 was cut short while being written (the " \
                  "recorder stopped); it is not read\n"


def test_blank_lines_crlf_and_a_bom_are_tolerated(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(HEADER) + b"\r\n\r\n"
                     + orjson.dumps(CHUNK) + b"\r\n" + b'{"end":"timeout","t":3}\r\n\r\n')
    s, chunks = load_all(str(path))
    assert chunks == [Chunk(0, b"data: x\n\n")]
    assert s.end == StreamEnd("timeout", at=3.0)


@pytest.mark.parametrize("trailing", [b"", b"\n" * 150_000, b" \r\n" * 70_000])
def test_end_line_read_backwards_across_blocks(tmp_path, trailing):
    detail = "why " * 60_000  # 240 kB: the tail is read in 64 KiB blocks
    path = tmp_path / "s.jsonl"
    end = orjson.dumps({"end": "error", "detail": detail})
    path.write_bytes(orjson.dumps(HEADER) + b"\n" + orjson.dumps(CHUNK) + b"\n" + end
                     + b"\n" + trailing)
    assert open_session(str(path)).end == StreamEnd("error", detail=detail)
    path.write_bytes(path.read_bytes().rstrip() + b'\n{"t":1,"text":"' + b"x" * 200_000)
    torn = open_session(str(path))
    assert torn.end.kind == "missing" and "line 4 was cut short" in (torn.end.detail or "")


def test_over_long_last_line_is_reported_by_the_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(session_module, "MAX_LINE_BYTES", 1000)
    path = write_lines(tmp_path / "s.jsonl", HEADER, CHUNK, {"t": 0, "text": "x" * 5000})
    s = open_session(path)
    assert s.end.kind == "missing"
    with pytest.raises(InputError, match="longer than the limit") as err:
        list(s.chunks())
    assert err.value.line == 3


def test_bad_end_line_is_reported_at_open_with_its_line(tmp_path):
    lines = [HEADER] + [CHUNK] * 5 + ["", {"end": "http_error", "status": "500"}]
    path = write_lines(tmp_path / "s.jsonl", *lines)
    with pytest.raises(InputError, match="'status' should be an integer") as err:
        open_session(path)
    assert err.value.line == 8


# -- atomic saves ------------------------------------------------------------------------------

def listing(directory) -> list[str]:
    return sorted(os.listdir(directory))


@pytest.fixture
def original(tmp_path):
    path = tmp_path / "s.jsonl"
    save_session(str(path), SessionHeader(source="live"), [Chunk(0, b"old")], StreamEnd("clean"))
    return path


def test_failure_mid_write_leaves_the_original(original):
    before = original.read_bytes()

    def chunks():
        yield Chunk(0, b"new 1")
        yield Chunk(1, b"new 2")
        raise ConnectionResetError("recorder died")

    with pytest.raises(ConnectionResetError):
        save_session(str(original), SessionHeader(), chunks(), StreamEnd("clean"))
    assert original.read_bytes() == before
    assert listing(original.parent) == ["s.jsonl"]


def test_failure_while_committing_leaves_the_original(original, monkeypatch):
    before = original.read_bytes()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session_module.os, "fsync", broken)
    with pytest.raises(OSError):
        save_session(str(original), SessionHeader(), [Chunk(0, b"new")], StreamEnd("clean"))
    monkeypatch.undo()
    assert original.read_bytes() == before
    assert listing(original.parent) == ["s.jsonl"]


def test_a_failed_rename_keeps_the_whole_session_and_says_where(original, monkeypatch):
    """Everything was written and synced; only the rename over the target failed: the partial
    file is kept (a recorder keeps every byte) and the one-line error names it."""
    before = original.read_bytes()

    def broken(*args, **kwargs):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(session_module.os, "replace", broken)
    with pytest.raises(CallscopeError, match="Permission denied.*it is kept in") as caught:
        save_session(str(original), SessionHeader(), [Chunk(0, b"new")], StreamEnd("clean"))
    monkeypatch.undo()
    assert original.read_bytes() == before
    kept = str(caught.value).rsplit("it is kept in ", 1)[1]
    assert [c.data for c in open_session(kept).chunks()] == [b"new"]


@pytest.mark.parametrize("where", ["missing/dir/s.jsonl", "."])
def test_a_target_that_cannot_be_written_is_said_before_recording(tmp_path, where):
    with pytest.raises(CallscopeError, match="directory|cannot write"):
        SessionWriter(str(tmp_path / where), SessionHeader())
    assert listing(tmp_path) == []


def test_invalid_chunk_time_aborts_the_save(original):
    before = original.read_bytes()
    with pytest.raises(CallscopeError, match="chunk 2"):
        save_session(str(original), SessionHeader(), [Chunk(2, b"a"), Chunk(1, b"b")],
                     StreamEnd("clean"))
    assert original.read_bytes() == before
    assert listing(original.parent) == ["s.jsonl"]


def test_a_killed_recorder_leaves_a_loadable_partial_file(tmp_path):
    target = str(tmp_path / "live.jsonl")
    writer = SessionWriter(target, SessionHeader(source="live"))
    for i in range(3):
        writer.write(Chunk(i / 10, b"data: %d\n\n" % i))
    # The process dies here: no finish(), no discard(). Only the partial file exists.
    assert listing(tmp_path) == [os.path.basename(writer.partial_path)]
    s, chunks = load_all(writer.partial_path)
    assert s.end.kind == "missing"
    assert [c.data for c in chunks] == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n"]
    writer.discard()
    assert listing(tmp_path) == []


def test_writer_commits_only_at_finish(tmp_path):
    target = str(tmp_path / "live.jsonl")
    with SessionWriter(target, SessionHeader(source="live")) as writer:
        writer.write(Chunk(0, b"a"))
        assert not os.path.exists(target)
        writer.finish(StreamEnd("reset", detail="peer closed connection", at=0.5))
    assert listing(tmp_path) == ["live.jsonl"]
    assert open_session(target).end == StreamEnd("reset", detail="peer closed connection",
                                                 at=0.5)


def test_resave_keeps_the_file_mode(original):
    os.chmod(original, 0o600)
    save_session(str(original), SessionHeader(), [], StreamEnd("clean"))
    assert stat.S_IMODE(original.stat().st_mode) == 0o600


def test_a_target_whose_mode_cannot_be_read_still_gets_the_session(original, monkeypatch):
    """Found by review: any error but FileNotFoundError from reading the old file's mode (a
    symlink into a directory it may not read) deleted the whole recording."""
    real_stat = session_module.os.stat

    def denied(path, *args, **kwargs):
        if str(path) == str(original):
            raise PermissionError(13, "Permission denied")
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(session_module.os, "stat", denied)
    save_session(str(original), SessionHeader(), [Chunk(0, b"new")], StreamEnd("clean"))
    monkeypatch.undo()
    assert [c.data for c in open_session(str(original)).chunks()] == [b"new"]


# -- redaction ---------------------------------------------------------------------------------

def test_redact_headers_by_name_in_any_case_and_shape():
    secret = {"Authorization": "Bearer sk-1", "X-API-KEY": "k2", "x-goog-api-key": "k3",
              "Api-Key": "k4", "Proxy-Authorization": "Basic k5", "Cookie": "s=k6"}
    kept = {"Content-Type": "application/json", "anthropic-version": "2023-06-01"}
    expected = {**{k: REDACTED for k in secret}, **kept}
    assert redact_headers({**secret, **kept}) == expected
    assert redact_headers(list({**secret, **kept}.items())) == expected
    assert redact_headers([{"name": k, "value": v} for k, v in {**secret, **kept}.items()]) \
        == expected
    assert redact_headers([("Accept", "a"), ("Accept", "b")]) == {"Accept": "a, b"}


@pytest.mark.parametrize("url, expected", [
    ("https://g.example/v1/m:stream?alt=sse&key=AIza123",
     "https://g.example/v1/m:stream?alt=sse&key=[REDACTED]"),
    ("https://x/?api_key=a&API-KEY=b&apikey=c&access_token=d&keep=1#key=frag",
     "https://x/?api_key=[REDACTED]&API-KEY=[REDACTED]&apikey=[REDACTED]"
     "&access_token=[REDACTED]&keep=1#key=[REDACTED]"),  # (a fragment carries tokens: OAuth)
    # A name that contains a secret word is a secret (core/redact.py SECRET_NAME_WORDS): over-
    # redacting ``monkey`` costs a value, missing the next gateway's ``xkey`` leaks a credential.
    ("https://x/?api%5Fkey=a&monkey=1&keyboard=2&key&page=3&tokens=4",
     "https://x/?api%5Fkey=[REDACTED]&monkey=[REDACTED]&keyboard=[REDACTED]&key=[REDACTED]"
     "&page=3&tokens=4"),
    ("https://user:pw@host.example/path?q=1", "https://user:[REDACTED]@host.example/path?q=1"),
    ("https://host.example/p%20a?b=c+d", "https://host.example/p%20a?b=c+d"),
])
def test_redact_url(url, expected):
    assert redact_url(url) == expected


def test_redact_body_takes_credentials_and_leaves_schemas():
    """Credential members at any depth and in any spelling go; a member of that name whose
    value is an object (a tool schema's property named api_key: found by review, replays of
    the proxy's sessions failed on the redacted schema) is walked, not replaced. A number is a
    credential too (a password or PIN of digits is sent unquoted)."""
    schema = {"type": "object", "properties": {"api_key": {"type": "string"},
                                               "password": {"type": "string"}}}
    body = {"model": "m", "apiKey": "k1", "auth": {"client-secret": "k2", "API_KEY": ["k3", "k4"]},
            "tools": [{"name": "rotate", "parameters": schema}], "password": 5,
            "messages": [{"role": "user", "content": "key=not-a-credential"}], "key": "kept"}
    assert redact_body(body) == {
        "model": "m", "apiKey": REDACTED, "auth": {"client-secret": REDACTED, "API_KEY": REDACTED},
        "tools": [{"name": "rotate", "parameters": schema}], "password": REDACTED,
        "messages": [{"role": "user", "content": "key=not-a-credential"}], "key": "kept"}
    assert body["apiKey"] == "k1"  # (a copy: the input is left as it was)


@pytest.mark.parametrize("text, expected", [
    ("api_key=sk-1&model=x", "api_key=[REDACTED]&model=x"),
    ("Authorization: Bearer abc", "Authorization: [REDACTED]"),
    ('{"authorization": "Token abc"}', '{"authorization": "[REDACTED]"}'),
    ('{"client_secret": "a,b}c", "n": 2}', '{"client_secret": "[REDACTED]", "n": 2}'),
    ('{"x": "a\\"b", "accessToken": "t\\"1"}', '{"x": "a\\"b", "accessToken": "[REDACTED]"}'),
    ('{"api_key": ["sk-1", "sk-2"]}', '{"api_key": [REDACTED]}'),
    ("password=hunter2 next", "password=[REDACTED] next"),
    ("max_tokens=5&monkey=1", "max_tokens=5&monkey=1"),
])
def test_redact_text(text, expected):
    assert redact_text(text) == expected


def test_no_key_from_the_request_reaches_the_saved_file(tmp_path):
    keys = ["sk-proj-AAAA1111", "sk-ant-BBBB2222", "AIzaCCCC3333", "DDDD4444", "EEEE5555",
            "FFFF6666"]
    header = SessionHeader(
        source="live",
        request={"method": "POST",
                 "url": f"https://g.example/v1beta/models/m:streamGenerateContent?key={keys[2]}"
                        f"&alt=sse&api_key={keys[3]}",
                 "headers": [("authorization", f"Bearer {keys[0]}"), ("X-Api-Key", keys[1]),
                             ("X-Goog-Api-Key", keys[2]), ("api-key", keys[4])],
                 "body": {"model": "m"}},
        response_headers={"Set-Cookie": f"session={keys[5]}"},
    )
    path = tmp_path / "s.jsonl"
    save_session(str(path), header, [Chunk(0, b"data: {}\n\n")], StreamEnd("clean"))
    saved = path.read_bytes()
    assert [k for k in keys if k.encode() in saved] == []
    assert open_session(str(path)).header.request["headers"]["X-Api-Key"] == REDACTED  # type: ignore[index]


def test_the_documented_example_loads(tmp_path):
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "sessions.md").read_text()
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.jsonl"
    path.write_text(example)
    s, chunks = load_all(str(path))
    assert s.header.protocol == "anthropic" and s.header.tools
    assert s.end.kind == "reset" and s.end.at == 0.52
    assert [c.t for c in chunks] == [0.2874, 0.4121, 0.4133]
    assert "Zürich" in b"".join(c.data for c in chunks).decode()
    assert chunks[1].data.endswith(b"Z\xc3")  # the character split across two reads
    resaved = tmp_path / "resaved.jsonl"
    save_session(str(resaved), s.header, chunks, s.end)
    assert resaved.read_text() == example


# -- nesting depth ------------------------------------------------------------------------------

def nested(depth: int) -> str:
    """A JSON value ``depth`` levels deep (arrays, an object at the bottom)."""
    return "[" * (depth - 1) + "{}" + "]" * (depth - 1)


DEEP_LINES = {  # each line nested one level past the limit (its own object is level 1)
    "header": ('{"callscope":"session","version":1,"x":%s}', 1),
    "header tools": ('{"callscope":"session","version":1,"tools":[{"name":"f","parameters":%s}]}',
                     3),
    "chunk": ('{"t":0,"text":"a","x":%s}', 1),
    "end": ('{"end":"clean","x":%s}', 1),
}


@pytest.mark.parametrize("where", sorted(DEEP_LINES))
def test_a_line_nested_past_the_limit_is_refused_with_its_line(tmp_path, where):
    template, above = DEEP_LINES[where]
    limit = session_module.MAX_LINE_DEPTH
    header, chunk, end = '{"callscope":"session","version":1}', '{"t":0,"text":"data: x\\n\\n"}', \
        '{"end":"clean"}'
    lines = {"header": [None, chunk, end], "header tools": [None, chunk, end],
             "chunk": [header, None, end], "end": [header, chunk, None]}[where]
    number = lines.index(None) + 1
    ok, deep = (template % nested(limit - above), template % nested(limit - above + 1))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(ok if line is None else line for line in lines) + "\n")
    session = open_session(str(path))  # exactly at the limit: loads, and saves again
    chunks = list(session.chunks())
    save_session(str(tmp_path / "again.jsonl"), session.header, chunks, session.end)
    assert [c.data for c in open_session(str(tmp_path / "again.jsonl")).chunks()] == [
        c.data for c in chunks]

    path.write_text("\n".join(deep if line is None else line for line in lines) + "\n")
    with pytest.raises(InputError, match=f"nested deeper than {limit} levels") as err:
        list(open_session(str(path)).chunks())
    assert err.value.line == number and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_chunk_lines_full_of_brackets_are_not_deep(tmp_path):
    # SSE text holds JSON: many brackets on a line, none of them nesting the line itself.
    text = "data: " + "[{}]" * 1000 + "\n\n"
    path = tmp_path / "s.jsonl"
    save_session(str(path), SessionHeader(), [Chunk(0.0, text.encode())], StreamEnd("clean"))
    assert [c.data for c in open_session(str(path)).chunks()] == [text.encode()]


def test_a_deep_session_line_is_a_one_line_error_from_the_cli(tmp_path, capsys):
    from callscope.tui.cli import main

    path = tmp_path / "deep.jsonl"
    deep = nested(300)
    path.write_text(f'{{"callscope":"session","version":1,"x":{deep}}}\n{{"end":"clean"}}\n')
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}:1: " in err
    assert "nested deeper than" in err and "Traceback" not in err


def test_a_header_too_deep_to_save_is_refused_naming_the_file(tmp_path):
    # Built in memory (not read from a file, which refuses it): the save says which file.
    header = SessionHeader(extra={"x": orjson.loads(nested(300))})
    target = tmp_path / "s.jsonl"
    with pytest.raises(CallscopeError, match="nested deeper than") as err:
        save_session(str(target), header, [], StreamEnd("clean"))
    assert str(target) in str(err.value) and not target.exists()
    assert os.listdir(tmp_path) == []  # no partial file left behind


CHUNK_LINES = [
    '{"t": 0.5, "text": "data: x\\n\\n"}', '{"t": 1, "text": "a"}', '{"t": 0.0, "text": ""}',
    '{"t": -0.5, "text": "a"}', '{"t": true, "text": "a"}', '{"t": 0.5, "text": 3}',
    '{"t": 0.5, "b64": "YQ=="}', '{"t": 0.5, "text": "a", "b64": "YQ=="}', '{"text": "a", "x": 1}',
    '{"t": 0.5, "text": "é\\u2028"}', '{"t": 0.5, "x": "a"}', '{"t": null, "text": "a"}', '[0.5, "a"]',
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(CHUNK_LINES), min_size=1, max_size=6))
def test_the_common_chunk_line_reads_as_the_full_check_reads_it(lines):
    """The inline read of ``{"t", "text"}`` lines gives what ``_record`` gives, line for line,
    errors included (times are kept non-decreasing: order is checked after either)."""
    import callscope.core.session_reader as reader

    def read(fast: bool) -> object:
        path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        path.write_text('{"callscope": "session", "version": 1}\n' + "\n".join(lines) + "\n")
        saved = reader._common_chunk
        if not fast:
            reader._common_chunk = lambda obj: None
        try:
            return [(c.t, c.data) for c in open_input(str(path)).chunks()]
        except InputError as exc:
            return str(exc).replace(str(path), "S")
        finally:
            reader._common_chunk = saved

    assert read(True) == read(False)


@pytest.mark.parametrize("member, value", [("url", 5), ("url", ["https://x/v1?key=K"]),
                                           ("headers", "Authorization: Bearer K"),
                                           ("headers", ["x"]), ("method", 1), ("body_text", 5)])
def test_a_request_member_of_the_wrong_type_is_refused_with_its_line(tmp_path, member, value):
    """The request's URL, headers, method and body text are read by redaction and every view as
    a string or an object: another type is refused, as a header member of the wrong type is
    (before, a URL given as a list was kept and written unredacted)."""
    import orjson

    root = pathlib.Path(__file__).resolve().parent.parent
    lines = (root / "sessions" / "demo.jsonl").read_bytes().splitlines()
    header = orjson.loads(lines[0])
    header["request"][member] = value
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join([orjson.dumps(header), *lines[1:]]) + b"\n")
    with pytest.raises(InputError, match=rf"header member 'request\.{member}' should be") as err:
        open_session(str(path))
    assert err.value.line == 1


def test_an_end_before_the_last_chunk_is_refused_and_never_written(tmp_path):
    """Chunk times going backwards were refused with their line, an end line's were not."""
    path = tmp_path / "s.jsonl"
    path.write_text('{"callscope":"session","version":1}\n{"t":2.0,"text":"data: x\\n\\n"}\n'
                    '{"end":"clean","t":1.0}\n')
    with pytest.raises(InputError, match="end time 1.0 is earlier than the last chunk's 2.0") as err:
        list(open_session(str(path)).chunks())
    assert err.value.line == 3
    written = tmp_path / "w.jsonl"
    save_session(str(written), SessionHeader(), [Chunk(2.0, b"data: x\n\n")], StreamEnd("clean", at=1.0))
    assert open_session(str(written)).end.at == 2.0  # (put at the last read)
