"""The callscope pytest plugin (entry point ``pytest11``): your harness under test in ``pytest``.

* ``callscope_session``: a test that takes it runs once per session file (``.jsonl``, ``.sse``,
  ``.har``) found under the folders (or files) named by ``@pytest.mark.callscope_sessions(...)``
  (relative to the test file), else ``--callscope-sessions DIR`` (relative to where pytest was
  started), else the ``callscope_sessions`` ini option (relative to the ini file).
* ``callscope_check``: ``callscope_check(harness, session, **options)`` sweeps the harness over
  the session (:func:`callscope.testing.check_harness`) and fails the test with the report, each
  finding naming its first failing variant and the session that reproduces it (written under the
  test's ``tmp_path``); it returns the report when there is no finding.

    @pytest.mark.callscope_sessions("recordings")
    def test_my_harness(callscope_session, callscope_check):
        callscope_check(my_harness, callscope_session)

Loading the plugin imports nothing of callscope's: it registers options, a marker and two
fixtures, and a test run that does not use them pays for nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

MARKER = "callscope_sessions"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("callscope", "callscope: your harness under test")
    group.addoption("--callscope-sessions", metavar="DIR", action="append", default=[],
                    help="session files or folders the callscope_session fixture runs over")
    parser.addini(MARKER, "session files or folders the callscope_session fixture runs over",
                  type="paths", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(*paths): the session files or folders "
                            "(relative to the test file) the callscope_session fixture runs over")


def _sources(metafunc: pytest.Metafunc) -> list[Path]:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is not None:
        here = Path(str(metafunc.definition.path)).parent
        return [here / str(p) for p in marker.args]
    config = metafunc.config
    given = config.getoption("--callscope-sessions")
    if given:
        return [Path(str(config.invocation_params.dir)) / p for p in given]
    return [Path(str(p)) for p in config.getini(MARKER)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "callscope_session" not in metafunc.fixturenames:
        return
    sources = _sources(metafunc)
    if not sources:
        pytest.fail(f"{metafunc.definition.nodeid}: callscope_session needs sessions: "
                    f"@pytest.mark.{MARKER}(FOLDER), --callscope-sessions DIR or the {MARKER} "
                    "ini option", pytrace=False)
    from callscope.core.sweep_files import session_files

    files: list[Path] = []
    for source in sources:
        if not source.exists():
            pytest.fail(f"{metafunc.definition.nodeid}: no such session file or folder: "
                        f"{source}", pytrace=False)
        files += session_files(source)
    ids = [_id(f, sources) for f in files]
    metafunc.parametrize("callscope_session", files, ids=ids)


def _id(path: Path, sources: list[Path]) -> str:
    for source in sources:
        if source.is_dir() and path.is_relative_to(source):
            return path.relative_to(source).as_posix()
    return path.name


@pytest.fixture
def callscope_check(tmp_path: Path) -> Callable[..., Any]:
    """``check(harness, session, **options)``: fails the test on any finding."""
    def check(harness: Callable[..., Any], session: Any, **options: Any) -> Any:
        from callscope.testing import check_harness

        options.setdefault("out_dir", tmp_path / "callscope-findings")
        report = check_harness(harness, session, **options)
        if not report.ok:
            pytest.fail("\n".join(report.lines()), pytrace=False)
        return report

    return check
