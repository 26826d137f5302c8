"""Past a limit the engine reads no further, and no step says otherwise: the event that crossed
the limit (a call opened past ``--max-calls``) is not shown as taken, only its
``limit_exceeded``, and no event after the halt makes a step (the reader's ``missing_terminal``
at the end was printed as an anomaly record the turn did not count). Before, ``replay --json
--max-calls 1`` printed the second call as ``opened`` with no decision ever made for it."""

from __future__ import annotations

import io
import pathlib

import orjson
from callscope.core.engine import CallStep, Engine
from callscope.core.events import Anomaly, CallOpened
from callscope.core.gate.codes import Code
from callscope.core.limits import Limits
from callscope.core.replay import replay
from callscope.core.session import open_input
from callscope.core.tools import ToolSet
from callscope.tui import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARALLEL = ROOT / "sessions/openai-chat/parallel_calls.jsonl"


def _steps(limits: Limits) -> tuple[Engine, list[object]]:
    session = open_input(str(PARALLEL))
    engine = Engine(session.header.protocol, ToolSet(session.header.tools or []), limits)
    return engine, list(replay([(c.t, c.data) for c in session.chunks()], engine=engine))


def test_no_step_shows_a_call_the_halted_engine_never_opened():
    engine, steps = _steps(Limits(max_calls=1))
    opened = [s.event.key for s in steps if isinstance(s, CallStep)
              and isinstance(s.event, CallOpened)]
    assert opened == list(engine.state.calls) == ["choice0/call0"]
    anomalies = [s.event for s in steps if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    assert [a.code for a in anomalies] == [Code.LIMIT_EXCEEDED]
    assert len(anomalies) == engine.state.anomaly_total
    assert set(engine.pipeline.decisions) == {"choice0/call0"}
    assert engine.pipeline.decisions["choice0/call0"].action == "refuse"


def test_replay_json_records_agree_with_the_turn_past_a_limit():
    out = io.StringIO()
    args = cli.build_parser(False, only="replay").parse_args(
        ["replay", "--json", "--max-calls", "1", str(PARALLEL)])
    cli.HANDLERS["replay"](args, out)
    records = [orjson.loads(line) for line in out.getvalue().splitlines()]
    turn = records[-1]
    opened = {r["call"] for r in records if r["kind"] == "call" and r["action"] == "opened"}
    decided = {r["call"] for r in records if r["kind"] == "decision" and r["action"] != "wait"}
    assert opened == decided == {c["key"] for c in turn["calls"]} == {"choice0/call0"}
    assert sum(r["kind"] == "anomaly" for r in records) == turn["anomalies"] == 1
